"""MLflow export: params, per-device metrics and the reports as artifacts, into a local file store."""

from __future__ import annotations

import sys

import pytest

from edgeopt import qualify
from edgeopt.errors import InputError
from edgeopt.qualify import QualifySpecError
from edgeopt.reports import write_reports
from edgeopt.sinks.mlflow_sink import log_qualify, qualify_metrics, qualify_params, require_mlflow
from tests.unit.reports.builders import device, qualify_result


def test_params_and_metrics_are_flat_and_per_device():
    result = qualify_result([device("board-1"), device("pi", error="timeout")])
    params = qualify_params(result)
    assert params["spec"] == "demo" and params["model_sha256"] == "ab" * 32 and params["devices"] == "board-1,pi"
    assert params["measure.iterations"] == "200" and all(isinstance(v, str) for v in params.values())
    metrics = qualify_metrics(result)
    assert metrics["passed"] == 0.0 and metrics["exit_code"] == 1.0  # one of two devices ran: exit 1, not 3
    assert metrics["board-1.gate.latency"] == 1.0 and metrics["board-1.gate.model_size"] == 0.0
    assert metrics["board-1.latency_ms_p99"] == pytest.approx(result.devices[0].bench.latency_ms.p99)
    assert metrics["board-1.energy_is_estimate"] == 1.0 and "board-1.co2_g_per_million" in metrics
    assert metrics["pi.gate.latency"] == 0.0 and "pi.latency_ms_p99" not in metrics


def test_missing_mlflow_is_a_clear_input_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow now raises ImportError, as when not installed
    with pytest.raises(InputError, match=r"pip install 'edgeopt\[mlflow\]'"):
        require_mlflow()
    spec = tmp_path / "s.yaml"
    spec.write_text("name: s\nmodel: {zoo: mobilenet-tiny}\ngates: {latency: {max_ms: 5}}\n"
                    "sinks:\n  mlflow: {experiment: e}\n")
    with pytest.raises(QualifySpecError, match=r"s.yaml:5: sinks.mlflow: .*mlflow"):
        qualify(spec, report_dir=tmp_path / "r", record=False)  # refused before any device work
    assert not (tmp_path / "r").exists()


def test_log_to_a_local_file_store(tmp_path, monkeypatch):
    pytest.importorskip("mlflow", reason="mlflow is not installed (pip install 'edgeopt[mlflow]')")
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    store = (tmp_path / "mlruns").as_uri()
    result = qualify_result([device("board-1")])
    paths = write_reports(result, tmp_path / "report")
    result = result.model_copy(update={"reports": {k: str(v) for k, v in paths.items()}})
    run_id = log_qualify(result, tracking_uri=store, experiment="edgeopt-test")
    run = MlflowClient(tracking_uri=store).get_run(run_id)
    assert run.data.params["spec"] == "demo" and run.data.tags["edgeopt.verdict"] == "fail"
    assert run.data.metrics["board-1.gate.latency"] == 1.0
    artifacts = {a.path for a in MlflowClient(tracking_uri=store).list_artifacts(run_id, "report")}
    assert artifacts == {"report/result.json", "report/report.html", "report/junit.xml", "report/summary.md"}
