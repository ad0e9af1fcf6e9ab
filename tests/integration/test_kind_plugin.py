"""Issue 30's proof for a model kind: a plug-in written to a temp directory (``streamer``: a stateful streaming
encoder judged by its real-time factor ``rtf``; its kind descriptor, workload model, raw-run -> cells hook, format
and agent runtime; tests/plugin_kit/) goes through ``bench``, the history, ``compare``, qualify's ``metric`` gate
and the HTML / JUnit reports with no edit to edgeopt. Real CLI calls, the real agent as the local runner's
subprocess, the plug-in's numpy runtime doing the work."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from tests.plugin_kit import kind_plugin

FAST = ["--iterations", "120", "--min-duration", "0", "--warmup", "2", "--no-energy"]


@pytest.fixture()
def streamer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The plug-in on EDGEOPT_PLUGIN_PATH and a model of its kind; returns the model."""
    root = kind_plugin(tmp_path / "plugin")
    monkeypatch.setattr(sys, "path", list(sys.path))  # restored afterwards: later tests do not see the plug-in
    monkeypatch.setenv("EDGEOPT_PLUGIN_PATH", str(root))
    model = tmp_path / "encoder.stream"
    model.write_text(json.dumps({"frame_samples": 320, "state": 96}))
    return model


def _spec(tmp_path: Path, model: Path, name: str, gates: str, workload: str = "workload: {frame_ms: 10}\n") -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: {name}
        model: {{path: {model}}}
        {workload}
        measure: {{iterations: 120, min_duration_s: 0, warmup: 2, energy: false}}
        gates:
          metric:
        """) + textwrap.indent(textwrap.dedent(gates), "    "))
    return spec


def test_a_model_kind_plug_in_joins_bench_history_compare_qualify_and_the_reports(streamer, tmp_path, capsys):
    db = str(tmp_path / "history.sqlite3")
    runs = []
    for _ in range(2):
        code = main(["bench", str(streamer), *FAST, "--workload", "frame_ms=10", "--history-db", db, "--json"])
        captured = capsys.readouterr()
        assert code == 0, captured.err[-2000:]
        result = json.loads(captured.out)
        assert (result["kind"], result["model_kind"], result["model_format"]) == ("kind_bench", "streamer", "stream")
        assert result["runtime"]["name"] == "streamrt" and result["workload"] == {"frame_ms": 10} and result["valid"]
        (cell,) = result["cells"]
        assert cell["key"] == "frame10ms" and cell["axes"] == {"frame_ms": 10}
        rtf = next(s for s in cell["series"] if s["metric"] == "rtf")
        lat = next(s for s in cell["series"] if s["metric"] == "frame_latency_ms")
        assert rtf["unit"] == "ratio" and 0 < rtf["summary"]["p50"] <= rtf["summary"]["p99"]
        assert rtf["summary"]["p50"] == pytest.approx(lat["summary"]["p50"] / 10)  # rtf = latency / frame duration
        runs.append(int(captured.err.split("recorded as history run ")[1].split()[0]))

    assert main(["history", "--history-db", db, "--json"]) == 0
    listed = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(runs) <= set(listed) and {listed[r]["runtime"] for r in runs} == {"streamrt"}
    from edgeopt.history import HistoryStore

    store = HistoryStore(db)
    stored = store.kind_result(runs[0])
    assert stored is not None and stored.model_kind == "streamer" and stored.workload == {"frame_ms": 10}
    assert store.kind_of(store.get(runs[0])) == "streamer"
    assert len(store.readings(runs[0], "rtf", "frame10ms")) >= 120  # every frame's reading, for compare

    code = main(["compare", str(runs[0]), str(runs[1]), "--history-db", db, "--json"])
    comparison = json.loads(capsys.readouterr().out)
    assert code == (1 if comparison["regression"] else 0)  # the verdict is timing's; the shape is the point
    (judged,) = comparison["cells"]
    assert judged["cell"] == "frame10ms" and [m["metric"] for m in judged["metrics"]] == ["rtf"]
    assert judged["metrics"][0]["verdict"] is not None and judged["metrics"][0]["p_value"] is not None
    code = main(["compare", str(runs[0]), str(runs[1]), "--history-db", db])  # the plug-in's own table
    table = capsys.readouterr().out
    assert code == (1 if comparison["regression"] else 0)
    assert "stream frame10ms: rtf " in table and table.rstrip().endswith(("stream regression", "stream unchanged"))
    assert "noise floor" not in table  # not the built-in per-cell table

    passing = _spec(tmp_path, streamer, "stream-pass", "rtf: {stat: p99, max: 1000}\n")
    code = main(["qualify", str(passing), "--report-dir", str(tmp_path / "qp"), "--history-db", db, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, [g["detail"] for d in out["devices"] for g in d["gates"]]
    (device,) = out["devices"]
    assert device["kind_bench"]["model_kind"] == "streamer" and device["history_run_id"] is not None
    assert [(g["gate"], g["status"]) for g in device["gates"]] == [("metric:rtf:p99", "pass")]

    failing = _spec(tmp_path, streamer, "stream-fail", "rtf: {stat: p50, max: 0.000000001}\n"
                                                      "frame_latency_ms: {stat: mean, max: 100000}\n")
    report = tmp_path / "qf"
    assert main(["qualify", str(failing), "--report-dir", str(report), "--history-db", db, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert [(g["gate"], g["status"]) for g in out["devices"][0]["gates"]] == [
        ("metric:rtf:p50", "fail"), ("metric:frame_latency_ms:mean", "pass")]
    html = (report / "report.html").read_text()
    junit = (report / "junit.xml").read_text()
    assert "rtf p50" in html and "frame_latency_ms mean" in html
    assert "<h3>Cells</h3>" in html and "Device error" not in html  # the device's cells, not an error note
    assert "streamer cell frame10ms: rtf p50" in (report / "summary.md").read_text()
    assert 'name="metric:rtf:p50"' in junit and 'type="GateFailed"' in junit
    assert 'name="metric:frame_latency_ms:mean"' in junit


def test_a_plug_in_kinds_spec_and_workload_are_checked_against_its_declarations(streamer, tmp_path, capsys):
    bad_metric = _spec(tmp_path, streamer, "bad-metric", "latency_ms: {stat: p50, max: 1}\n")
    assert main(["qualify", str(bad_metric), "--report-dir", str(tmp_path / "a"), "--no-history"]) == 2
    assert "kind streamer has no metric 'latency_ms'; its metrics: rtf, frame_latency_ms" in capsys.readouterr().err
    bad_stat = _spec(tmp_path, streamer, "bad-stat", "rtf: {stat: value, max: 1}\n")
    assert main(["qualify", str(bad_stat), "--report-dir", str(tmp_path / "b"), "--no-history"]) == 2
    assert "rtf has no statistic 'value': use one of p50, p90, p99, mean" in capsys.readouterr().err
    one_pass_gate = tmp_path / "latency.yaml"
    one_pass_gate.write_text(f"name: latency\nmodel: {{path: {streamer}}}\ngates: {{latency: {{max_ms: 5}}}}\n")
    assert main(["qualify", str(one_pass_gate), "--report-dir", str(tmp_path / "c"), "--no-history"]) == 2
    assert "gate 'latency' does not apply: the model is a streaming encoder (kind streamer)" in capsys.readouterr().err

    assert main(["bench", str(streamer), *FAST, "--workload", "frame_ms=0", "--no-history"]) == 2
    assert "--workload frame_ms: Input should be greater than 0" in capsys.readouterr().err
    assert main(["bench", str(streamer), *FAST, "--workload", "hop_ms=5", "--no-history"]) == 2
    assert "(kind streamer's workload fields: frame_ms)" in capsys.readouterr().err
    assert main(["bench", str(streamer), *FAST, "--batch", "1,2", "--no-history"]) == 2
    assert "--threads/--batch lists do(es) not apply" in capsys.readouterr().err
    assert main(["bench", str(tmp_path / "m.onnx"), "--workload", "frame_ms=10", "--no-history"]) == 2
    assert "--workload sets a plug-in model kind's workload" in capsys.readouterr().err


def test_the_toy_metrics_physics_makes_a_run_with_an_impossible_reading_invalid(streamer):
    """A device that reports a 0 ns frame: rtf 0 is impossible (its MetricSpec: > 0), so the run is invalid and the
    cell is marked, whatever the plug-in's cells function computed from it."""
    from edgeopt.bench.kind_bench import kind_result, parse_workload
    from edgeopt.metrics.result import ModelInfo
    from edgeopt.registry import get_kind
    from edgeopt.targets import load_registry
    from edgeopt_agent.protocol import RawRun, Request

    kind = get_kind("streamer")
    head = {"model": ModelInfo(path=str(streamer), sha256="0" * 64, size_bytes=1, params=0), "model_format": "stream",
            "runner": "local", "started_at": "2026-01-01T00:00:00+00:00"}
    request = Request(model_path=str(streamer), runtime="streamrt").to_dict()
    honest = RawRun(status="ok", request=request, runtime={"name": "streamrt", "version": "1"},
                    samples_ns=[120_000] * 30, timed_wall_s=0.01)
    lying = RawRun(**{**honest.to_dict(), "samples_ns": [0] + [120_000] * 29})
    target = load_registry().get("local")
    workload = parse_workload(kind, {"frame_ms": "10"})
    assert kind_result(kind, honest, workload, target, head).valid
    result = kind_result(kind, lying, workload, target, head)
    assert not result.valid
    assert result.invalid_reasons[0] == "cell 'frame10ms': rtf is 0 ratio (<= 0)"
    assert result.cells[0].impossible == ("rtf is 0 ratio (<= 0)",)  # its summaries hold no 0: only rtf is marked


