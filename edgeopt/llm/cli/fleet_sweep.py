"""``edgeopt sweep LLM_DIR --eval TEXT --devices SELECTION``: the LLM sweep on a fleet (edgeopt.llm.sweep_fleet;
docs/llm.md, "Sweeping a fleet"); kept apart so :mod:`.sweep` stays a thin entry. Exit codes as the ONNX fleet
sweep's (docs/exit-codes.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ...cli.fleet_options import FleetOptions
from ...cli.sweep_fleet import print_fleet_sweep_footer, report_fleet_sweep
from ...settings import RemoteSpec
from ...untrusted import for_rich
from ..sweep_fleet import LlmFleetSweepResult
from ..sweep_options import LlmSweepOptions


def run_llm_fleet_sweep(model: Path, options: LlmSweepOptions, *, fleet: FleetOptions, remote: RemoteSpec,
                        target: str | None, as_json: bool) -> int:
    """Sweep the LLM folder on every selected device, render it; the fleet sweep's exit code."""
    from ...fleet import FleetProgress
    from ..sweep_fleet import fleet_llm_sweep

    with FleetProgress() as progress:
        result = fleet_llm_sweep(model, options, devices=str(fleet.devices), jobs=fleet.jobs,
                                 executor=fleet.executor, deadline_s=fleet.deadline_s, remote=remote, target=target,
                                 progress=progress, say=lambda text: click.echo(text, err=True))
    return report_fleet_sweep(result, as_json, render_llm_fleet_sweep)


def render_llm_fleet_sweep(result: LlmFleetSweepResult) -> None:
    """Per device its recommendation; per level the devices' decode-rate spread; whether the devices agree."""
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    # device names, levels and reasons come from the inventory, files and devices: data, never markup
    table = Table(title=for_rich(f"LLM fleet sweep {result.model} ({result.executor}, {result.jobs} at a time)"))
    for col in ("device", "target", "status", "levels", "recommendation", "s", "notes"):
        table.add_column(col, overflow="fold")
    for r in result.rows:
        res = r.result
        notes = f"{r.error_kind}: {r.error}" if res is None else (res.binding_constraint or "")
        table.add_row(for_rich(r.device), for_rich(r.target), for_rich(r.status), str(len(res.levels)) if res else "-",
                      for_rich(r.recommendation or "-"), f"{r.seconds:.1f}", for_rich(notes))
    out.print(table)
    levels = Table(title="levels across devices (decode tokens/s = 1000 / TPOT p50)")
    for col in ("level", "runtime", "devices", "median tok/s", "min tok/s", "max tok/s", "min retention",
                "passed on"):
        levels.add_column(col, overflow="fold")
    for s in result.summary.levels:
        levels.add_row(for_rich(s.name), for_rich(s.runtime), str(s.devices), f"{s.tokens_per_s_median:.1f}",
                       for_rich(f"{s.tokens_per_s_min:.1f} ({s.min_device})"),
                       for_rich(f"{s.tokens_per_s_max:.1f} ({s.max_device})"),
                       f"{s.retention_min:.4f}", for_rich(", ".join(s.passed_on)))
    out.print(levels)
    print_fleet_sweep_footer(out, result)
