"""Bench and sweep results to MLflow (issue 16, item 11): flat params/metrics always; the real MLflow file store
when mlflow is installed (the [mlflow] extra, mlflow-skinny), else that test skips with the reason."""

from __future__ import annotations

import sys

import pytest

from edgeopt.cli.main import main
from edgeopt.sinks.mlflow_results import bench_metrics, bench_params, log_bench, log_sweep, sweep_metrics
from edgeopt.sweep.result import Level, SweepResult
from tests.synthetic_results import bench_result, samples

MLFLOW_MISSING = "mlflow is not installed: pip install 'edgeopt[mlflow]' (mlflow-skinny, ~1 min) to run this test"


def _sweep() -> SweepResult:
    def level(recipe: str, latency: float, retention: float) -> Level:
        return Level(recipe=recipe, runtime="onnxruntime", runtime_version="1.0", artifact=f"/o/{recipe}.onnx",
                     size_bytes=4_000_000, latency_ms=latency, latency_ms_p99=latency * 1.2, memory_mb_peak=80.0,
                     energy_mj=None, energy_source=None, metric="top1_agreement", metric_value=retention,
                     retention=retention, meets_retention=retention >= 0.99, meets_budget=True,
                     passed=retention >= 0.99, valid=True, cached=False)
    levels = [level("fp32", 2.0, 1.0), level("int8", 0.8, 0.995)]
    return SweepResult(model="/m/net.onnx", model_sha256="ab" * 32, target="local", runner="local",
                       metric="top1_agreement", output="logits", eval_samples=64, min_retention=0.99, fps=None,
                       objective="latency", runtimes=["onnxruntime"], levels=levels, pareto=levels,
                       recommendation=None, reason="test", int8_search=None, plot=None, out_dir="/o", seconds=1.0,
                       warnings=[])


def test_bench_and_sweep_params_and_metrics_are_flat():
    r = bench_result(samples(200, 1.0))
    params, metrics = bench_params(r), bench_metrics(r)
    assert params["model"] == "net.onnx" and params["batch"] == "1" and all(isinstance(v, str) for v in params.values())
    assert metrics["latency_ms_p99"] == pytest.approx(r.latency_ms.p99) and metrics["valid"] == 1.0
    sm = sweep_metrics(_sweep())
    assert sm["int8/onnxruntime.latency_ms_p50"] == 0.8 and sm["fp32/onnxruntime.retention"] == 1.0


def test_bench_mlflow_flag_without_mlflow_exits_2_before_measuring(monkeypatch, capsys, tiny_cnn):
    monkeypatch.setitem(sys.modules, "mlflow", None)
    assert main(["bench", str(tiny_cnn), "--mlflow", "default", "--no-history"]) == 2
    assert "pip install 'edgeopt[mlflow]'" in capsys.readouterr().err


def test_bench_and_sweep_to_a_local_file_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow", reason=MLFLOW_MISSING)
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    store = (tmp_path / "mlruns").as_uri()
    run = MlflowClient(tracking_uri=store).get_run(log_bench(bench_result(), tracking_uri=store, experiment="b"))
    assert run.data.tags["edgeopt.kind"] == "bench" and "latency_ms_p50" in run.data.metrics
    run = MlflowClient(tracking_uri=store).get_run(log_sweep(_sweep(), tracking_uri=store, experiment="s"))
    assert run.data.params["target"] == "local" and run.data.metrics["int8/onnxruntime.passed"] == 1.0
