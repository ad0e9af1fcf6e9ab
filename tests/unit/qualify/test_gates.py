"""The verdict engine on genuine results: every gate passes and fails where it should, and an invalid run cannot
pass a gate it cannot support."""

from __future__ import annotations

import pytest

from edgeopt.history import compare_samples
from edgeopt.qualify.gate_spec import Gates
from edgeopt.qualify.gates import GateContext, error_results, evaluate
from edgeopt.qualify.result import GateStatus, RegressionInfo, RetentionResult
from tests.synthetic_results import MEASURED_POWER, NO_SENSOR, bench_result, frames, samples


def gates(**kw) -> Gates:
    return Gates.model_validate(kw)


def one(g: Gates, **ctx) -> object:
    ctx.setdefault("bench", bench_result())
    (result,) = evaluate(g, GateContext(device="dev", **ctx))
    return result


def test_latency_gate_passes_and_fails_on_the_percentile():
    bench = bench_result(samples(200, median_ms=1.0))
    ok = one(gates(latency={"percentile": "p99", "max_ms": 5}), bench=bench)
    assert ok.status is GateStatus.PASS and ok.measured == pytest.approx(bench.latency_ms.p99)
    assert ok.comparison == "<=" and ok.unit == "ms" and "latency p99" in ok.detail
    bad = one(gates(latency={"percentile": "p50", "max_ms": 0.5}), bench=bench)
    assert bad.status is GateStatus.FAIL and ">" in bad.detail


def test_an_invalid_percentile_run_cannot_pass_whatever_its_numbers():
    short = bench_result(samples(50, median_ms=1.0))  # p99 needs 100 samples
    assert not short.percentiles_supported["p99"].supported and not short.valid
    for g in (gates(latency={"percentile": "p99", "max_ms": 1e9}), gates(fps={"fps": 0.001, "percentile": "p99"})):
        r = one(g, bench=short)
        assert r.status is GateStatus.FAIL and "INVALID" in r.detail and "needs at least 100" in r.detail
    # the same run supports p50, so a p50 gate is judged on its number
    assert one(gates(latency={"percentile": "p50", "max_ms": 1e9}), bench=short).status is GateStatus.PASS


def test_a_truncated_run_fails_the_gates_that_depend_on_it():
    cut = bench_result(truncated=True)
    g = gates(latency={"max_ms": 1e9}, throughput={"min_ips": 1}, memory={"max_mb": 1e6}, model_size={"max_mb": 1e6})
    got = {r.gate: r for r in evaluate(g, GateContext(device="dev", bench=cut))}
    for name in ("latency", "throughput", "memory"):
        assert got[name].status is GateStatus.FAIL and "watchdog" in got[name].detail
    assert got["model_size"].status is GateStatus.PASS  # the file's size does not depend on the run


def test_fps_memory_size_cold_start_throughput():
    bench = bench_result(samples(200, median_ms=10.0), memory_kb=(40 * 1024, 70 * 1024), size_bytes=3 << 20)
    cases = [
        (gates(fps={"fps": 50}), GateStatus.PASS, 20.0),
        (gates(fps={"fps": 200}), GateStatus.FAIL, 5.0),
        (gates(memory={"max_mb": 31}), GateStatus.PASS, 31),
        (gates(memory={"max_mb": 29}), GateStatus.FAIL, 29),
        (gates(memory={"max_mb": 69, "basis": "process"}), GateStatus.FAIL, 69),
        (gates(model_size={"max_mb": 3}), GateStatus.PASS, 3),
        (gates(model_size={"max_mb": 2.9}), GateStatus.FAIL, 2.9),
        (gates(cold_start={"max_ms": 55}), GateStatus.PASS, 55),
        (gates(cold_start={"max_ms": 54}), GateStatus.FAIL, 54),
        (gates(throughput={"min_ips": 90}), GateStatus.PASS, 90),
        (gates(throughput={"min_ips": 110}), GateStatus.FAIL, 110),
    ]
    for g, status, threshold in cases:
        r = one(g, bench=bench)
        assert (r.status, r.threshold) == (status, pytest.approx(threshold)), (g, r)
    assert one(gates(memory={"max_mb": 31}), bench=bench).measured == pytest.approx(30.0)
    unknown = bench_result(memory_kb=(None, None))
    assert "not measured" in one(gates(memory={"max_mb": 1e6}), bench=unknown).detail


