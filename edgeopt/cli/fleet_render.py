"""Terminal rendering of a fleet result: a row per device, then the fleet's spread and outliers."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from ..fleet.result import FleetResult, Spread
from ..untrusted import for_rich


def devices_count(n: int) -> str:
    """``1 device``, ``3 devices``."""
    return f"{n} device" if n == 1 else f"{n} devices"


def _spread(name: str, s: Spread | None) -> str:
    if s is None:
        return f"{name}: no device ran"
    if s.devices == 1:
        return f"{name}: {s.median_ms:.3f} ms on 1 device ({s.min_device})"
    cv = f", CV {s.cv:.1%}" if s.cv is not None else ""
    return (f"{name}: median {s.median_ms:.3f} ms over {devices_count(s.devices)}, min {s.min_ms:.3f} "
            f"({s.min_device}), max {s.max_ms:.3f} ({s.max_device}){cv}")


def render_fleet(result: FleetResult) -> None:
    """Print the per-device table and the aggregate to stdout."""
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    # device names, errors and warnings come from the inventory and the devices: data, never markup
    table = Table(title=for_rich(f"fleet bench {result.model} ({result.executor}, {result.jobs} at a time)"))
    for col in ("device", "target", "status", "p50 ms", "p99 ms", "items/s", "verdict", "s", "notes"):
        table.add_column(col, overflow="fold")
    for r in result.rows:
        if r.result is not None:
            lat = r.result.latency_ms
            verdict = r.verdict or ("pass" if r.result.passed else "FAIL")
            cells = [f"{lat.p50:.3f}", f"{lat.p99:.3f}", f"{r.result.throughput_ips:.1f}", for_rich(verdict)]
            notes = "; ".join([*r.warnings, *r.conditions])
        else:
            cells, notes = ["-", "-", "-", "error"], f"{r.error_kind}: {r.error}"
        table.add_row(for_rich(r.device), for_rich(r.target), for_rich(r.status), *cells, f"{r.seconds:.1f}",
                      for_rich(notes))
    out.print(table)
    a = result.aggregate
    out.print(for_rich(_spread("p50", a.p50)))
    out.print(for_rich(_spread("p99", a.p99)))
    for o in a.outliers:
        out.print(for_rich(f"outlier: {o.device} {o.metric} {o.value_ms:.3f} ms ({o.deviation_pct:+.1f}% vs median "
                       f"{o.fleet_median_ms:.3f}); likely: {'; '.join(o.likely_causes)}"))
    if a.failed:
        out.print(for_rich(f"could not run: {', '.join(a.failed)}"))
    verdicts = {r.device: r.verdict for r in result.rows}
    for name in a.not_passed:  # each with what it was judged against
        out.print(for_rich(f"{name}: {verdicts.get(name) or 'FAIL'}"))
    out.print(for_rich(f"{a.ok} of {devices_count(a.devices)} ran in {result.seconds:.1f} s; exit {result.exit_code}"))
