"""Deadline statistics of a frame-paced run, and how many frames a miss rate needs."""

import pytest

from edgeopt.metrics.deadline import MIN_FRAMES, deadline_from_frames, frames_required
from tests.synthetic_results import bench_result, frames


def test_frames_required():
    assert frames_required(1.0) == MIN_FRAMES == 100
    assert frames_required(0.1) == 1000 and frames_required(0.3) == 334 and frames_required(0) == 100
    assert frames_required(50) == 100


def test_statistics_from_the_agent_frames():
    stats = deadline_from_frames(frames(30, 200, misses=3, late_starts=2))
    assert (stats.frames, stats.misses, stats.late_starts) == (200, 3, 2)
    assert stats.miss_pct == pytest.approx(1.5) and stats.budget_ms == pytest.approx(33.333, rel=1e-4)
    assert stats.response_ms_p50 == pytest.approx(16.666, rel=1e-3) and stats.response_ms_p99 > stats.budget_ms
    assert deadline_from_frames({}) is None


def test_bench_result_carries_deadline_only_for_paced_runs():
    assert bench_result().deadline is None and bench_result().settings.pacing_fps is None
    paced = bench_result(frames=frames(60, 100, misses=0), pacing_fps=60)
    assert paced.deadline.fps == 60 and paced.deadline.miss_pct == 0 and paced.settings.pacing_fps == 60