def test_a_plug_in_kinds_flagged_workload_field_is_a_bench_flag(tmp_path: Path) -> None:
    """A workload field marked with a registry Flag is a flag of ``bench`` with no edit to edgeopt (issue 30, item
    1: the CLI flags derive from the kind's one workload model); ``--workload KEY=VALUE`` wins over it. A fresh
    process, so the command is built with the plug-in registered."""
    import os
    import subprocess

    root = kind_plugin(tmp_path / "plugin")
    cells = root / "edgeopt_testplug_kind" / "cells.py"
    text = cells.read_text()
    plain = 'frame_ms: int = Field(default=20,'
    assert plain in text
    cells.write_text("from typing import Annotated\nfrom edgeopt.registry import Flag\n" + text.replace(
        plain, 'frame_ms: Annotated[int, Flag("--frame-ms", "Streamer models: audio per frame, ms.")] = Field('
               'default=20,'))
    model = tmp_path / "encoder.stream"
    model.write_text(json.dumps({"frame_samples": 320, "state": 96}))
    env = {**os.environ, "EDGEOPT_PLUGIN_PATH": str(root)}

    def edgeopt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "edgeopt", *args], env=env, capture_output=True, text=True,
                              timeout=300, check=False)

    shown = edgeopt("bench", "--help")
    assert shown.returncode == 0 and "Streamer models: audio per frame, ms." in shown.stdout
    assert "--prompt-tokens" in shown.stdout  # the built-in kinds' flags stay
    for given, want in ((["--frame-ms", "10"], 10), (["--frame-ms", "10", "--workload", "frame_ms=15"], 15)):
        run = edgeopt("bench", str(model), *FAST, *given, "--no-history", "--json")
        assert run.returncode == 0, run.stderr[-2000:]
        assert json.loads(run.stdout)["workload"] == {"frame_ms": want}


