"""What the sweep's Pareto chart shows of each level: its objective value, verdict, ranking interval, and whether
its energy is an ESTIMATE (target TDP, no power sensor)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

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


def _shipped_note(rec: Recommendation | None) -> str:
    """The recommendation's shipped check in one phrase (empty when it did not run)."""
    check = rec.shipped_check if rec is not None else None
    if check is None or check.retention_as_shipped is None:
        return ""
    text = (f"shipped: retention {check.retention_as_shipped:.4f} as shipped, {check.retention_with_defaults:.4f} "
            "with the runtime's defaults")
    return f"{text} ({check.note})" if check.note else text


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
    shipped = _shipped_note(recommendation)
    if shipped:  # the recommended point's tooltip says how it ships (docs/sweep.md, "Deploying the recommendation")
        points = [p if (p.label != f"{recommendation.recipe}/{recommendation.runtime}"  # type: ignore[union-attr]
                        or p.status == "no-change") else replace(p, note="; ".join(filter(None, [p.note, shipped])))
                  for p in points]
    x_label, unit = AXIS[objective]
    if objective == "energy" and any(lv.energy_source == "estimate" for lv in levels):
        x_label = "energy per inference (mJ, ESTIMATE from TDP)"
    rec = next((i for i, lv in enumerate(levels) if recommendation is not None and not lv.no_change
                and (lv.recipe, lv.runtime) == (recommendation.recipe, recommendation.runtime)), None)
    budget = 1000.0 / fps if fps and objective == "latency" else None
    return points, ParetoContext(
        x_label=x_label, x_unit=unit, min_retention=min_retention, budget_x=budget, recommended=rec,
        budget_label=f"{fps:g} FPS budget: p99 <= {budget:.3g} ms" if budget else "")
