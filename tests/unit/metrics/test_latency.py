import numpy as np
import pytest

from edgeopt.metrics.latency import latency_stats, percentile_key, required_samples, supported


def test_support_rule_matches_documented_minimums():
    assert [required_samples(q) for q in (0.5, 0.9, 0.95, 0.99, 0.999)] == [2, 10, 20, 100, 1000]
    assert supported(99)["p99"] is False and supported(100)["p99"] is True
    assert supported(999)["p999"] is False and supported(1000)["p999"] is True


def test_nearest_rank_percentiles_are_observed_samples():
    samples = list(range(1_000_000, 101_000_000, 1_000_000))  # 1..100 ms
    s = latency_stats(samples)
    assert (s.p50, s.p90, s.p95, s.p99) == (50.0, 90.0, 95.0, 99.0)
    assert s.p999 == 100.0 and s.min == 1.0 and s.max == 100.0
    assert s.mean == pytest.approx(50.5)
    assert s.std == pytest.approx(np.std(np.arange(1, 101), ddof=1))


def test_empty_samples_refused():
    with pytest.raises(ValueError):
        latency_stats([])


@pytest.mark.parametrize("text,key", [("p99", "p99"), ("99", "p99"), ("P99.9", "p999"), ("99.9", "p999"),
                                      ("p50", "p50")])
def test_percentile_key(text, key):
    assert percentile_key(text) == key


def test_unknown_percentile_lists_known():
    with pytest.raises(ValueError, match="p50, p90, p95, p99, p999"):
        percentile_key("p97")