def test_a_plug_in_kinds_device_that_cannot_run_has_each_metric_gate_errored(streamer, tmp_path, capsys):
    """The shared qualify flow turns a device that could not run into the kind's own error rows (a ``metric`` gate
    each, JUnit <error>), not the one-pass gates' rows."""
    streamer.write_text("{ not json")  # the plug-in's runtime cannot load it: the device's run fails
    spec = _spec(tmp_path, streamer, "stream-broken", "rtf: {stat: p99, max: 1000}\n")
    report = tmp_path / "qe"
    code = main(["qualify", str(spec), "--report-dir", str(report), "--no-history", "--json"])
    out = json.loads(capsys.readouterr().out)
    (device,) = out["devices"]
    assert code == 3 and device["status"] == "error" and device["error"], device
    assert [(g["gate"], g["status"]) for g in device["gates"]] == [("metric:rtf:p99", "error")]
    assert 'name="metric:rtf:p99"' in (report / "junit.xml").read_text()


def _streamer_deployment(folder: Path, model: Path, measured: dict, threads: int, workload: dict | None = None
                         ) -> Path:
    """A deployment record around a streamer model (as a sweep of the plug-in kind would write it), measured on this
    machine (``measured``: a bench result of it, for the runtime version and CPU flags) with ``threads`` and, when
    given, the ``workload`` it records (None: a record without the field, as written before it existed)."""
    import shutil

    from edgeopt.deploy import DeployedFile, Deployment, DeploymentMeasured, decision_cpu_flags, save_deployment
    from edgeopt.fsutil import sha256_file

    folder.mkdir()
    shipped = folder / model.name
    shutil.copy(model, shipped)
    save_deployment(folder, Deployment(
        name="fp32/streamrt", recipe="fp32", model=shipped.name, format="stream",
        files=(DeployedFile(path=shipped.name, sha256=sha256_file(shipped), size_bytes=shipped.stat().st_size,
                            role="model"),),
        runtime="streamrt", runtime_version=measured["runtime"]["version"], threads=threads,
        **({} if workload is None else {"workload": workload}),
        cpu_flags=tuple(decision_cpu_flags(measured["environment"].get("cpu_flags") or [])),
        measured=DeploymentMeasured(target="local", metric="rtf", min_retention=0.0, retention=1.0, latency_ms=1.0,
                                    size_bytes=shipped.stat().st_size)))
    return folder


