"""The soak's leak detector (benchmarks/soak_stats.py) fails on growing series and passes flat noisy ones."""

from __future__ import annotations

import random

import pytest

from benchmarks import soak_stats
from benchmarks.soak_stats import Bound

RSS = Bound("host_rss_mb", "slope", 2.0, "test")
FDS = Bound("host_fds", "flat", 2, "test")
ZERO = Bound("ssh_transports_alive", "max", 0, "test")


def series(values: list[float], every: int = 20) -> list[tuple[int, float]]:
    return [(max(1, i * every), v) for i, v in enumerate(values)]


def test_fit_slope_recovers_a_line_and_degenerate_inputs_give_zero():
    assert soak_stats.fit_slope([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(2.0)
    assert soak_stats.fit_slope([5], [1]) == 0.0
    assert soak_stats.fit_slope([2, 2], [1, 9]) == 0.0


def test_memory_growing_by_60_kib_per_run_fails_and_noise_around_a_plateau_passes():
    rng = random.Random(0)
    leaking = series([100 + 0.06 * run + rng.uniform(-0.3, 0.3) for run in range(0, 1000, 20)])
    verdict = soak_stats.assess(leaking, RSS, warmup_runs=100)
    assert not verdict["passed"]
    assert verdict["growth_per_100_runs"] == pytest.approx(6.0, abs=0.5)
    flat = series([120 + rng.uniform(-0.3, 0.3) for _ in range(0, 1000, 20)])
    assert soak_stats.assess(flat, RSS, warmup_runs=100)["passed"]


def test_warm_up_growth_is_left_out_of_the_fit():
    # Imports and caches fill in the first runs, then it stays put: not a leak.
    values = [50.0, 80.0, 95.0] + [100.0] * 47
    verdict = soak_stats.assess(series(values), RSS, warmup_runs=100)
    assert verdict["passed"] and verdict["first"] == 100.0 and verdict["growth_per_100_runs"] == 0.0
    unfiltered = soak_stats.assess(series(values), RSS, warmup_runs=0)
    assert unfiltered["first"] == 50.0 and unfiltered["growth_per_100_runs"] > 0


def test_one_descriptor_per_sample_interval_fails_flat_bound_and_a_blip_passes():
    leaking = series([9 + i for i in range(50)])
    assert not soak_stats.assess(leaking, FDS, warmup_runs=100)["passed"]
    blip = series([9] * 20 + [11] + [9] * 29)
    assert soak_stats.assess(blip, FDS, warmup_runs=100)["passed"]


def test_a_single_leftover_transport_fails_the_zero_bound():
    assert not soak_stats.assess(series([0] * 30 + [1] + [0] * 19), ZERO, warmup_runs=100)["passed"]
    assert soak_stats.assess(series([0] * 50), ZERO, warmup_runs=100)["passed"]


def test_assess_all_skips_metrics_the_samples_do_not_carry():
    samples = [{"run": r, "host_fds": 9, "ssh_transports_alive": None} for r in (1, 20, 40)]
    out = soak_stats.assess_all(samples, [FDS, ZERO, RSS], warmup_runs=1)
    assert [c["metric"] for c in out] == ["host_fds"] and out[0]["passed"]
