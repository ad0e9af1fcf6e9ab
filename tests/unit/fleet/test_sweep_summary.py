"""The fleet sweep's summary: per level the devices' p50 spread, each device's recommendation, agreement."""

from __future__ import annotations

from edgeopt.sweep.fleet.result import FleetSweepRow, fleet_sweep_exit_code, summarize
from edgeopt.sweep.result import Level, SweepResult


def _level(recipe: str, ms: float, retention: float = 1.0, passed: bool = True) -> Level:
    return Level.model_construct(recipe=recipe, runtime="onnxruntime", latency_ms=ms, retention=retention,
                                 passed=passed)


def _row(name: str, rec: str | None, fp32_ms: float, fp16_ms: float, fp16_retention: float = 0.999) -> FleetSweepRow:
    result = SweepResult.model_construct(levels=[_level("fp32", fp32_ms), _level("fp16", fp16_ms, fp16_retention,
                                                                                  passed=fp16_retention >= 0.99)])
    return FleetSweepRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="ok", seconds=9.0,
                         result=result, recommendation=rec)


def _error(name: str) -> FleetSweepRow:
    return FleetSweepRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="error", error="down",
                         error_kind="unreachable", seconds=0.1)


def test_spread_per_level_and_agreement():
    rows = [_row("pi-1", "fp16/onnxruntime", 10.0, 6.0), _row("pi-2", "fp16/onnxruntime", 12.0, 7.0),
            _row("pi-3", "fp16/onnxruntime", 11.0, 9.0), _error("pi-4")]
    s = summarize(rows)
    assert s.devices == 4 and s.ok == 3 and s.failed == ["pi-4"]
    fp32, fp16 = s.levels
    assert (fp32.recipe, fp32.devices, fp32.median_ms, fp32.min_device, fp32.max_device) == \
        ("fp32", 3, 11.0, "pi-1", "pi-2")
    assert (fp16.median_ms, fp16.min_ms, fp16.max_ms, fp16.max_device) == (7.0, 6.0, 9.0, "pi-3")
    assert fp16.passed_on == ["pi-1", "pi-2", "pi-3"] and fp16.retention_min == 0.999
    assert s.agree and s.recommendation == "fp16/onnxruntime"
    assert s.recommendations == {"pi-1": "fp16/onnxruntime", "pi-2": "fp16/onnxruntime", "pi-3": "fp16/onnxruntime"}
    assert fleet_sweep_exit_code(rows) == 1  # pi-4 could not run
    assert fleet_sweep_exit_code(rows[:3]) == 0


def test_disagreement_and_no_recommendation():
    rows = [_row("pi-1", "fp16/onnxruntime", 10.0, 6.0), _row("pi-2", "fp32/onnxruntime", 10.0, 6.0, 0.9)]
    s = summarize(rows)
    assert not s.agree and s.recommendation is None
    assert s.levels[1].passed_on == ["pi-1"] and s.levels[1].retention_min == 0.9
    none = [_row("pi-1", None, 10.0, 6.0)]
    assert not summarize(none).agree and fleet_sweep_exit_code(none) == 1
    assert fleet_sweep_exit_code([_error("a"), _error("b")]) == 3
    assert not summarize([_error("a")]).agree
