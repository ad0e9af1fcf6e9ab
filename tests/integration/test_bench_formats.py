"""``edgeopt bench`` on each model format installed here: the runtime comes from the format and the target."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.cli_here import edgeopt_here as edgeopt
from tests.tflite_models import write_fully_connected

# 100 iterations: p99's 100 samples whatever the CPU's load (20 gave 76 samples on a loaded 2-core machine)
QUICK = ("--min-duration", "0.1", "--iterations", "100", "--no-budget", "--json")


def _have(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


@pytest.mark.skipif(not _have("ai_edge_litert"), reason="ai-edge-litert not installed: pip install -e .[litert]")
def test_tflite_model_picks_tflite_and_reports_file_facts(tmp_path):
    model = write_fully_connected(tmp_path / "fc.tflite", dtype="int8")
    p = edgeopt("bench", str(model), *QUICK)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["runtime"]["name"] == "tflite" and r["runtime"]["package"] == "ai_edge_litert"
    assert r["model"]["size_bytes"] == model.stat().st_size and r["model"]["params"] == 0
    assert r["inputs"][0]["dtype"] == "int8"


@pytest.mark.skipif(not _have("openvino"), reason="openvino not installed: pip install -e .[openvino]")
def test_ov_device_runs_onnx_on_openvino(tiny_cnn):
    p = edgeopt("bench", str(tiny_cnn), "--ov-device", "CPU", *QUICK)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["runtime"]["name"] == "openvino" and r["runtime"]["devices_used"] == ["CPU"]
    assert r["model"]["params"] > 0  # ONNX is still inspected


@pytest.mark.skipif(not _have("openvino"), reason="openvino not installed: pip install -e .[openvino]")
def test_intel_nuc_target_prefers_openvino_for_onnx(tiny_cnn):
    p = edgeopt("bench", str(tiny_cnn), "--target", "intel-nuc", *QUICK)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["runtime"]["name"] == "openvino"


def test_runtime_that_cannot_load_the_format_is_a_usage_error(tmp_path):
    model = write_fully_connected(tmp_path / "fc.tflite")
    p = edgeopt("bench", str(model), "--runtime", "onnxruntime", "--no-budget")
    assert p.returncode == 2 and "does not load tflite models" in p.stderr and "Traceback" not in p.stderr


def test_target_without_a_runtime_for_the_format_is_a_usage_error(tiny_cnn):
    p = edgeopt("bench", str(tiny_cnn), "--target", "coral-usb", "--no-budget")
    assert p.returncode == 2 and "none of which loads onnx models" in p.stderr
