"""Mann-Whitney U and the bootstrap interval: checked against scipy (when installed) and hand-made cases; the
regression rule separates noise from a real slowdown."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt.errors import InputError
from edgeopt.history import Verdict, compare_samples
from edgeopt.history.stats import bootstrap_median, bootstrap_median_ratio, mann_whitney_u, rankdata
from tests.synthetic_results import samples


def test_rankdata_averages_ties():
    ranks, ties = rankdata(np.array([3.0, 1.0, 3.0, 2.0]))
    assert ranks.tolist() == [3.5, 1.0, 3.5, 2.0] and sorted(ties.tolist()) == [1, 1, 2]


def test_mann_whitney_small_case_by_hand():
    # a = [1, 2], b = [3, 4]: every b is larger -> U(a) = 0, P(B > A) = 1
    r = mann_whitney_u(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert r.u == 0.0 and r.prob_superiority == 1.0 and r.rank_biserial == 1.0 and r.z > 0
    same = mann_whitney_u(np.ones(10), np.ones(12))
    assert same.p_value == 1.0 and same.prob_superiority == 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mann_whitney_matches_scipy(seed):
    stats = pytest.importorskip("scipy.stats", reason="scipy is not installed: the cross-check needs it")
    rng = np.random.default_rng(seed)
    a = np.round(rng.gamma(2.0, 1.0, 300), 1)  # rounded: many ties
    b = np.round(rng.gamma(2.0, 1.0, 250) + 0.1 * seed, 1)
    ours = mann_whitney_u(a, b)
    ref = stats.mannwhitneyu(a, b, method="asymptotic", use_continuity=True)
    assert ours.u == pytest.approx(float(ref.statistic))
    assert ours.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-15)


def test_bootstrap_interval_covers_the_true_ratio():
    a = np.array(samples(2000, 1.0, seed=1))
    b = np.array(samples(2000, 1.2, seed=2))
    ratio, low, high = bootstrap_median_ratio(a, b, resamples=500)
    assert low < 1.2 < high and low < ratio < high and high - low < 0.05
    with pytest.raises(ValueError):
        bootstrap_median_ratio(np.zeros(10), b)


def test_same_distribution_is_not_a_regression():
    for seed in range(5):
        c = compare_samples(samples(1000, 1.0, seed=seed), samples(1000, 1.0, seed=seed + 100))
        assert not c.regression and c.verdict in (Verdict.NO_CHANGE, Verdict.WITHIN_TOLERANCE)
        assert c.ratio_ci_low < 1.0 < c.ratio_ci_high or abs(c.change_pct) < 1


def test_a_real_slowdown_is_a_regression_and_a_small_one_is_within_tolerance():
    slow = compare_samples(samples(500, 1.0, seed=1), samples(500, 1.10, seed=2))
    assert slow.verdict is Verdict.REGRESSION and slow.regression and slow.p_value < 1e-6
    assert slow.change_pct == pytest.approx(10, abs=2) and slow.effect_size > 0.9 and slow.ratio_ci_low > 1.05
    small = compare_samples(samples(5000, 1.0, seed=1), samples(5000, 1.02, seed=2))
    assert small.verdict is Verdict.WITHIN_TOLERANCE and small.significant and not small.regression
    assert compare_samples(samples(500, 1.0, seed=1), samples(500, 1.02, seed=2), tolerance_pct=1).regression
    fast = compare_samples(samples(500, 1.0, seed=1), samples(500, 0.8, seed=2))
    assert fast.verdict is Verdict.IMPROVEMENT and not fast.regression


def test_a_few_noisy_samples_are_not_enough_to_call_a_regression():
    # 12 % slower at the median on 25 very noisy samples: not significant, so not a regression
    c = compare_samples(samples(25, 1.0, spread=0.6, seed=3), samples(25, 1.12, spread=0.6, seed=4))
    assert not c.significant and c.verdict is Verdict.NO_CHANGE


def test_bad_inputs():
    with pytest.raises(InputError, match="at least 20"):
        compare_samples([1.0] * 5, [1.0] * 50)
    with pytest.raises(InputError, match="tolerance"):
        compare_samples(samples(50), samples(50), tolerance_pct=-1)
    with pytest.raises(InputError, match="alpha"):
        compare_samples(samples(50), samples(50), alpha=1.5)


def test_bootstrap_median_interval_holds_the_median_and_is_seeded() -> None:
    values = np.random.default_rng(0).lognormal(0, 0.2, 50)
    med, low, high = bootstrap_median(values, resamples=500, seed=1)
    assert low <= med <= high and med == pytest.approx(float(np.median(values)))
    assert bootstrap_median(values, resamples=500, seed=1) == (med, low, high)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_median(np.array([]))
