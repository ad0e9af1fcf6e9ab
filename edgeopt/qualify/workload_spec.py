"""A kind's workload block of a qualify spec, derived from the kind's workload settings model, the way
``edgeopt bench``'s flags are (edgeopt/cli/kind_flags.py): the spec and the CLI read one declaration.

Every field of the model that carries a :class:`~edgeopt.registry.Flag` (a flag of ``edgeopt bench``) is a key of
the block, with the field's description, default and bounds (``ge``, ``min_length``, ...); a list-valued axis
(``tuple[int, ...]``) is a YAML list whose items are each at least the Flag's ``min`` ("values must be >= 1 (got
[0])"). A field without a Flag takes the command's shared setting there (``threads``, ``batch``, ``seed``), and in a
spec the key qualify declares itself (``base``) or ``measure``'s. So a field added to the model with a Flag is a flag
of ``bench`` and a key of the spec block with no edit here.

``chosen`` names the fields whose default qualify decides (``repetitions``: what the gated percentiles need): the
key is then optional (``null`` or absent: qualify's choice) and its text says how qualify chooses.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, create_model

from ..registry import Flag
from .gate_spec import StrictModel


def flagged(model: type[BaseModel]) -> dict[str, Flag]:
    """The fields of ``model`` that carry a Flag (the spec block's derived keys), in declaration order."""
    out = {}
    for name, info in model.model_fields.items():
        flag = next((m for m in info.metadata if isinstance(m, Flag)), None)
        if flag is not None:
            out[name] = flag
    return out


def _at_least(low: int) -> AfterValidator:
    def check(values: list[int]) -> list[int]:
        if min(values) < low:
            raise ValueError(f"values must be >= {low} (got {values})")
        return values

    return AfterValidator(check)


def _spec_field(model: type[BaseModel], name: str, flag: Flag, chosen: str | None) -> tuple[Any, Any]:
    """``(annotation, FieldInfo)`` of one derived key: the field's type (a tuple axis as a list, its items checked
    against ``flag.min``), bounds, description and default; optional with qualify's default when ``chosen``."""
    info = model.model_fields[name]
    kind: Any = info.annotation
    default = info.get_default(call_default_factory=True)
    constraints: list[Any] = [m for m in info.metadata if not isinstance(m, Flag)]
    if typing.get_origin(kind) is tuple:  # a list-valued axis: a YAML list
        kind, default = list[typing.get_args(kind)[0]], list(default)  # type: ignore[misc]
        if flag.min is not None:
            constraints.append(_at_least(flag.min))
    if constraints:
        args = (kind, *constraints)
        kind = typing.cast(Any, Annotated)[args]
    if chosen is not None:
        return kind | None, Field(default=None, description=f"{(info.description or name).rstrip('.')} ({chosen}).")
    return kind, Field(default=default, description=info.description)


def workload_block(model: type[BaseModel], base: type[StrictModel], *, name: str,
                   chosen: Mapping[str, str] | None = None) -> type[StrictModel]:
    """The spec block of a kind: ``base`` (the keys qualify declares itself, with their checks) plus one key per
    flagged field of ``model`` that ``base`` does not declare (``chosen``: field -> how qualify picks its default).

    Raises:
        ValueError: ``chosen`` names a field that is not a derived key (a typo in qualify, found at import).
    """
    chosen = dict(chosen or {})
    keys = {k: f for k, f in flagged(model).items() if k not in base.model_fields}
    unknown = set(chosen) - set(keys)
    if unknown:
        raise ValueError(f"{name}: {', '.join(sorted(unknown))} is not a flagged field of {model.__name__}")
    fields: dict[str, Any] = {k: _spec_field(model, k, flag, chosen.get(k)) for k, flag in keys.items()}
    block: type[StrictModel] = create_model(name, __base__=base, __doc__=base.__doc__,
                                            __module__=base.__module__, **fields)
    return block


def workload_values(block: BaseModel, model: type[BaseModel]) -> dict[str, Any]:
    """The derived keys of ``block`` (a :func:`workload_block` instance) that hold a value, by field name of
    ``model`` (a ``chosen`` key left to qualify is absent)."""
    return {k: getattr(block, k) for k in flagged(model) if getattr(block, k, None) is not None}
