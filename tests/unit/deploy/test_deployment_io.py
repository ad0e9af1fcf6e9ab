"""deployment.json: written atomically, read back equal, and every broken record or file refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgeopt.deploy import (
    DeployedFile,
    Deployment,
    DeploymentMeasured,
    decision_cpu_flags,
    load_deployment,
    save_deployment,
)
from edgeopt.deploy.io import DeploymentError
from edgeopt.fsutil import sha256_file


def _deployment(folder: Path) -> Deployment:
    model = folder / "model.xml"
    weights = folder / "model.bin"
    model.write_text("<net/>")
    weights.write_bytes(b"\x00" * 64)
    files = tuple(DeployedFile(path=p.name, sha256=sha256_file(p), size_bytes=p.stat().st_size, role=role)
                  for p, role in ((model, "model"), (weights, "companion")))
    measured = DeploymentMeasured(target="local", metric="top1", min_retention=0.99, retention=0.995,
                                  latency_ms=1.5, latency_ms_low=1.4, latency_ms_high=1.6, latency_rounds=5,
                                  size_bytes=70, eval_samples=200)
    return Deployment(name="int8/openvino", recipe="int8", model="model.xml", format="openvino_ir", files=files,
                      runtime="openvino", runtime_version="2026.4", runtime_options={"inference_precision": "f32"},
                      threads=1, cpu_flags=("avx512_bf16",), measured=measured)


def test_round_trip_keeps_every_setting(tmp_path):
    dep = _deployment(tmp_path)
    record = save_deployment(tmp_path, dep)
    assert record.name == "deployment.json" and not list(tmp_path.glob("*.tmp*"))
    back, folder = load_deployment(tmp_path)
    assert back == dep and folder == tmp_path
    assert load_deployment(record)[0].runtime_options == {"inference_precision": "f32"}


@pytest.mark.parametrize("damage, words", [
    (lambda d: (d / "model.bin").write_bytes(b"\x01" * 64), "changed since it was measured"),
    (lambda d: (d / "model.bin").unlink(), "is missing"),
    (lambda d: (d / "deployment.json").write_text("{"), "not valid JSON"),
    (lambda d: (d / "deployment.json").write_text(json.dumps({"kind": "edgeopt-deployment"})), "restore it"),
])
def test_a_broken_deployment_is_one_line_naming_the_file(tmp_path, damage, words):
    save_deployment(tmp_path, _deployment(tmp_path))
    damage(tmp_path)
    with pytest.raises(DeploymentError) as err:
        load_deployment(tmp_path)
    text = str(err.value)
    assert words in text and "\n" not in text and str(tmp_path) in text


def test_a_file_outside_the_folder_is_refused(tmp_path):
    dep = _deployment(tmp_path)
    outside = DeployedFile(path="../x.bin", sha256="0" * 64, size_bytes=0, role="companion")
    save_deployment(tmp_path, dep.model_copy(update={"files": (*dep.files, outside)}))
    with pytest.raises(DeploymentError, match="outside the deployment folder"):
        load_deployment(tmp_path)


def test_no_record_says_what_to_pass(tmp_path):
    with pytest.raises(DeploymentError, match="no deployment.json"):
        load_deployment(tmp_path)


def test_decision_flags_keep_only_what_changes_kernels():
    assert decision_cpu_flags(["sse4_2", "AVX512_BF16", "amx_int8", "fma"]) == ["amx_int8", "avx512_bf16"]
