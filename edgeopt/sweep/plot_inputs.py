"""What the sweep's Pareto chart shows of each level: its objective value, verdict, ranking interval, and whether
its energy is an ESTIMATE (target TDP, no power sensor)."""

from __future__ import annotations

from collections.abc import Sequence

from ..reports.charts.pareto import ParetoContext, ParetoPoint
from .result import Level, Recommendation

AXIS = {"latency": ("latency p50 (ms)", "ms"), "size": ("size (MB)", "MB"),
        "energy": ("energy per inference (mJ)", "mJ")}


def _x(level: Level, objective: str) -> float:
    if objective == "size":
        return level.size_bytes / 1e6
    if objective == "energy" and level.energy_mj is not None:
        return level.energy_mj
    return level.latency_ms


def _note(level: Level) -> str:
    if level.energy_mj is None:
        return ""
    estimate = " (ESTIMATE: target TDP, no power sensor)" if level.energy_source == "estimate" else ""
    return f"energy {level.energy_mj:.4g} mJ{estimate}"


def pareto_inputs(levels: Sequence[Level], objective: str, *, min_retention: float | None = None,
                  fps: float | None = None, recommendation: Recommendation | None = None,
                  ) -> tuple[list[ParetoPoint], ParetoContext]:
    """The chart's points and context for ``levels`` (same order), as :func:`.report.write_plot` draws them."""
    ranked = objective == "latency"
    points = [ParetoPoint(
        label=f"{lv.recipe}/{lv.runtime}", x=_x(lv, objective), retention=lv.retention,
        status="no-change" if lv.no_change else "pass" if lv.passed else "fail",
        low=lv.latency_ms_low if ranked else None, high=lv.latency_ms_high if ranked else None, note=_note(lv))
        for lv in levels]
    x_label, unit = AXIS[objective]
    if objective == "energy" and any(lv.energy_source == "estimate" for lv in levels):
        x_label = "energy per inference (mJ, ESTIMATE from TDP)"
    rec = next((i for i, lv in enumerate(levels) if recommendation is not None and not lv.no_change
                and (lv.recipe, lv.runtime) == (recommendation.recipe, recommendation.runtime)), None)
    budget = 1000.0 / fps if fps and objective == "latency" else None
    return points, ParetoContext(
        x_label=x_label, x_unit=unit, min_retention=min_retention, budget_x=budget, recommended=rec,
        budget_label=f"{fps:g} FPS budget: p99 <= {budget:.3g} ms" if budget else "")
