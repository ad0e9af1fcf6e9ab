"""``edgeopt bench out/manifest.json``: every artifact an optimize run delivered, each on its format's runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import edgeopt
from edgeopt.bench.manifest import benchmark_manifest
from edgeopt.errors import InputError
from edgeopt.names import RuntimeName
from edgeopt.registry.lookup import runtime_installed_here
from tests.cli_here import edgeopt_here as cli

QUICK = ("--min-duration", "0.1", "--iterations", "100", "--warmup", "2", "--no-energy")


@pytest.fixture(scope="module")
def manifest(tiny_cnn: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench-manifest") / "out"
    result = edgeopt.optimize(tiny_cnn, target="local", recipe="int8", out_dir=out, fidelity=False, bench=False)
    return Path(result.manifest_path)


def test_every_runnable_artifact_is_benchmarked_on_its_formats_runtime(manifest: Path) -> None:
    arts = json.loads(manifest.read_text())["artifacts"]
    p = cli("bench", str(manifest), "--target", "local", *QUICK, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["manifest"] == str(manifest)
    assert [r["artifact"] for r in doc["results"]] == [a["name"] for a in arts]
    expected = {"onnx": "onnxruntime", "openvino_ir": "openvino"}
    for row in doc["results"]:
        assert "skipped_reason" not in row, row
        assert row["runtime"] == expected[row["format"]] == row["result"]["runtime"]["name"]
        assert row["result"]["valid"] and row["result"]["latency_ms"]["p50"] > 0
        assert Path(row["result"]["model"]["path"]).parent == manifest.parent


def test_table_has_one_row_per_artifact_and_budget_failure_exits_1(manifest: Path) -> None:
    arts = json.loads(manifest.read_text())["artifacts"]
    p = cli("bench", str(manifest), "--target", "local", *QUICK, "--fps", "1000000")
    assert p.returncode == 1, p.stderr
    for a in arts:
        assert a["name"] in p.stdout
    assert p.stdout.count("FAIL at 1e+06 FPS") == len(arts)


@pytest.mark.skipif(runtime_installed_here(RuntimeName.TENSORRT), reason="TensorRT is installed: nothing to skip")
def test_tensorrt_onnx_is_skipped_with_a_reason_without_tensorrt(manifest: Path, tmp_path: Path) -> None:
    data = json.loads(manifest.read_text())
    onnx_art = next(a for a in data["artifacts"] if a["format"] == "onnx")
    data["artifacts"] = [onnx_art, {**onnx_art, "name": "convert-tensorrt_prepare", "format": "tensorrt_onnx"}]
    copy = tmp_path / "manifest.json"
    copy.write_text(json.dumps(data))
    (tmp_path / Path(onnx_art["path"]).name).write_bytes((manifest.parent / Path(onnx_art["path"]).name).read_bytes())
    entries = benchmark_manifest(copy, target="local", iterations=100, min_duration_s=0.05, warmup=1, energy=False)
    assert [e.artifact for e in entries] == [onnx_art["name"], "convert-tensorrt_prepare"]
    assert entries[0].result is not None and entries[0].skipped_reason is None
    assert entries[1].result is None and "TensorRT" in (entries[1].skipped_reason or "")


def test_bad_manifest_is_a_usage_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "manifest.json"
    bad.write_text('{"artifacts": "nope"}')
    p = cli("bench", str(bad), "--json")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    err = json.loads(p.stdout)  # --json: the error too is JSON
    assert err["exit_code"] == 2 and str(bad) in err["error"] and "artifacts" in err["error"]
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        benchmark_manifest(bad)