def test_energy_gate_says_when_it_judged_an_estimate():
    estimate = bench_result(power=NO_SENSOR)
    r = one(gates(energy={"max_mj": 1e6}), bench=estimate)
    assert r.status is GateStatus.PASS and r.estimate and r.detail.startswith("ESTIMATE")
    strict = one(gates(energy={"max_mj": 1e6, "require_measured": True}), bench=estimate)
    assert strict.status is GateStatus.FAIL and "requires a measurement" in strict.detail
    measured = one(gates(energy={"max_mj": 1e6, "require_measured": True}), bench=bench_result(power=MEASURED_POWER))
    assert measured.status is GateStatus.PASS and not measured.estimate and measured.detail.startswith("measured")
    too_much = one(gates(energy={"max_mj": 1e-6}), bench=bench_result(power=MEASURED_POWER))
    assert too_much.status is GateStatus.FAIL
    missing = one(gates(energy={"max_mj": 1}), bench=bench_result())  # energy disabled: nothing to judge
    assert missing.status is GateStatus.FAIL and "not measured" in missing.detail


def test_deadline_miss_gate_needs_enough_frames_to_resolve_its_rate():
    g = gates(deadline_miss={"fps": 30, "max_pct": 1})
    ok = bench_result(frames=frames(30, 100, misses=1), pacing_fps=30)
    assert one(g, paced=ok).status is GateStatus.PASS
    over = bench_result(frames=frames(30, 100, misses=2), pacing_fps=30)
    r = one(g, paced=over)
    assert r.status is GateStatus.FAIL and r.measured == pytest.approx(2.0) and "2/100 frames late" in r.detail
    strict = gates(deadline_miss={"fps": 30, "max_pct": 0.1})  # 0.1 % needs 1000 frames
    few = one(strict, paced=bench_result(frames=frames(30, 500, misses=0), pacing_fps=30))
    assert few.status is GateStatus.FAIL and "INVALID" in few.detail and "needs >= 1000" in few.detail
    assert one(g).status is GateStatus.FAIL  # no paced run at all


def test_retention_gate():
    g = gates(retention={"min_ratio": 0.98})

    def ret(value, data="eval.npz"):
        return RetentionResult(metric="top1_agreement", reference_value=1.0, candidate_value=value, retention=value,
                               samples=64, data=data, evaluated_on="host-onnxruntime", reference_path="a",
                               candidate_path="b", notes=[] if value is not None else ["not classifier-like"])

    assert one(g, retention=ret(0.99)).status is GateStatus.PASS
    assert one(g, retention=ret(0.97)).status is GateStatus.FAIL
    assert "indicative" in one(g, retention=ret(1.0, data="random")).detail
    none = one(g, retention=ret(None))
    assert none.status is GateStatus.FAIL and "not classifier-like" in none.detail
    assert one(g).status is GateStatus.FAIL


def test_regression_gate():
    base = samples(400, 1.0, seed=1)
    same = bench_result(samples(400, 1.0, seed=2))
    slow = bench_result(samples(400, 1.3, seed=3))
    g = gates(regression={"baseline": "rel-1", "tolerance_pct": 5})

    def info(bench):
        return RegressionInfo(baseline="rel-1", baseline_run=7,
                              comparison=compare_samples(base, bench.samples_ms, tolerance_pct=5))

    assert one(g, bench=same, regression=info(same)).status is GateStatus.PASS
    r = one(g, bench=slow, regression=info(slow))
    assert r.status is GateStatus.FAIL and "REGRESSION vs run 7" in r.detail and r.measured > 25
    missing = one(g, bench=same, regression=RegressionInfo(baseline="rel-1", baseline_run=None, comparison=None))
    assert missing.status is GateStatus.FAIL and "edgeopt baseline set" in missing.detail
    lenient = gates(regression={"baseline": "rel-1", "if_missing": "pass"})
    assert one(lenient, bench=same).status is GateStatus.PASS


def test_device_errors_make_every_gate_an_error():
    g = gates(latency={"max_ms": 5}, retention={"min_ratio": 0.9}, fps={"fps": 10})
    rows = error_results(g, "pi", "connection refused")
    assert [r.gate for r in rows] == ["latency", "fps", "retention"]
    assert all(r.status is GateStatus.ERROR and "connection refused" in r.detail for r in rows)
    assert rows[1].threshold == pytest.approx(100.0) and rows[2].comparison == ">="


def test_a_run_on_the_wrong_hardware_fails_the_target_check_unless_allowed():
    from edgeopt.qualify.gate_rows import target_row

    bench = bench_result().model_copy(update={"target_mismatch": ["architecture: the device is x86_64, target "
                                                                  "rpi5 is aarch64"]})

    def target_check(b, allowed):  # noqa: ANN001, ANN202 - as qualify/flow.py calls it for every kind
        return target_row("dev", b.target_mismatch, b.target, allowed=allowed)

    failed = target_check(bench, allowed=False)
    assert failed is not None and failed.status is GateStatus.FAIL and failed.gate == "target"
    assert "TARGET MISMATCH" in failed.detail and "allow_target_mismatch: true" in failed.detail
    allowed = target_check(bench, allowed=True)
    assert allowed is not None and allowed.status is GateStatus.PASS and "dry run" in allowed.detail
    assert target_check(bench_result(), allowed=False) is None
