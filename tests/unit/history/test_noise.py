"""Noise is not signal (issue 16, item 7): comparisons use per-block medians and, where the history holds repeated
runs of the same model/device/runtime/settings, their spread as a noise floor; the optimize speed-up shows an
interval and says when it covers 1.0."""

from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from edgeopt.cli.optimize_render import render_optimize
from edgeopt.history import HistoryStore, Verdict, compare, compare_samples
from edgeopt.history.stats import block_medians
from tests.synthetic_results import bench_result, samples
from tests.unit.cli.test_tables import optimize_result


def test_block_medians_split_a_run_in_order():
    x = np.concatenate([np.full(100, 1.0), np.full(100, 2.0)])
    medians = block_medians(x)
    assert medians.size == 20 and medians[:10].tolist() == [1.0] * 10 and medians[10:].tolist() == [2.0] * 10
    assert block_medians(np.arange(25.0)).size == 10 and block_medians(np.arange(5000.0)).size == 30


def test_back_to_back_runs_within_the_historys_run_to_run_spread_are_noise(tmp_path):
    store = HistoryStore(tmp_path / "h.sqlite3")
    # the same model measured four times: each run starts in another state (clock, cache, neighbours)
    for i, level in enumerate((1.00, 1.22, 0.97, 1.18)):
        store.record(bench_result(samples(2000, level, spread=0.03, seed=i)))
    c = compare(store, 3, 4)  # +21.6 %, and significant: the runs differ, but so do all runs of this model
    assert c.significant and c.change_pct > 20
    assert c.noise_floor_pct is not None and c.noise_floor_pct > 21 and c.noise_runs == 3
    assert c.verdict is Verdict.NO_CHANGE and not c.regression and "repeated runs" in c.explanation
    assert c.blocks_a == c.blocks_b == 30


def test_without_repeated_runs_a_real_slowdown_stays_a_regression(tmp_path):
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.record(bench_result(samples(2000, 1.0, seed=1)))
    store.record(bench_result(samples(2000, 1.3, seed=2)))
    c = compare(store, 1, 2)
    assert c.noise_floor_pct is None and c.regression and c.p_value < 1e-6


def _drifting_run(seed: int, n: int = 3000) -> np.ndarray:
    """Latencies of one model whose level wanders slowly during the run (AR(1), phi 0.999), plus jitter."""
    rng = np.random.default_rng(seed)
    level = np.zeros(n)
    for i in range(1, n):
        level[i] = 0.999 * level[i - 1] + rng.normal(0, 0.004)
    return np.exp(level + rng.normal(0, 0.03, n))


def test_autocorrelated_samples_of_one_model_are_not_called_different():
    a, b = _drifting_run(7), _drifting_run(8)  # the same process twice; raw-sample Mann-Whitney: p ~ 1e-55
    c = compare_samples(a, b)
    assert not c.significant and c.p_value > 0.05 and c.verdict is Verdict.NO_CHANGE, c.explanation
    assert c.ratio_ci_low <= c.median_ratio <= c.ratio_ci_high


def test_optimize_speedup_shows_its_interval_and_within_noise():
    r = optimize_result()
    rows = [row.model_copy(update={"speedup_ci": ci}) for row, ci in
            zip(r.fidelity or [], ([0.97, 1.03], [0.93, 1.61], [2.1, 2.6]), strict=True)]
    buf = io.StringIO()
    render_optimize(r.model_copy(update={"fidelity": rows}), Console(file=buf, width=120, color_system=None))
    text = buf.getvalue()
    assert "1.01x [0.93-1.61] ~noise" in text and "2.35x [2.10-2.60]" in text
    assert "2.35x [2.10-2.60] ~noise" not in text
