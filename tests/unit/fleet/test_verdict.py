"""A fleet row says what its verdict was judged against and keeps the device's warnings (issue 23, items 9, 12)."""

from __future__ import annotations

from edgeopt.bench.fleet import aggregate
from edgeopt.fleet import FleetRow
from edgeopt.fleet.verdict import budget_text, device_warnings, verdict_text
from edgeopt.metrics.budget import check_fps
from tests.synthetic_results import bench_result, samples


def _result(**update):
    return bench_result(samples(400, 66.6, 0.01)).model_copy(update=update)


def test_a_fail_names_percentile_budget_and_fps():
    over = _result(fps_budget=check_fps(15, "p99", 66.8, True))
    assert verdict_text(over) == "FAIL: p99 66.800 ms > 66.667 ms budget at 15 FPS"
    within = _result(fps_budget=check_fps(30, "p99", 12.1, True))
    assert verdict_text(within) == "pass: p99 12.100 ms <= 33.333 ms budget at 30 FPS"
    unsupported = check_fps(30, "p999", 12.1, False)
    assert "not supported by the run's sample count" in budget_text(unsupported)
    assert verdict_text(_result(fps_budget=None)) == "pass (no budget)"
    invalid = _result(valid=False, invalid_reasons=["stopped by the watchdog"], fps_budget=None)
    assert verdict_text(invalid) == "FAIL: invalid run (stopped by the watchdog)"


def test_the_device_warnings_reach_the_row_and_the_aggregate_names_nothing_twice():
    mismatched = _result(target_mismatch=["architecture: the device is x86_64, target rpi5 is aarch64"],
                         valid=False, invalid_reasons=["too few samples for p999"], warnings=["energy estimated"])
    warnings = device_warnings(mismatched)
    assert warnings[0].startswith("TARGET MISMATCH") and "x86_64" in warnings[0]
    assert "energy estimated" in warnings and "invalid run: too few samples for p999" in warnings
    rows, _ = aggregate([FleetRow(device="pi-1", target="rpi5", runner="ssh:pi@pi-1:22", status="ok", seconds=1.0,
                                  result=mismatched)])
    assert rows[0].warnings == warnings and rows[0].verdict.startswith("FAIL: invalid run")
    assert device_warnings(None) == []
