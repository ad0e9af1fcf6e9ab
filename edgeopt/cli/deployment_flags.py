"""``--override-deployment`` and which deployed settings a command line gave explicitly (docs/bench.md,
"Deployments"): a flag that contradicts a deployment is an input error unless overridden, so that what runs is what
was measured."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click
from click.core import ParameterSource

F = TypeVar("F", bound=Callable[..., Any])

OVERRIDE_DEPLOYMENT = click.option(
    "--override-deployment", is_flag=True,
    help="With a deployment: let --runtime, --runtime-option, --threads, --streams, --batch and --shape given here "
         "win over its settings (it then measures something else than what shipped); without it they must agree.")

# Deployed setting -> the click parameter that sets it, by default its own name.
_PARAMS = {"runtime": "runtime", "runtime_options": "runtime_options", "threads": "threads", "streams": "streams",
           "batch": "batch", "shapes": "shapes"}


def given_settings(runtime_flags: Mapping[str, Any], renamed: Mapping[str, str] | None = None) -> set[str]:
    """The deployed settings the current command line set explicitly (a runtime's own flag, e.g. ``--provider``,
    sets both its runtime and its options)."""
    ctx = click.get_current_context()
    params = {**_PARAMS, **(renamed or {})}
    given = set()
    for key, name in params.items():
        try:
            source = ctx.get_parameter_source(name)
        except KeyError:  # pragma: no cover - a command without that flag
            source = None
        if source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            given.add(key)
    if runtime_flags:
        given |= {"runtime", "runtime_options"}
    return given
