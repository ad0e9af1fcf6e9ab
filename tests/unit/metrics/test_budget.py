import pytest

from edgeopt.metrics.budget import check_fps


def test_budget_pass_with_headroom():
    b = check_fps(30, "p99", 25.0, True)
    assert b.passed and b.budget_ms == pytest.approx(33.3333, rel=1e-4)
    assert b.headroom_pct == pytest.approx((1000 / 30 - 25) / (1000 / 30) * 100)


def test_budget_fail_names_values():
    b = check_fps(60, "p95", 20.0, True)
    assert not b.passed and b.headroom_pct < 0 and "20.000 ms exceeds the 16.667 ms" in b.reason


def test_unsupported_percentile_cannot_pass():
    b = check_fps(30, "p99", 1.0, False)
    assert not b.passed and "not supported" in b.reason
