"""Terminal tables for the history commands."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ..history import Baseline, RunComparison, RunRecord

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 150)


def render_runs(runs: list[RunRecord], path: Path) -> None:
    table = Table(title=f"edgeopt history ({path})")
    for col in ("id", "recorded", "kind", "model", "sha256", "target", "device", "runtime", "p50 ms", "p99 ms",
                "ips", "samples", "valid", "verdict", "baselines"):
        table.add_column(col, overflow="fold")
    for r in runs:
        table.add_row(str(r.id), r.created_at[:19].replace("T", " "), r.kind, r.model_name, r.model_sha256[:10],
                      r.target, r.device, f"{r.runtime} {r.runtime_version}", f"{r.latency_ms_p50:.4g}",
                      f"{r.latency_ms_p99:.4g}", f"{r.throughput_ips:.4g}", str(r.samples_count),
                      "yes" if r.valid else "NO", r.verdict or "-", ", ".join(r.baselines))
    _out.print(table)
    if not runs:
        _out.print("no runs recorded yet: edgeopt bench / edgeopt qualify record them")


def render_comparison(c: RunComparison) -> None:
    verdict = {"regression": "[red]REGRESSION[/]", "improvement": "[green]IMPROVEMENT[/]",
               "within_tolerance": "within tolerance", "no_change": "no significant change"}[c.verdict.value]
    table = Table(title=f"run {c.run_b} ({c.model_b} on {c.device_b}) vs run {c.run_a} ({c.model_a} on {c.device_a})")
    table.add_column("")
    table.add_column("value")
    rows = [
        ("median A / B", f"{c.median_a_ms:.4g} ms / {c.median_b_ms:.4g} ms ({c.n_a} / {c.n_b} samples)"),
        ("median ratio B/A", f"{c.median_ratio:.4f} ({c.change_pct:+.2f} %)"),
        (f"{c.confidence:.0%} bootstrap CI", f"{c.ratio_ci_low:.4f} .. {c.ratio_ci_high:.4f}"),
        ("Mann-Whitney U", f"U={c.u_statistic:.0f}, z={c.z:.2f}, p={c.p_value:.3g} (alpha {c.alpha:g})"),
        ("effect size", f"P(B > A) = {c.effect_size:.3f}, rank-biserial {c.rank_biserial:+.3f}"),
        ("tolerance", f"{c.tolerance_pct:g} %"),
        ("verdict", verdict),
    ]
    for k, v in rows:
        table.add_row(k, v)
    _out.print(table)
    _out.print(c.explanation)
    for note in c.notes:
        _out.print(f"[yellow]note:[/] {note}")


def render_baselines(items: list[Baseline], path: Path) -> None:
    table = Table(title=f"edgeopt baselines ({path})")
    for col in ("name", "device", "run", "set at"):
        table.add_column(col)
    for b in items:
        table.add_row(b.name, b.device, str(b.run_id), b.created_at[:19].replace("T", " "))
    _out.print(table)
