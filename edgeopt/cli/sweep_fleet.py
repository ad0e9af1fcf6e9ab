"""``edgeopt sweep MODEL --devices SELECTION``: the sweep on many devices at once (docs/fleet.md, *Sweeping a
fleet*); kept apart so ``sweep_cmd`` stays a thin command."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..errors import InputError
from ..evaluation.degenerate import UNTESTED
from ..settings import MeasureSettings, RemoteSpec
from ..sweep.api import SweepOptions
from ..sweep.fleet.result import FleetSweepResult
from ..untrusted import clean_text, for_rich
from .fleet_options import FleetOptions
from .json_out import emit_json


def run_fleet_sweep(model: Path, options: SweepOptions, measure: MeasureSettings, *, fleet: FleetOptions,
                    remote: RemoteSpec, target: str | None, mlflow: bool, as_json: bool) -> int:
    """Sweep ``model`` on every selected device, render it; the fleet sweep's exit code (docs/exit-codes.md).

    Raises:
        InputError: ``--mlflow`` (it logs one run), or bad input (the fleet's own checks).
    """
    from ..fleet import FleetProgress
    from ..sweep.fleet import fleet_sweep

    if mlflow:
        raise InputError("--mlflow logs one run; with --devices drop --mlflow (or sweep one device)")
    with FleetProgress() as progress:
        result = fleet_sweep(model, options, measure, devices=str(fleet.devices), jobs=fleet.jobs,
                             executor=fleet.executor, deadline_s=fleet.deadline_s, remote=remote, target=target,
                             progress=progress)
    return report_fleet_sweep(result, as_json, render_fleet_sweep)


def report_fleet_sweep(result: Any, as_json: bool, render: Callable[[Any], None]) -> int:
    """A fleet sweep's (of any kind) warnings on stderr, then its JSON or its tables; its exit code."""
    for warning in result.warnings:
        print(f"edgeopt: warning: {clean_text(warning)}", file=sys.stderr)
    if as_json:
        emit_json(result)
    else:
        render(result)
    return int(result.exit_code)


def render_fleet_sweep(result: FleetSweepResult) -> None:
    """Per device its recommendation; per level the devices' p50 spread; whether the devices agree."""
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    # device names, recipes, reasons and warnings come from the inventory, files and devices: data, never markup
    table = Table(title=for_rich(f"fleet sweep {result.model} ({result.executor}, {result.jobs} at a time)"))
    for col in ("device", "target", "status", "levels", "recommendation", "s", "notes"):
        table.add_column(col, overflow="fold")
    for r in result.rows:
        count = str(len(r.result.levels)) if r.result is not None else "-"
        if r.status == "error" or r.result is None:
            notes = f"{r.error_kind}: {r.error}"
        else:  # why there is no recommendation, then the device's own warnings (runtimes skipped, ...)
            notes = "; ".join([r.result.reason or "", *r.result.warnings]).strip("; ")
        rec = r.recommendation or "-"
        if r.recommendation and r.result is not None and r.result.eval_cannot_tell:
            rec += f" ({UNTESTED})"
        table.add_row(for_rich(r.device), for_rich(r.target), for_rich(r.status), count, for_rich(rec),
                      f"{r.seconds:.1f}", for_rich(notes))
    out.print(table)
    levels = Table(title="levels across devices (p50 latency)")
    for col in ("recipe", "runtime", "devices", "median ms", "min ms", "max ms", "min retention", "passed on"):
        levels.add_column(col, overflow="fold")
    for s in result.summary.levels:
        levels.add_row(for_rich(s.recipe), for_rich(s.runtime), str(s.devices), f"{s.median_ms:.3f}",
                       for_rich(f"{s.min_ms:.3f} ({s.min_device})"), for_rich(f"{s.max_ms:.3f} ({s.max_device})"),
                       f"{s.retention_min:.4f}", for_rich(", ".join(s.passed_on)))
    out.print(levels)
    print_fleet_sweep_footer(out, result)


def print_fleet_sweep_footer(out: Console, result: Any) -> None:
    """The closing lines of a fleet sweep's tables (of any kind): do the devices agree, host and device times, exit
    code, output folder, the devices that could not run."""
    summary = result.summary
    agree = (f"every device recommends {summary.recommendation}" if summary.agree
             else "the devices do not agree on a recommendation")
    out.print(for_rich(f"{agree}; host side {result.host_seconds:.1f} s; {summary.ok}/{summary.devices} devices ran in "
                   f"{result.seconds:.1f} s; exit {result.exit_code}; out {result.out_dir}"))
    if summary.failed:
        out.print(for_rich(f"could not run: {', '.join(summary.failed)}"))
