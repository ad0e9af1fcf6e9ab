"""Each registered runtime's own flags on ``bench`` and ``profile`` (``--provider``, ``--ov-device``), read from its
descriptor's ``cli_flags``, so a plug-in runtime's flags appear with no edit here; and the runtime choice they imply.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ..errors import InputError
from ..registry import BUILTIN_RUNTIMES, LazyRegistry, RegistryError, RuntimeDescriptor, runtime_registry
from ..registry.runtime_sweep import CliFlag
from .common import parse_runtime_options

F = TypeVar("F", bound=Callable[..., Any])
_DEST = "runtime_flag_{}"  # click's parameter name of the i-th flag


@dataclass(frozen=True)
class _Flag:
    runtime: str
    spec: CliFlag


def _registry() -> LazyRegistry[RuntimeDescriptor]:
    """The runtimes, for building the commands' help: a registry that does not build (a name registered twice)
    falls back to the built-ins; the command reports the clash when it looks a runtime up."""
    try:
        return runtime_registry()
    except RegistryError:
        return LazyRegistry("runtime", RuntimeDescriptor, BUILTIN_RUNTIMES)


def runtime_names_text() -> str:
    """Every registered runtime's name, for a ``--runtime`` help text."""
    return ", ".join(_registry().names())


def _flags() -> list[_Flag]:
    """Every registered runtime's flags, in registry order; a plug-in that does not load contributes none here (the
    command that uses it reports why)."""
    registry = _registry()
    found: list[_Flag] = []
    for name in registry.names():
        try:
            desc = registry.get(name)
        except Exception:  # a broken plug-in must not break every command: the one that uses it says why
            continue
        found += [_Flag(desc.name, spec) for spec in desc.cli_flags]
    return found


def runtime_flag_options(f: F) -> F:
    """Add every runtime's flags to a command; it receives them as ``runtime_flags``: runtime name -> the runtime
    options its flags set (only the flags given)."""
    flags = _flags()

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given: dict[str, dict[str, Any]] = {}
        for i, flag in enumerate(flags):
            value = kwargs.pop(_DEST.format(i), None)
            if value:  # a repeatable flag not given is ()
                given.setdefault(flag.runtime, {})[flag.spec.option] = list(value) if flag.spec.repeatable else value
        return f(*args, runtime_flags=given, **kwargs)

    for i, flag in reversed(list(enumerate(flags))):  # click lists options in the order they decorate
        spec = flag.spec
        wrapper = click.option(spec.flag, _DEST.format(i), multiple=spec.repeatable, default=None,
                               metavar=spec.metavar,
                               help=f"{spec.help} (implies --runtime {flag.runtime}).")(wrapper)
    return wrapper  # type: ignore[return-value]


def runtime_choice(runtime: str | None, runtime_flags: dict[str, dict[str, Any]],
                   runtime_option: tuple[str, ...] | dict[str, Any]) -> dict[str, Any]:
    """``runtime`` and ``runtime_options`` from the flags: ``--runtime``, else the runtime whose own flags were
    given; its flags win over ``--runtime-option`` pairs (``KEY=VALUE`` strings, or already parsed).

    Raises:
        InputError: flags of two runtimes and no ``--runtime``.
    """
    implied = list(runtime_flags)
    if runtime is None and len(implied) > 1:
        raise InputError(f"flags of several runtimes given ({', '.join(implied)}): keep one runtime's flags, or "
                         "name the runtime with --runtime")
    options = dict(runtime_option) if isinstance(runtime_option, dict) else parse_runtime_options(runtime_option)
    for opts in runtime_flags.values():
        options.update(opts)
    return {"runtime": runtime or (implied[0] if implied else None), "runtime_options": options}
