"""The unit-to-unit view from genuine BenchResults: medians, spread, outliers with the cause the agent saw."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from edgeopt.bench.fleet import aggregate, conditions
from edgeopt.bench.fleet.junit import render_fleet_junit
from edgeopt.fleet import FleetRow, fleet_exit_code
from edgeopt.fleet.result import FleetResult
from tests.synthetic_results import bench_result, samples

CALM = {"governor": "performance", "temperature_c": {"cpu-thermal": 48.0}, "load_avg_1m": 0.1, "cores": 4,
        "cpu_mhz": 2400.0, "cpu_cur_mhz": 2400.0, "throttling": {}}


def _row(name: str, median_ms: float, env: dict | None = None, seed: int = 0) -> FleetRow:
    result = bench_result(samples(400, median_ms, 0.02, seed=seed))
    result = result.model_copy(update={"environment": {**CALM, **(env or {})}})
    return FleetRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="ok", seconds=3.0, result=result)


def _error(name: str, kind: str = "unreachable") -> FleetRow:
    return FleetRow(device=name, target="rpi5", runner=f"ssh:pi@{name}:22", status="error", error="boom",
                    error_kind=kind, seconds=0.1)


def test_median_spread_and_a_hot_throttled_outlier():
    rows = [_row("pi-1", 10.0, seed=1), _row("pi-2", 10.2, seed=2), _row("pi-3", 9.9, seed=3),
            _row("pi-4", 14.0, {"temperature_c": {"cpu-thermal": 84.5}, "throttling": {"rpi_flags": 0x50005}}, 4),
            _error("pi-5")]
    rows, agg = aggregate(rows)
    assert agg.devices == 5 and agg.ok == 4 and agg.failed == ["pi-5"]
    assert abs(agg.p50.median_ms - 10.1) < 0.2 and agg.p50.max_device == "pi-4" and agg.p50.min_device == "pi-3"
    assert 0.1 < agg.p50.cv < 0.25
    slow = [o for o in agg.outliers if o.metric == "p50"]
    assert [o.device for o in slow] == ["pi-4"] and slow[0].deviation_pct > 30
    causes = " | ".join(slow[0].likely_causes)
    assert "temperature 84 degC" in causes and "under-voltage now" in causes and "throttled now" in causes
    assert rows[3].conditions and rows[0].conditions == []
    assert fleet_exit_code(rows) == 1


def test_a_condition_every_device_shares_is_not_blamed():
    ondemand = {"governor": "ondemand"}
    rows = [_row("a", 5.0, ondemand, 1), _row("b", 5.1, ondemand, 2), _row("c", 5.0, ondemand, 3),
            _row("d", 8.0, {**ondemand, "load_avg_1m": 3.5}, 4)]
    _, agg = aggregate(rows)
    (out,) = [o for o in agg.outliers if o.metric == "p50"]
    assert out.device == "d" and len(out.likely_causes) == 1 and "load average 3.50 on 4 cores" in out.likely_causes[0]
    assert any("governor 'ondemand'" in text for _, text in conditions(rows[0].result.environment))


def test_two_devices_have_no_outlier_and_all_errors_exit_3():
    _, agg = aggregate([_row("a", 1.0), _row("b", 3.0)])
    assert agg.outliers == [] and agg.p50.cv is not None
    rows, agg = aggregate([_error("a"), _error("b", "deadline")])
    assert agg.p50 is None and fleet_exit_code(rows) == 3
    assert fleet_exit_code([_row("a", 1.0)]) == 0


def test_junit_has_a_case_per_device_and_gate():
    rows, agg = aggregate([_row("a", 1.0), _error("b")])
    result = FleetResult(edgeopt_version="0", fleet_id="f1", model="/m.onnx", model_sha256="ab", selection=["all"],
                         executor="local", jobs=2, deadline_s=60, started_at="2026-01-01T00:00:00+00:00", seconds=3,
                         rows=rows, aggregate=agg, exit_code=fleet_exit_code(rows))
    root = ET.fromstring(render_fleet_junit(result))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"edgeopt.fleet.a", "edgeopt.fleet.b"}
    assert [c.get("name") for c in suites["edgeopt.fleet.b"].iter("testcase")] == ["run", "fps_budget"]
    assert suites["edgeopt.fleet.b"].get("errors") == "2" and root.get("errors") == "2"
    assert suites["edgeopt.fleet.a"].get("failures") == "0"
