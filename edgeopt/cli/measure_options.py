"""The measurement flags of ``bench``, ``fleet bench``, ``sweep`` and ``profile``, generated from
:class:`~edgeopt.settings.MeasureSettings` by one decorator, :func:`measure_options`.

Each flag's default is its setting's default (energy ones: :class:`~edgeopt.settings.EnergySettings`'); its name,
click type and help text are in :data:`FLAGS`, keyed by :func:`edgeopt.benchmark`'s keyword names
(``MEASURE_KEYWORDS``). A setting without an entry there still becomes a flag (``--field-name``, its type, its
description), so a new measurement setting is one field. A command names the settings it takes, in the order of
its ``--help``, with per-command changes where its meaning differs (``sweep``'s ``--iterations`` is per level),
and receives ``measure``: the given values by keyword name, ``--shape`` and ``--runtime-option`` already parsed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..metrics.energy import SENSOR_CHOICES
from ..settings import ENERGY_KEYWORDS, MAX_FPS, MEASURE_KEYWORDS, EnergySettings, MeasureSettings
from .common import parse_runtime_options, parse_shapes

F = TypeVar("F", bound=Callable[..., Any])

# How each setting reads on the command line: click.option's arguments (``decls`` without the destination, which
# is the keyword name) and ``parse``, applied to the value before the command sees it.
FLAGS: dict[str, dict[str, Any]] = {
    "fps": {"type": click.FloatRange(min=0, min_open=True, max=MAX_FPS),
            "help": "Real-time budget in FPS [default: the target's]."},
    "percentile": {"show_default": True, "help": "Percentile checked against the budget."},
    "iterations": {"decls": ("--iterations", "-n"), "type": click.IntRange(min=1), "show_default": True,
                   "help": "Minimum timed inferences per stream."},
    "min_duration_s": {"decls": ("--min-duration",), "type": click.FloatRange(min=0), "show_default": True,
                       "help": "Minimum seconds of timed inferences."},
    "max_duration_s": {"decls": ("--max-duration",), "type": click.FloatRange(min=0.001), "show_default": True,
                       "help": "Watchdog: stop timing after this many seconds (the run is then invalid)."},
    "warmup": {"type": click.IntRange(min=0), "show_default": True, "help": "Warm-up inferences."},
    "warmup_s": {"type": click.FloatRange(min=0), "show_default": True, "help": "Minimum warm-up seconds."},
    "threads": {"type": click.IntRange(min=0), "show_default": True,
                "help": "Runtime intra-op threads (0: runtime default)."},
    "streams": {"type": click.IntRange(min=1), "show_default": True,
                "help": "Concurrent inference streams (throughput mode)."},
    "batch": {"type": click.IntRange(min=1), "show_default": True,
              "help": "Batch size for a dynamic leading dimension."},
    "seed": {"type": int, "show_default": True, "help": "Seed of the generated inputs."},
    "shapes": {"decls": ("--shape",), "multiple": True, "metavar": "NAME=DxDxD", "parse": parse_shapes,
               "help": "Concrete shape of an input with dynamic dims, e.g. input=1x3x224x224."},
    "inputs": {"type": click.Path(path_type=Path), "help": ".npz of inputs keyed by name."},
    "runtime": {"help": "Agent runtime: onnxruntime, openvino, tflite, tensorrt, coreml, null [default: auto: the "
                        "target's first runtime that loads the model's format]."},
    "runtime_options": {"decls": ("--runtime-option",), "multiple": True, "metavar": "KEY=VALUE",
                        "parse": parse_runtime_options,
                        "help": "A runtime option (repeatable), e.g. performance_hint=THROUGHPUT; docs/runtimes.md "
                                "lists them."},
    "pacing_fps": {"type": click.FloatRange(min=0.001, min_open=True),
                   "help": "Issue frames at this rate instead of back to back (deadline misses are counted)."},
    "energy": {"decls": ("--energy/--no-energy",), "show_default": True,
               "help": "Measure energy per inference (an ESTIMATE from the target's TDP where no sensor exists)."},
    "power_sensor": {"type": click.Choice(SENSOR_CHOICES), "show_default": True,
                     "help": "Power reader: auto (the target's, then whatever the device has), none (estimate only)."},
    "sysfs_root": {"show_default": True, "metavar": "DIR",
                   "help": "Root of the sysfs tree the agent reads power from, on the device (for tests/emulation)."},
    "power_rate_hz": {"type": click.FloatRange(min=0.1, max=1000), "show_default": True,
                      "help": "Power readings per second during the timed phase."},
}

# Flags beside the settings that bench and fleet bench share.
NO_BUDGET = click.option("--no-budget", is_flag=True, help="Do not check any FPS budget.")
SAMPLES = click.option("--samples", is_flag=True, help="Include every per-inference latency in the JSON.")


def _field(keyword: str) -> Any:
    """The pydantic field behind a keyword name (energy keywords: the EnergySettings field)."""
    if keyword in ENERGY_KEYWORDS:
        return EnergySettings.model_fields[ENERGY_KEYWORDS[keyword]]
    return MeasureSettings.model_fields[keyword]


def _flag(keyword: str, changes: dict[str, Any]) -> tuple[Callable[[F], F], Callable[[Any], Any] | None]:
    """The click option of one setting (its FLAGS entry, else derived from the field) and its parser."""
    if keyword not in MEASURE_KEYWORDS:
        raise ValueError(f"measure_options: {keyword!r} is not a MeasureSettings keyword")
    field = _field(keyword)
    spec = {"decls": ("--" + keyword.replace("_", "-"),), "help": field.description,
            **({"type": field.annotation} if field.annotation in (int, float, str) else {}),
            **FLAGS.get(keyword, {}), **changes}
    decls, parse = spec.pop("decls"), spec.pop("parse", None)
    if not spec.get("multiple"):
        spec.setdefault("default", field.get_default(call_default_factory=True))
    return click.option(*decls, keyword, **spec), parse


def measure_options(*items: str | Callable[[Any], Any], **changes: dict[str, Any]) -> Callable[[F], F]:
    """Add the flags of these settings (keyword names of :data:`FLAGS`), in this order; the command receives
    them as ``measure: dict[str, Any]`` (merged with an outer ``measure_options``' when applied twice).

    Args:
        items: keyword names; a click decorator among them is applied in its place (a flag that is not a setting,
            kept where ``--help`` has always listed it).
        changes: per keyword, click.option arguments that differ for this command (``help``, ``default``, ...).
    """
    unknown = sorted(set(changes) - {i for i in items if isinstance(i, str)})
    if unknown:
        raise ValueError(f"measure_options: changes for settings not added: {', '.join(unknown)}")
    flags = {i: _flag(i, changes.get(i, {})) for i in items if isinstance(i, str)}

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            measure = dict(kwargs.pop("measure", {}))
            for keyword, (_, parse) in flags.items():
                value = kwargs.pop(keyword)
                measure[keyword] = parse(value) if parse is not None else value
            return f(*args, measure=measure, **kwargs)

        decorated: Any = wrapper
        for item in reversed(items):
            decorated = (flags[item][0] if isinstance(item, str) else item)(decorated)
        return decorated

    return decorate
