"""Deadline misses under frame-paced load: what share of frames finished after their frame deadline.

The agent issues frame ``i`` at ``t0 + i / fps`` (``edgeopt_agent.paced``) and reports, per run, how many frames
completed after ``scheduled + 1 / fps``. A frame that starts late because the previous one overran counts against
its own deadline, so a model slower than the frame rate misses nearly every frame once its queue builds up.

Support rule: a miss rate of ``x`` % is resolvable only when one miss is at most ``x`` % of the frames, i.e.
``frames >= ceil(100 / x)`` (and never fewer than ``MIN_FRAMES``); a gate on a rate the run cannot resolve does not
pass (``edgeopt.qualify``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

MIN_FRAMES = 100


class DeadlineStats(BaseModel):
    """Frame-paced run facts (``BenchResult.deadline``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fps: float = Field(description="Frame rate the frames were issued at.")
    budget_ms: float = Field(description="Frame deadline after each frame's scheduled time: 1000 / fps.")
    frames: int = Field(description="Frames issued (none are dropped).")
    misses: int = Field(description="Frames that completed after their deadline.")
    miss_pct: float = Field(description="misses / frames x 100.")
    late_starts: int = Field(description="Frames that started after their slot because the previous one overran.")
    max_lateness_ms: float = Field(description="Latest start of a frame after its scheduled time, ms.")
    response_ms_p50: float | None = Field(default=None,
        description="Median completion time after the scheduled time, ms.")
    response_ms_p99: float | None = Field(default=None,
        description="p99 of completion time after the scheduled time, ms.")


def frames_required(max_pct: float) -> int:
    """Fewest frames that can resolve a miss rate of ``max_pct`` % (one miss <= max_pct %)."""
    if max_pct <= 0:
        return MIN_FRAMES
    return max(MIN_FRAMES, math.ceil(round(100.0 / max_pct, 9)))


def deadline_from_frames(frames: dict[str, Any]) -> DeadlineStats | None:
    """``RawRun.frames`` as statistics; None when the run was not frame-paced (empty dict)."""
    if not frames or not frames.get("scheduled"):
        return None
    fps = float(frames["fps"])
    count = int(frames["scheduled"])
    misses = int(frames["misses"])
    responses = np.asarray(frames.get("response_ns") or [], dtype=np.float64) / 1e6
    p50 = p99 = None
    if responses.size:
        p50, p99 = (float(v) for v in np.percentile(responses, [50, 99], method="inverted_cdf"))
    return DeadlineStats(
        fps=fps,
        budget_ms=1000.0 / fps,
        frames=count,
        misses=misses,
        miss_pct=misses / count * 100.0,
        late_starts=int(frames.get("late_starts", 0)),
        max_lateness_ms=float(frames.get("max_lateness_ns", 0)) / 1e6,
        response_ms_p50=p50,
        response_ms_p99=p99,
    )
