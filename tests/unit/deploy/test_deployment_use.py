"""Applying a deployment's settings: what it fixes, what contradicts it, and what a mismatch names (no runtime)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.deploy import DeployedFile, Deployment, DeploymentMeasured, save_deployment
from edgeopt.deploy.use import DeploymentConflictError, deployed_settings, deployment_mismatch, open_deployment
from edgeopt.fsutil import sha256_file
from edgeopt.settings import MeasureSettings


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "m.onnx").write_bytes(b"onnx")
    f = DeployedFile(path="m.onnx", sha256=sha256_file(tmp_path / "m.onnx"), size_bytes=4, role="model")
    measured = DeploymentMeasured(target="local", metric="top1", min_retention=0.99, retention=1.0, latency_ms=1.0,
                                  size_bytes=4)
    dep = Deployment(name="fp32/onnxruntime", recipe="fp32", model="m.onnx", format="onnx", files=(f,),
                     runtime="onnxruntime", runtime_version="1.20.0",
                     runtime_options={"graph_optimization_level": "all"}, threads=2, streams=1, batch=4,
                     static_shapes={"x": [4, 8]}, cpu_flags=("avx2", "avx512_bf16"), measured=measured)
    save_deployment(tmp_path, dep)
    return tmp_path


def test_a_plain_model_is_not_a_deployment(tmp_path):
    (tmp_path / "m.onnx").write_bytes(b"x")
    assert open_deployment(tmp_path / "m.onnx") is None


def test_its_settings_replace_the_defaults(tmp_path):
    use = open_deployment(_folder(tmp_path))
    assert use is not None and use.model_path == tmp_path / "m.onnx"
    s = deployed_settings(use, MeasureSettings(iterations=7))
    assert (s.runtime, s.threads, s.batch, s.streams, s.iterations) == ("onnxruntime", 2, 4, 1, 7)
    assert s.runtime_options == {"graph_optimization_level": "all"} and s.shapes == {"x": [4, 8]}
    assert use.ref().sha256 == sha256_file(tmp_path / "deployment.json")


@pytest.mark.parametrize("given, words", [
    ({"threads": 3}, "--threads 3 contradicts"),
    ({"runtime": "openvino"}, "--runtime openvino contradicts"),
    ({"runtime_options": {"graph_optimization_level": "basic"}}, "(runtime_options graph_optimization_level=all)"),
    ({"shapes": {"x": [1, 8]}}, "--shape x=1x8 contradicts"),
])
def test_a_contradicting_setting_is_refused_unless_overridden(tmp_path, given, words):
    use = open_deployment(_folder(tmp_path))
    assert use is not None
    settings = MeasureSettings(**given)
    with pytest.raises(DeploymentConflictError, match=words.replace("(", r"\(").replace(")", r"\)")):
        deployed_settings(use, settings)
    overridden = deployed_settings(use, settings, override=True)
    key = next(iter(given))
    expected = {**use.values()[key], **given[key]} if key == "runtime_options" else given[key]
    assert getattr(overridden, key) == expected


def test_agreeing_settings_and_a_subset_of_options_pass(tmp_path):
    use = open_deployment(_folder(tmp_path))
    assert use is not None
    s = deployed_settings(use, MeasureSettings(runtime="onnxruntime", threads=2,
                                               runtime_options={"graph_optimization_level": "all"}))
    assert s.threads == 2
    # The CLI names exactly what it was given: an explicit default that differs is a contradiction too.
    with pytest.raises(DeploymentConflictError, match="--threads 0"):
        deployed_settings(use, MeasureSettings(), given={"threads"})


def test_mismatch_names_the_version_and_both_directions_of_cpu_flags(tmp_path):
    use = open_deployment(_folder(tmp_path))
    assert use is not None
    assert deployment_mismatch(use.deployment, "1.20.0", ["AVX2", "avx512_bf16", "sse4_2"]) == []
    problems = deployment_mismatch(use.deployment, "1.21.1", ["avx2", "amx_tile"])
    assert problems == ["runtime onnxruntime 1.21.1 != 1.20.0 measured", "cpu lacks avx512_bf16", "cpu adds amx_tile"]
