"""Objective values, the recommendation (or the binding constraint), and the frontier plot."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..fsutil import atomic_write_text
from ..reports import svg
from ..reports.charts.pareto import ParetoContext, ParetoPoint, pareto_chart
from .plot_inputs import pareto_inputs
from .result import Level, Recommendation


def objective_value(level: Level, objective: str) -> float:
    """What ``objective`` minimizes for ``level`` (energy falls back to latency when unknown)."""
    if objective == "size":
        return level.size_bytes / 1e6
    if objective == "energy" and level.energy_mj is not None:
        return level.energy_mj
    return level.latency_ms


def recommend(levels: Sequence[Level], objective: str, min_retention: float,
              fps: float | None) -> tuple[Recommendation | None, str | None]:
    """The passing level with the lowest objective, or None and the constraint that binds (a level that changed
    nothing is never recommended)."""
    passing = [lv for lv in levels if lv.passed and not lv.no_change]
    if passing:
        best = min(passing, key=lambda lv: (objective_value(lv, objective), -lv.retention))
        return Recommendation(recipe=best.recipe, runtime=best.runtime, artifact=best.artifact,
                              retention=best.retention, latency_ms=best.latency_ms, size_bytes=best.size_bytes,
                              reason=f"{best.recipe}@{best.runtime}: lowest {objective} of the passing levels "
                                     f"(one run each)"), None
    if not levels:
        return None, "no configuration was measured"
    accurate = [lv for lv in levels if lv.meets_retention]
    fast = [lv for lv in levels if lv.meets_budget]
    if not accurate:
        top = max(levels, key=lambda lv: lv.retention)
        return None, (f"retention: the best config ({top.recipe}/{top.runtime}) keeps {top.retention:.4f} "
                      f"< --min-retention {min_retention}")
    quickest = min(accurate, key=lambda lv: lv.latency_ms_p99)
    if not fast:
        fastest = min(lv.latency_ms_p99 for lv in levels)
        return None, (f"fps budget: no config sustains {fps:g} FPS (fastest p99 {fastest:.2f} ms > "
                      f"{1000 / fps:.2f} ms)" if fps else "budget: no run was valid")
    return None, (f"retention and fps budget together: configs fast enough lose accuracy, and the fastest accurate "
                  f"one ({quickest.recipe}/{quickest.runtime}) takes {quickest.latency_ms_p99:.2f} ms p99")


def write_plot(levels: Sequence[Level], objective: str, path: Path, *, min_retention: float | None = None,
               fps: float | None = None, recommendation: Recommendation | None = None) -> Path:
    """Scatter of objective vs retention with the frontier, the threshold, the FPS budget (on a latency chart: the
    budget bounds p99, the axis is p50), the recommendation and the ranking intervals (docs/charts.md)."""
    points, ctx = pareto_inputs(levels, objective, min_retention=min_retention, fps=fps, recommendation=recommendation)
    return write_pareto(points, ctx, f"Pareto: {objective} vs retention", path)


def write_pareto(points: Sequence[ParetoPoint], ctx: ParetoContext, title: str, path: Path) -> Path:
    """Every kind's frontier plot: ``points`` (objective vs retention) as a standalone SVG in ``path``, written whole
    or not at all."""
    atomic_write_text(path, svg.standalone(pareto_chart(points, ctx=ctx, title=title)))
    return path
