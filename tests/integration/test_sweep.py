"""The sweep end to end on a real trained digits MLP with real labels (local agent, onnxruntime)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")

from edgeopt.cli.main import main  # noqa: E402
from edgeopt.sweep import sweep  # noqa: E402
from tests.integration.shared_runs import Int8Search  # noqa: E402

# objective size: no latency-ranking rounds (these tests judge retention, the cache and resuming; the ranking:
# test_sweep_ranking.py and tests/unit/sweep/test_ranking.py)
FAST = {"iterations": 20, "min_duration_s": 0.1, "runtimes": ["onnxruntime"], "objective": "size"}


class Stop(Exception):
    pass


def test_sweep_reports_top1_retention_and_resumes(digits: tuple[Path, Path], tmp_path: Path) -> None:
    model, data = digits
    seen: list[dict[str, Any]] = []

    def interrupt(event: dict[str, Any]) -> None:
        seen.append(event)
        if event.get("event") == "level" and event["recipe"] == "fp16":
            raise Stop  # simulated crash in the middle of the sweep

    with pytest.raises(Stop):
        sweep(model, eval=data, recipes=["fp16", "int8"], out_dir=tmp_path, progress=interrupt, **FAST)
    events: list[dict[str, Any]] = []
    result = sweep(model, eval=data, recipes=["fp16", "int8"], out_dir=tmp_path, progress=events.append,
                   min_retention=0.98, **FAST)
    cached = {(e["recipe"], e["cached"]) for e in events if e.get("event") == "level"}
    assert ("fp32", True) in cached and ("fp16", True) in cached and ("int8", False) in cached
    assert result.metric == "top1"
    by = {lv.recipe: lv for lv in result.levels}
    assert by["fp32"].retention == 1.0 and 0.8 < by["fp32"].metric_value <= 1.0
    assert by["int8"].retention > 0.9
    assert result.recommendation is not None
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert {"levels", "pareto", "recommendation"} <= set(doc)
    svg_text = (tmp_path / "pareto.svg").read_text()
    assert svg_text.startswith("<?xml") and "<svg xmlns=" in svg_text  # a standalone file (test_svg_standalone.py)
    # onnxruntime alone: each recipe delivers ONNX only, no OpenVINO IR that nothing here loads (docs/sweep.md)
    for recipe in ("fp16", "int8"):
        assert json.loads((tmp_path / "artifacts" / recipe / "manifest.json").read_text())["formats"] == ["onnx"]


def test_cli_exit_1_when_threshold_unreachable(digits: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    model, data = digits
    code = main([
        "sweep", str(model), "--eval", str(data), "--recipes", "int8", "--runtimes", "onnxruntime",
        "--fps", "1000000", "--out", str(tmp_path), "--no-int8-search", "--iterations", "20", "--min-duration", "0.1",
        "--json"])  # short runs: a 1 us budget is missed by any run length
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    assert out["recommendation"] is None and "fps budget" in out["reason"]


def test_cli_bad_eval_is_exit_2(digits: tuple[Path, Path], tmp_path: Path) -> None:
    model, _ = digits
    assert main(["sweep", str(model), "--eval", str(tmp_path / "missing.npz"), "--json"]) == 2


def test_int8_search_finds_passing_mixed_precision(digits_int8_search: Int8Search) -> None:
    # the sweep (snr_db, min_retention 0.9999, max_trials 8, onnxruntime) is shared with test_result_schemas.py
    result, tmp_path = digits_int8_search.result, digits_int8_search.out_dir
    by = {lv.recipe: lv for lv in result.levels}
    assert not by["int8"].meets_retention
    search = result.int8_search
    assert search is not None and search.chosen is not None, search
    assert search.float_nodes, "the passing config keeps some nodes in float"
    passing = [t for t in search.trials if t.passed]
    assert search.chosen.latency_ms == min(t.latency_ms for t in passing)
    assert by["int8-search"].retention >= 0.9999
    assert (tmp_path / "int8-search" / "best.onnx").is_file()


def test_cli_sweep_resumes_after_ctrl_c(digits: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A real ``edgeopt sweep`` process interrupted with SIGINT after its first level; the re-run (in this process:
    the CLI's resume, not its start-up, is the point) reads it back."""
    import signal
    import subprocess
    import sys

    model, data = digits
    args = ["sweep", str(model), "--eval", str(data), "--recipes", "fp16", "--runtimes", "onnxruntime",
            "--iterations", "20", "--min-duration", "0.1", "--no-int8-search", "--objective", "size",
            "--out", str(tmp_path), "--json"]
    cmd = [sys.executable, "-m", "edgeopt", *args]
    def default_sigint() -> None:  # a job started in the background (CI, `cmd &`) inherits SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:  # progress goes to stderr: stop once fp32 is measured (fp16 comes after it)
        seen.append(line)
        if line.strip().startswith("fp32"):
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (seen, err)
    assert "interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "sweep.json").exists(), "an interrupted sweep writes no result"
    code = main(args)
    rerun = capsys.readouterr()
    assert code in (0, 1), rerun.err
    doc = json.loads(rerun.out)
    cached = {lv["recipe"]: lv["cached"] for lv in doc["levels"]}
    assert cached == {"fp32": True, "fp16": False}, cached
    assert "(cached)" in rerun.err
