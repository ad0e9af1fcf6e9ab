"""The qualification as a terminal table (rich); JSON output never passes through here."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from ..qualify.result import GateStatus, QualifyResult
from ..untrusted import for_rich

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 140)
_STYLE = {GateStatus.PASS: "[green]PASS[/]", GateStatus.FAIL: "[red]FAIL[/]", GateStatus.ERROR: "[yellow]ERROR[/]"}


def render_qualify(result: QualifyResult) -> None:
    table = Table(title=for_rich(f"edgeopt qualify {result.name}"))  # a spec's name is data, never markup
    for col in ("device", "gate", "measured", "limit", "verdict", "detail"):
        table.add_column(col, overflow="fold")
    for g in result.gate_results():
        measured = "n/a" if g.measured is None else f"{g.measured:.4g} {for_rich(g.unit)}".strip()
        if g.estimate:
            measured += " (ESTIMATE)"
        # the detail carries device text (an error line): data, never markup (edgeopt.untrusted)
        table.add_row(for_rich(g.device), for_rich(g.metric), measured,
                      for_rich(f"{g.comparison} {g.threshold:.4g} {g.unit}".strip()),
                      _STYLE[g.status], for_rich(g.detail))
    _out.print(table)
    for warning in result.warnings:
        _out.print(f"[yellow]warning:[/] {for_rich(warning)}")
    verdict = {0: "[green]PASS[/]", 1: "[red]FAIL[/]", 3: "[yellow]DEVICE ERROR[/]"}[result.exit_code]
    _out.print(f"{verdict}: {sum(g.status is GateStatus.PASS for g in result.gate_results())}/"
               f"{len(result.gate_results())} gates passed on {len(result.devices)} device(s)")
    for fmt, path in result.reports.items():
        _out.print(f"  {for_rich(fmt):9} {for_rich(path)}")
