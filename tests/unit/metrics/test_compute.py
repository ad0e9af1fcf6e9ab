import datetime as dt

from edgeopt.enums import Precision
from edgeopt.metrics.compute import MetricInputs, build_result
from edgeopt.metrics.result import ModelInfo
from edgeopt.targets.schema import Target
from edgeopt_agent.protocol import RawRun, Request

TARGET = Target(
    name="t", description="test target", arch="x86_64", accelerator="cpu",
    peak_fp32_tflops={"value": 0.1, "source": "test"}, memory_gb={"value": 1, "source": "test"},
    memory_bandwidth_gbps={"value": 10, "source": "test"}, tdp_w={"value": 5, "source": "test"},
    runtimes=["onnxruntime"], precisions=["fp32"], default_fps=30,
)


def _raw(n: int, ms: float = 2.0, truncated: bool = False, batch: int = 1) -> RawRun:
    req = Request(model_path="m.onnx", iterations=n, batch=batch, min_duration_s=0.0)
    return RawRun(status="ok", request=req.to_dict(), runtime={"name": "onnxruntime", "version": "1"},
                  samples_ns=[int(ms * 1e6)] * n, timed_wall_s=n * ms / 1000, timed_inferences=n,
                  warmup_done={"iterations": 10, "duration_s": 0.02}, load_ms=5.0, first_inference_ms=3.0,
                  memory_kb={"baseline": 10240, "peak": 30720}, truncated=truncated)


def _ctx(**kw) -> MetricInputs:
    base = dict(model=ModelInfo(path="m.onnx", sha256="0" * 64, size_bytes=10, params=1), target=TARGET,
                runner="local", edgeopt_version="0", flops_per_inference=10_000_000, precision=Precision.FP32,
                fps=30.0, percentile="p99", started_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    base.update(kw)
    return MetricInputs(**base)


def test_valid_run_computes_every_figure():
    r = build_result(_raw(200, batch=2), _ctx())
    assert r.valid and r.passed and r.invalid_reasons == []
    assert r.latency_ms.p50 == 2.0
    assert r.throughput_ips == 1000.0  # 500 inferences/s x batch 2
    assert r.cold_start_ms.total == 8.0
    assert (r.memory_mb.baseline, r.memory_mb.peak, r.memory_mb.delta) == (10.0, 30.0, 20.0)
    assert r.compute.achieved_gflops == 5.0 and r.compute.pct_of_peak == 5.0  # 10 MFLOP x 500/s vs 100 GFLOP/s
    assert r.fps_budget.passed and "p999" in r.warnings[0]


def test_too_few_samples_for_the_budget_percentile_invalidates_the_run():
    r = build_result(_raw(50), _ctx())
    assert not r.valid and "p99 needs at least 100 samples, the run has 50" in r.invalid_reasons[0]
    assert not r.fps_budget.passed and not r.passed


def test_truncated_run_is_invalid():
    r = build_result(_raw(500, truncated=True), _ctx(percentile="p50"))
    assert not r.valid and "watchdog" in r.invalid_reasons[0]


def test_budget_failure_is_not_a_pass_and_null_budget_is_none():
    assert not build_result(_raw(200, ms=40.0), _ctx()).passed
    assert build_result(_raw(200), _ctx(fps=None)).fps_budget is None
