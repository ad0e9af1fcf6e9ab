"""Tables for ``edgeopt devices`` (rich); JSON output never passes through here."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from ..devices.check import DeviceReport
from ..devices.schema import Inventory
from ..untrusted import clean_text, for_rich

if TYPE_CHECKING:
    from ..devices.fleet_check import CheckRow

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 120)


def render_inventory(inv: Inventory) -> None:
    table = Table(title=for_rich(f"devices in {inv.source}"))
    for col in ("name", "address", "target"):  # never cut: the port is what tells loopback devices apart
        table.add_column(col, no_wrap=True)
    for col in ("tags", "python", "workdir", "key"):  # long paths fold onto more lines, shown in full
        table.add_column(col, overflow="fold")
    for d in inv.devices:
        cells = (d.name, d.label(), d.target, ", ".join(d.tags) or "-", d.python, d.workdir,
                 str(d.key) if d.key else "(ssh-agent)")
        table.add_row(*(for_rich(c) for c in cells))  # an inventory file's text is data, never markup
    _out.print(table)
    if not inv.devices:
        _out.print("no devices yet: add one (docs/devices.md)")


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} MiB"


def render_device_report(r: DeviceReport) -> None:
    t = Table(title=for_rich(f"device {r.device} ({r.runner}, target {r.target or '-'})"), show_header=False)
    t.add_column("fact")
    t.add_column("value")
    t.add_row("ready", for_rich(r.summary) if r.summary else ("yes" if r.ready else "NO"))
    if r.target_mismatch:
        t.add_row("target", for_rich(f"MISMATCH: not {r.target} hardware: {'; '.join(r.target_mismatch)}"))
    # Everything here but the labels was reported by the device: data, never markup (edgeopt.untrusted).
    t.add_row("host", for_rich(f"{r.hostname or '-'}: {r.os}, {r.arch}, {r.cpu or '-'} ({r.cores or '?'} cores)"))
    t.add_row("python", for_rich(f"{r.python} ({r.python_executable}); agent {r.agent_version}"))
    t.add_row("packages", for_rich(", ".join(f"{k} {v}" for k, v in r.packages.items() if v) or "(none)"))
    for s in r.runtimes:
        state = f"{s.version or 'available'}" if s.available else f"MISSING: {s.install}"
        t.add_row(for_rich(f"runtime {s.runtime.value}"), for_rich(state))
    for kind, statuses in r.other_kinds.items():  # runtimes of kinds the target's list does not cover (LLMs)
        for s in statuses:
            state = f"{s.version or 'available'}" if s.available else f"missing: {s.install}"
            t.add_row(for_rich(f"{kind} {s.runtime.value}"), for_rich(state))
    t.add_row("memory", f"{_mb(r.memory_available_mb)} available of {_mb(r.memory_total_mb)}")
    t.add_row("disk", f"{_mb(r.disk_free_mb)} free in {for_rich(r.workdir)}")
    t.add_row("governor", for_rich(r.governor or "- (no cpufreq)"))
    temps = ", ".join(f"{k} {v:.1f} C" for k, v in r.temperature_c.items())
    t.add_row("temperature", for_rich(temps or "- (no thermal zones)"))
    t.add_row("power sensors", for_rich("; ".join(r.power_sensors) or "none (energy will be an estimate)"))
    _out.print(t)
    for p in r.problems:
        _out.print(f"[yellow]to fix:[/yellow] {for_rich(p)}", soft_wrap=True)


def render_check_rows(rows: list[CheckRow]) -> None:
    """``fleet check``: a line per device (ready or what is missing), then its problems; every word but the labels
    came from the device or the inventory, so each line is cleaned (plain text, no escapes)."""
    def line(text: str) -> None:
        click.echo(clean_text(text, limit=20_000))

    for r in rows:
        if r.report is None:
            line(f"{r.device}: ERROR ({r.error_kind}): {r.error}")
            continue
        rep = r.report
        state = rep.summary or ("ready" if rep.ready else "NOT READY")
        line(f"{r.device}: {state} ({rep.arch}, Python {rep.python} at {rep.python_executable})")
        if rep.target_mismatch:  # as a benchmark there would say it: its numbers would not describe the target
            line(f"  - TARGET MISMATCH: not {rep.target} hardware: {'; '.join(rep.target_mismatch)}")
        for problem in rep.problems:
            line(f"  - {problem}")
