"""A deployment benched over SSH: the IR's .xml and .bin travel, and the device runs exactly its settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import edgeopt
from tests.conftest import make_matmul_model
from tests.deployments import edit_deployment, make_deployment, to_ir

pytest.importorskip("openvino")

# 100 iterations: p99's 100 samples whatever the CPU's load (the test asserts a valid run)
FAST = {"iterations": 100, "min_duration_s": 0.1, "warmup": 2, "use_target_fps": False, "energy": False}


def test_an_ir_deployment_runs_over_ssh_with_its_settings(shared_device, tmp_path):
    xml = to_ir(make_matmul_model(tmp_path / "mm.onnx"), tmp_path / "ir")
    folder = make_deployment(tmp_path / "recommended", xml, runtime="openvino",
                             runtime_options={"inference_precision": "f32"}, threads=1)
    runner = shared_device.runner()
    result = edgeopt.benchmark(folder, runner=runner, **FAST)
    assert result.runner.startswith("ssh:") and result.valid
    details = result.runtime.model_dump()
    assert details["inference_precision"] == "f32" and details["inference_num_threads"] == 1
    assert result.deployment is not None and result.deployment.name == "test/openvino"
    # The agent loaded the IR from the device cache, with its weights beside it.
    cached = shared_device.workdir / "cache"
    assert {"model.bin", "model.xml"} <= {p.name for p in cached.rglob("model.*")}
    assert not [w for w in result.warnings if "deployment" in w]

    edit_deployment(folder, runtime_version="2025.1")
    warned = edgeopt.benchmark(folder, runner=shared_device.runner(), **FAST)
    assert any("!= 2025.1 measured" in w for w in warned.warnings)


def test_cli_over_ssh_refuses_a_contradicting_flag_before_connecting(tmp_path: Path):
    folder = make_deployment(tmp_path / "dep", make_matmul_model(tmp_path / "mm.onnx"), runtime="onnxruntime")
    proc = subprocess.run([sys.executable, "-m", "edgeopt", "bench", str(folder), "--host", "nobody@192.0.2.1",
                           "--streams", "2"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--streams 2 contradicts deployment" in proc.stderr
