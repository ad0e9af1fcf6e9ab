"""Terminal tables for the history commands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ..history import Baseline, RunComparison, RunRecord
from ..history.cell_compare import CellRunComparison
from ..history.compare import KindComparison
from ..registry import get_kind
from ..untrusted import for_rich
from .tables import Col, fit_table, human_count

_out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 150)


_RUN_COLS = (
    Col("id", 9), Col("recorded", 3, numeric=False), Col("kind", 2, numeric=False),
    Col("model", 8, numeric=False, flexible=True, flex_min=10), Col("sha256", 1, numeric=False),
    Col("target", 6, numeric=False), Col("device", 5, numeric=False, flexible=True, flex_min=8),
    Col("runtime", 4, numeric=False, flexible=True, flex_min=10), Col("p50 ms", 8), Col("p99 ms", 7),
    Col("ips", 7), Col("samples", 2), Col("valid", 6, numeric=False), Col("verdict", 6, numeric=False),
    Col("baselines", 5, numeric=False, flexible=True, flex_min=9),
)


def render_runs(runs: list[RunRecord], path: Path, console: Console | None = None) -> None:
    """The runs, human units (no exponents), columns chosen to fit the terminal."""
    out = console or _out
    rows = [[str(r.id), r.created_at[:16].replace("T", " "), r.kind, r.model_name, r.model_sha256[:10], r.target,
             r.device, f"{r.runtime} {r.runtime_version}", human_count(r.latency_ms_p50),
             human_count(r.latency_ms_p99), human_count(r.throughput_ips), f"{r.samples_count:,}",
             "yes" if r.valid else "NO", r.verdict or "-", ", ".join(r.baselines)] for r in runs]
    table, left_out = fit_table(f"edgeopt history ({path})", _RUN_COLS, rows, out.width)
    out.print(table)
    if left_out and runs:
        out.print(f"(left out at {out.width} columns: {', '.join(left_out)}; all of it: --json)", soft_wrap=True)
    if not runs:
        out.print("no runs recorded yet: edgeopt bench / edgeopt qualify record them")


def render_comparison(c: RunComparison) -> None:
    verdict = {"regression": "[red]REGRESSION[/]", "improvement": "[green]IMPROVEMENT[/]",
               "within_tolerance": "within tolerance", "no_change": "no significant change"}[c.verdict.value]
    # model and device names, explanation and notes quote what devices and files reported: data, never markup
    table = Table(title=for_rich(f"run {c.run_b} ({c.model_b} on {c.device_b}) vs run {c.run_a} ({c.model_a} on "
                                 f"{c.device_a})"))
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
    _out.print(for_rich(c.explanation), soft_wrap=True)
    for note in c.notes:
        _out.print(f"[yellow]note:[/] {for_rich(note)}", soft_wrap=True)


def render_baselines(items: list[Baseline], path: Path) -> None:
    table = Table(title=for_rich(f"edgeopt baselines ({path})"))
    for col in ("name", "device", "run", "set at"):
        table.add_column(col)
    for b in items:
        table.add_row(for_rich(b.name), for_rich(b.device), str(b.run_id),
                      for_rich(b.created_at[:19].replace("T", " ")))
    _out.print(table)


def render_cell_comparison(c: CellRunComparison) -> None:
    """One row per (cell, metric) of two runs of workload cells (any kind's keyed cells: the generative kind's
    bench runs, a plug-in kind's without a ``compare_render`` of its own); verdict per row, REGRESSION when any
    regresses."""
    out = Console(width=200) if not sys.stdout.isatty() else Console()
    t = Table(title=for_rich(f"run {c.run_b} ({c.model_b}, {c.device_b}) vs run {c.run_a} ({c.model_a}, "
                             f"{c.device_a})"))
    for col in ("cell", "metric", "A", "B", "change", "p", "noise floor", "verdict"):
        t.add_column(col, justify="left" if col in ("cell", "metric", "verdict") else "right", no_wrap=True)
    for cell in c.cells:
        for m in cell.metrics:
            verdict = m.verdict.value if m.verdict is not None else "not judged"
            t.add_row(for_rich(cell.cell), for_rich(m.metric), f"{m.median_a:.4g}", f"{m.median_b:.4g}",
                      f"{m.change_pct:+.1f} %",
                      "-" if m.p_value is None else f"{m.p_value:.2g}",
                      "-" if m.noise_floor_pct is None else f"{m.noise_floor_pct:.1f} %",
                      f"[red]{verdict}[/red]" if m.regression else verdict)
    out.print(t)
    for note in c.notes:
        out.print(f"note: {for_rich(note)}", soft_wrap=True)
    if c.unmatched:
        out.print(f"not compared (in one run only): {for_rich(', '.join(c.unmatched))}", soft_wrap=True)
    out.print("[red]REGRESSION[/red]" if c.regression else "no regression")


# The renderer of each comparison shape (``KindComparison.shape``): what prints a comparison whose kind names no
# ``compare_render`` of its own.
_BY_SHAPE: dict[str, Callable[[Any], None]] = {
    RunComparison.shape: render_comparison, CellRunComparison.shape: render_cell_comparison}


def show_comparison(c: KindComparison) -> None:
    """``edgeopt compare`` in a terminal: by the runs' kind's ``compare_render`` when its descriptor names one (a
    plug-in kind's own table), else by the renderer of the comparison's shape (one cell or workload cells).

    Raises:
        RegistryError: the kind's ``compare_render`` does not import.
    """
    own = get_kind(c.model_kind).load_compare_render() if c.model_kind else None
    (own or _BY_SHAPE[c.shape])(c)
