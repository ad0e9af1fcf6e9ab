"""Options and helpers shared by several commands."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .json_out import emit_json as emit_json  # re-exported: the one JSON printer

F = TypeVar("F", bound=Callable[..., Any])

_SHAPE = re.compile(r"^([^=]+)=(\d+(?:x\d+)*)$")


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print only JSON on stdout.")(f)


def targets_dir_option(f: F) -> F:
    return click.option(
        "--targets-dir", "targets_dirs", multiple=True, type=click.Path(path_type=Path),
        help="Extra directory of target YAML files (repeatable; also EDGEOPT_TARGETS_DIR).",
    )(f)


def shape_options(f: F) -> F:
    f = click.option("--batch", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Batch size for a dynamic leading dimension.")(f)
    return click.option("--shape", "shapes", multiple=True, metavar="NAME=DxDxD",
                        help="Concrete shape of an input with dynamic dims, e.g. input=1x3x224x224.")(f)


def parse_runtime_options(values: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; values read as YAML scalars (``4`` -> 4, ``true`` -> True, ``LATENCY`` -> "LATENCY").

    The agent's runtime checks the keys (an unknown one is an input error naming the known ones).
    """
    import yaml

    from ..yamlio import safe_load

    out: dict[str, Any] = {}
    for value in values:
        key, sep, raw = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r}: write KEY=VALUE, e.g. --runtime-option performance_hint=THROUGHPUT",
                                     param_hint="--runtime-option")
        try:
            parsed = safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            parsed = raw
        out[key.strip()] = parsed if isinstance(parsed, (str, int, float, bool, list)) or parsed is None else raw
    return out


def parse_shapes(values: tuple[str, ...]) -> dict[str, list[int]]:
    """``("x=1x3x224x224",)`` -> ``{"x": [1, 3, 224, 224]}``; a malformed value is a usage error."""
    out: dict[str, list[int]] = {}
    for value in values:
        m = _SHAPE.match(value.strip())
        if not m:
            raise click.BadParameter(
                f"{value!r}: write NAME=DIMS with positive integers joined by 'x', e.g. --shape input=1x3x224x224",
                param_hint="--shape",
            )
        dims = [int(d) for d in m.group(2).split("x")]
        if any(d <= 0 for d in dims):
            raise click.BadParameter(f"{value!r}: every dim must be >= 1", param_hint="--shape")
        if m.group(1) in out:
            raise click.BadParameter(
                f"{value!r}: input {m.group(1)!r} is given twice ({'x'.join(map(str, out[m.group(1)]))} first); give "
                "one --shape per input (several inputs: repeat --shape with different names)", param_hint="--shape")
        out[m.group(1)] = dims
    return out