def test_a_plug_in_kinds_deployment_runs_with_its_settings_refuses_a_conflict_and_has_its_match_row(
        streamer, tmp_path, capsys):
    """A plug-in kind's deployment keeps the promises of the built-in kinds' (issue 30, item 4): bench and qualify
    run its file with exactly its settings (threads 2 here, where the command asked for none), a flag or a spec key
    that contradicts them is exit 2 unless overridden, the result names the deployment, and each qualify device has
    a ``deployment_match`` row."""
    assert main(["bench", str(streamer), *FAST, "--no-history", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["deployment"] is None
    folder = _streamer_deployment(tmp_path / "recommended", streamer, plain, threads=2)
    assert "workload" not in json.loads((folder / "deployment.json").read_text())  # a record without the field

    assert main(["bench", str(folder), *FAST, "--no-history", "--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ran["settings"]["threads"] == 2 and ran["deployment"]["name"] == "fp32/streamrt"
    assert ran["workload"] == {"frame_ms": 20}  # it records none: the kind's default, as before the field
    assert ran["model"]["path"] == str(folder / streamer.name) and ran["warnings"] == []
    assert main(["bench", str(folder / "deployment.json"), *FAST, "--threads", "3", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "--threads 3 contradicts deployment" in err and "(threads 2)" in err, err
    assert main(["bench", str(folder), *FAST, "--threads", "3", "--override-deployment", "--no-history",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["threads"] == 3

    spec = _spec(tmp_path, folder, "stream-deployed", "rtf: {stat: p99, max: 1000}\n")
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "qd"), "--no-history", "--json"])
    out = json.loads(capsys.readouterr().out)
    (device,) = out["devices"]
    assert code == 0, [g["detail"] for g in device["gates"]]
    assert [(g["gate"], g["status"]) for g in device["gates"]] == [("metric:rtf:p99", "pass"),
                                                                   ("deployment_match", "pass")]
    assert device["kind_bench"]["settings"]["threads"] == 2
    assert device["kind_bench"]["deployment"]["name"] == "fp32/streamrt"

    clash = tmp_path / "clash.yaml"
    clash.write_text(spec.read_text().replace("measure: {", "measure: {threads: 3, "))
    assert main(["qualify", str(clash), "--report-dir", str(tmp_path / "qc"), "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "measure.threads: measure.threads 3 contradicts deployment" in err, err
    assert "override_deployment: true" in err


def test_a_plug_in_kinds_deployment_records_its_workload_and_runs_with_it(streamer, tmp_path, capsys):
    """A plug-in kind's deployment records the workload it was measured with (its kind's workload model, by field;
    frame_ms 10 here, where the kind's default is 20): bench and qualify apply it when the command sets none, a
    ``--workload`` flag or a spec ``workload:`` key that contradicts it is exit 2 naming the file, the value and the
    fix unless overridden, one that agrees runs; a recorded value the kind's model refuses is exit 2 naming the
    file."""
    assert main(["bench", str(streamer), *FAST, "--workload", "frame_ms=10", "--no-history", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    folder = _streamer_deployment(tmp_path / "recommended", streamer, plain, threads=0, workload=plain["workload"])
    record = folder / "deployment.json"
    assert json.loads(record.read_text())["workload"] == {"frame_ms": 10}

    for agreeing in ([], ["--workload", "frame_ms=10"]):
        assert main(["bench", str(folder), *FAST, *agreeing, "--no-history", "--json"]) == 0
        ran = json.loads(capsys.readouterr().out)
        assert ran["workload"] == {"frame_ms": 10} and ran["cells"][0]["key"] == "frame10ms"
        assert ran["deployment"]["name"] == "fp32/streamrt"
    assert main(["bench", str(folder), *FAST, "--workload", "frame_ms=15", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert f"--workload frame_ms=15 contradicts deployment {record} (workload.frame_ms 10)" in err, err
    assert "drop it to run what was measured, or use --override-deployment" in err and len(err.splitlines()) == 1
    assert main(["bench", str(folder), *FAST, "--workload", "frame_ms=15", "--override-deployment", "--no-history",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["workload"] == {"frame_ms": 15}

    unset = _spec(tmp_path, folder, "stream-recorded", "rtf: {stat: p99, max: 1000}\n", workload="")
    code = main(["qualify", str(unset), "--report-dir", str(tmp_path / "qr"), "--no-history", "--json"])
    (device,) = json.loads(capsys.readouterr().out)["devices"]
    assert code == 0, [g["detail"] for g in device["gates"]]
    assert device["kind_bench"]["workload"] == {"frame_ms": 10}
    assert [c["key"] for c in device["kind_bench"]["cells"]] == ["frame10ms"]
    clash = _spec(tmp_path, folder, "stream-clash", "rtf: {stat: p99, max: 1000}\n",
                  workload="workload: {frame_ms: 15}\n")
    assert main(["qualify", str(clash), "--report-dir", str(tmp_path / "qc"), "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "workload.frame_ms: workload.frame_ms 15 contradicts deployment" in err, err
    assert f"{record} (workload.frame_ms 10)" in err and "override_deployment: true" in err

    record.write_text(record.read_text().replace('"frame_ms": 10', '"frame_ms": 0'))
    assert main(["bench", str(folder), *FAST, "--no-history"]) == 2
    err = capsys.readouterr().err
    assert f"{record}: workload.frame_ms: Input should be greater than 0 (got 0)" in err, err
    assert "restore it from the sweep's output or fix that field" in err
