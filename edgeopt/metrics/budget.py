"""Real-time budget check: does the chosen latency percentile fit in one frame at the target FPS?"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FpsBudget(BaseModel):
    """Verdict of an FPS budget; ``passed`` is False when the percentile is not supported by the run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(gt=0, description="Frames per second the model must sustain.")
    budget_ms: float = Field(description="Frame budget: 1000 / fps.")
    percentile: str = Field(description="Latency percentile checked against the budget (p50..p999).")
    latency_ms: float = Field(description="Measured latency at that percentile.")
    passed: bool
    headroom_pct: float = Field(description="(budget - latency) / budget x 100; negative when over budget.")
    reason: str | None = Field(None, description="Why it failed, when it did.")


def check_fps(fps: float, percentile: str, latency_ms: float, percentile_supported: bool) -> FpsBudget:
    """Check one latency percentile against ``1000 / fps``."""
    budget_ms = 1000.0 / fps
    headroom = (budget_ms - latency_ms) / budget_ms * 100.0
    reason = None
    if not percentile_supported:
        reason = f"{percentile} is not supported by the run's sample count; run longer"
    elif latency_ms > budget_ms:
        reason = f"{percentile} {latency_ms:.3f} ms exceeds the {budget_ms:.3f} ms frame budget at {fps:g} FPS"
    return FpsBudget(
        fps=fps,
        budget_ms=budget_ms,
        percentile=percentile,
        latency_ms=latency_ms,
        passed=reason is None,
        headroom_pct=headroom,
        reason=reason,
    )
