"""The flags a model kind adds to ``bench`` and ``sweep``, derived from its typed settings models by one decorator,
:func:`kind_flag_options`, the way :mod:`.measure_options` derives the measurement flags from ``MeasureSettings``.

Each registered kind may name a ``workload`` model (bench) and a ``sweep_options`` model (sweep) on its descriptor;
every field of it that carries a :class:`~edgeopt.registry.Flag` (``Annotated[type, Flag(...)]``) is one flag, its
form following from the field's type (edgeopt/registry/flag_spec.py), its help text verbatim from the Flag. The
command receives ``kind_flags``: the given values by flag name, already parsed; :func:`flag_values` gives a kind
its own by field name, and :func:`kind_settings` builds its typed model from them and the command's shared
settings. The command never asks which kind a model is: it hands these to the kind's entry.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import annotated_types
import click
from pydantic import BaseModel, ValidationError

from ..errors import InputError
from ..registry import Flag, KindDescriptor, RegistryError, kind_registry
from ..registry.kind_spec import SettingsHook
from .bench_tradeoff_cmd import _int_list

F = TypeVar("F", bound=Callable[..., Any])
_DEST = "kind_flag_"  # click's destination names of these flags (never one of the command's own parameters)


@dataclass(frozen=True)
class FlaggedField:
    """One field of a settings model that is a flag: its name, Flag, type, default and lower bound (``ge``)."""

    name: str
    flag: Flag
    annotation: Any
    default: Any
    ge: Any = None  # a pydantic field's Ge bound (an int or a float), else None

    @property
    def dest(self) -> str:
        return _DEST + self.flag.name.split("/")[0].lstrip("-").replace("-", "_")

    def option(self) -> Callable[[F], F]:
        """The click option of this field (edgeopt/registry/flag_spec.py says which form)."""
        origin, args = typing.get_origin(self.annotation), typing.get_args(self.annotation)
        if origin is tuple and args and args[0] is int:  # a list-valued axis: N[,N...], given once
            return click.option(self.flag.name, self.dest, multiple=True, metavar="N[,N...]", help=self.flag.help,
                                callback=_int_list(self.flag.name, self.flag.min or 0))
        if _is_str_list(self.annotation):  # a comma-separated list of names
            return click.option(self.flag.name, self.dest, default=None, help=self.flag.help)
        if self.annotation not in (bool, int, float, str):
            raise ValueError(f"flag {self.flag.name} (field {self.name}): a flag's field is a tuple[int, ...], a "
                             f"list[str] | None, a bool, an int, a float or a str, not {self.annotation}")
        kind: Any = click.IntRange(min=int(self.ge)) if self.annotation is int and self.ge is not None else None
        extra = {"type": kind or self.annotation} if self.annotation is not bool else {}
        return click.option(self.flag.name, self.dest, default=self.default, show_default=True, help=self.flag.help,
                            **extra)

    def parse(self, value: Any) -> Any:
        """The value as the field takes it; None when the flag was not given (a list left empty)."""
        if typing.get_origin(self.annotation) is tuple:
            return tuple(value) if value else None
        if _is_str_list(self.annotation):
            return [v.strip() for v in value.split(",") if v.strip()] if value else None
        return value


_UnionType = type(int | None)


def _is_str_list(annotation: Any) -> bool:
    """``list[str]`` or ``list[str] | None``."""
    options = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, _UnionType) else ()
    return annotation == list[str] or list[str] in options


def flagged_fields(model: type) -> list[FlaggedField]:
    """The fields of ``model`` (a pydantic model or a dataclass) that carry a Flag, in declaration order."""
    out = []
    if isinstance(model, type) and issubclass(model, BaseModel):
        for name, info in model.model_fields.items():
            flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
            if flag is not None:
                ge = next((m.ge for m in info.metadata if isinstance(m, annotated_types.Ge)), None)
                out.append(FlaggedField(name, flag, info.annotation, info.get_default(call_default_factory=True), ge))
        return out
    hints = typing.get_type_hints(model, include_extras=True)
    for f in dataclasses.fields(typing.cast(Any, model)):
        hint = hints.get(f.name)
        flag = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Flag)), None)
        if flag is not None:
            default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
            out.append(FlaggedField(f.name, flag, typing.get_args(hint)[0], default))
    return out


def _kind_fields(kind: KindDescriptor, hook: SettingsHook) -> list[FlaggedField]:
    model = kind.load_settings_model(hook)
    return flagged_fields(model) if model is not None else []


def _all_flags(hook: SettingsHook, kinds: list[KindDescriptor] | None) -> list[FlaggedField]:
    """Every registered kind's flagged fields for ``hook``, one per flag name (a kind that does not load adds none:
    its own commands say why when a model of it is given).

    Raises:
        ValueError: two kinds declare one flag name differently.
    """
    if kinds is None:
        kinds = [k for k in map(_loaded, kind_registry().names()) if k is not None]
    seen: dict[str, FlaggedField] = {}
    for kind in kinds:
        try:
            fields = _kind_fields(kind, hook)
        except RegistryError:
            continue
        for field in fields:
            known = seen.setdefault(field.flag.name, field)
            if (known.flag, known.annotation, known.default) != (field.flag, field.annotation, field.default):
                raise ValueError(f"kind {kind.name}: flag {field.flag.name} is declared differently by another kind; "
                                 "give it another name or the same Flag, type and default")
    return list(seen.values())


def _loaded(name: str) -> KindDescriptor | None:
    try:
        return kind_registry().get(name)
    except RegistryError:
        return None


def kind_flag_options(hook: SettingsHook, kinds: list[KindDescriptor] | None = None) -> Callable[[F], F]:
    """Add the flags of every kind's ``hook`` model (``workload``: bench, ``sweep_options``: sweep), in registry
    order; the command receives ``kind_flags``: the given ones by flag name, parsed (``kinds``: instead of the
    registry's, for tests)."""
    fields = _all_flags(hook, kinds)
    options = [field.option() for field in fields]  # a field no flag form fits fails here, naming it

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {}
            for field in fields:
                value = field.parse(kwargs.pop(field.dest))
                if value is not None:
                    given[field.flag.name] = value
            return f(*args, kind_flags=given, **kwargs)

        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated

    return decorate


def flag_values(kind: KindDescriptor, hook: SettingsHook, kind_flags: Mapping[str, Any]) -> dict[str, Any]:
    """The given flags of ``kind``'s ``hook`` model, by field name."""
    return {f.name: kind_flags[f.flag.name] for f in _kind_fields(kind, hook) if f.flag.name in kind_flags}


def kind_settings(kind: KindDescriptor, hook: SettingsHook, kind_flags: Mapping[str, Any],
                  shared: Mapping[str, Any]) -> Any | None:
    """``kind``'s ``hook`` model built from its given flags, and from the command's ``shared`` settings for the
    fields of the same name that are not flags (a value None or empty: the field's default); None when the model
    declares no flag (the kind takes its settings otherwise, e.g. ``--workload KEY=VALUE``).

    Raises:
        InputError: a value the model refuses (exit 2), naming the flag (or the shared setting) and the field.
    """
    model = kind.load_settings_model(hook)
    fields = _kind_fields(kind, hook)
    if model is None or not fields:
        return None
    names = (set(model.model_fields) if issubclass(model, BaseModel)
             else {f.name for f in dataclasses.fields(typing.cast(Any, model))})
    values = {**_shared_values(names, shared), **flag_values(kind, hook, kind_flags)}
    if not issubclass(model, BaseModel):
        return model(**values)
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = str(err["loc"][0]) if err["loc"] else ""
        flag = next((f.flag.name.split("/")[0] for f in fields if f.name == key), key)
        raise InputError(f"{flag} {values.get(key)!r}: {err['msg']} (kind {kind.name}'s {hook} field {key})") from None


def _shared_values(names: set[str], shared: Mapping[str, Any]) -> dict[str, Any]:
    """The shared settings a model has fields for, each given (not None nor an empty list)."""
    return {k: v for k, v in shared.items() if k in names and v is not None and v != [] and v != ()}
