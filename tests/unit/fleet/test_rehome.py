"""A one-pass fleet sweep's device on a worker that does not share the host's paths: the worker ships and checks its
recommendation in its temp folder; the host re-ships it into ``devices/<name>/recommended`` from its own files (the
bundle's, or the ones the device built itself, sent back) and keeps the device's check for the same files only."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgeopt.deploy import ShippedCheck, load_deployment, save_deployment
from edgeopt.fsutil import sha256_file
from edgeopt.sweep.fleet.rehome import WorkerOutput, rehome, reship
from edgeopt.sweep.result import Level, Recommendation, SweepResult
from edgeopt.sweep.ship.deployment import SweepFacts, publish, stage


def _level(artifact: Path) -> Level:
    return Level(recipe="fp16", runtime="onnxruntime", runtime_version="1.0", artifact=str(artifact), size_bytes=9,
                 latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                 metric="agreement", metric_value=1.0, retention=1.0, meets_retention=True, meets_budget=True,
                 passed=True, valid=True, cached=False, runtime_options={}, threads=1)


def _worker_sweep(root: Path, out: Path, artifact: Path) -> SweepResult:
    """What the device's job leaves on the worker: its recommendation shipped in ``out`` and checked there."""
    level = _level(artifact)
    facts = SweepFacts(target="local", metric="agreement", min_retention=0.9, eval_samples=4, threads=1, streams=1,
                       batch=1, shapes={"x": [1, 3]}, environment={"cpu": "test", "cpu_flags": []},
                       model_sha256="ab", device="lab-00")
    out.mkdir(parents=True, exist_ok=True)
    tmp, deployment = stage(out, level, facts)
    check = ShippedCheck(retention_as_shipped=1.0, retention_with_defaults=1.0, defaults_pass=True,
                         retention_measured=1.0, tolerance=0.002, passed=True, files=deployment.files)
    save_deployment(tmp, deployment.model_copy(update={"shipped_check": check}))
    folder = publish(tmp, out)
    rec = Recommendation(recipe="fp16", runtime="onnxruntime", artifact=str(artifact), retention=1.0, latency_ms=1.0,
                         size_bytes=9, deployment=str(folder), shipped_check=check)
    return SweepResult(model=str(root / "model" / "m.onnx"), model_sha256="ab", target="local", runner="ssh:x",
                       metric="agreement", output="y", eval_samples=4, min_retention=0.9, fps=None, objective="size",
                       runtimes=["onnxruntime"], levels=[level], pareto=[level], recommendation=rec, reason=None,
                       int8_search=None, plot=str(out / "pareto.svg"), out_dir=str(out), seconds=1.0, warnings=[])


def _model(path: Path, bias: float, *, external: bool = False) -> Path:
    """A real ONNX file (x + bias), its weights in ``weights.bin`` beside it when ``external``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    init = numpy_helper.from_array(np.full((1, 3), bias, np.float32), "b")
    graph = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"])], "add",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])], [init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path), save_as_external_data=external, location="weights.bin", size_threshold=0)
    return path


def test_a_level_the_device_built_comes_back_and_keeps_its_check(tmp_path: Path) -> None:
    root, out = tmp_path / "worker" / "bundle", tmp_path / "worker" / "out"
    result = _worker_sweep(root, out, _model(out / "cache" / "models" / "ab" / "m.onnx", 1.0, external=True))
    sent = WorkerOutput.of(result, root, out)
    assert not (out / "recommended").exists()  # the worker's copy is not kept
    shutil.rmtree(tmp_path / "worker")  # none of the worker's paths exist on the host
    host_root, dev_out = tmp_path / "host", tmp_path / "devices" / "lab-00"
    here, _ = rehome(result, [], sent, host_root, dev_out, "lab-00")
    rec = here.recommendation
    assert rec is not None and rec.deployment == str(dev_out / "recommended")
    assert rec.artifact == here.levels[0].artifact == str(dev_out / "cache" / "models" / "ab" / "m.onnx")
    deployment, folder = load_deployment(dev_out / "recommended")  # every file as recorded (size, SHA-256)
    assert [sha256_file(folder / f.path) for f in deployment.files] == [f.sha256 for f in deployment.files]
    assert [f.path for f in deployment.files] == ["m.onnx", "weights.bin"]  # its external data came back too
    assert rec.shipped_check is not None and rec.shipped_check.passed and deployment.shipped_check == rec.shipped_check
    assert deployment.measured.device == "lab-00" and here.out_dir == str(dev_out) and here.warnings == []


def test_the_devices_check_is_dropped_for_other_files_in_the_hosts_bundle(tmp_path: Path) -> None:
    root, out = tmp_path / "worker" / "bundle", tmp_path / "worker" / "out"
    result = _worker_sweep(root, out, _model(root / "artifacts" / "local" / "fp16" / "m.onnx", 1.0))
    sent = WorkerOutput.of(result, root, out)
    assert sent.files == {}  # in the bundle: the host has its own copy
    host_root, dev_out = tmp_path / "host", tmp_path / "devices" / "lab-00"
    _model(host_root / "artifacts" / "local" / "fp16" / "m.onnx", 2.0)  # not the file the device re-scored
    here, _ = rehome(result, [], sent, host_root, dev_out, "lab-00")
    rec = here.recommendation
    assert rec is not None and rec.artifact == str(host_root / "artifacts" / "local" / "fp16" / "m.onnx")
    assert rec.deployment == str(dev_out / "recommended") and rec.shipped_check is None
    deployment, _ = load_deployment(dev_out / "recommended")  # the host's files, hashed here
    assert deployment.shipped_check is None
    (warning,) = here.warnings
    assert warning.startswith("shipped check of fp16/onnxruntime dropped: the files shipped here differ")


def test_no_record_from_the_worker_leaves_no_folder_and_says_so(tmp_path: Path) -> None:
    root, out = tmp_path / "worker" / "bundle", tmp_path / "worker" / "out"
    result = _worker_sweep(root, out, _model(root / "artifacts" / "local" / "fp16" / "m.onnx", 1.0))
    dev_out = tmp_path / "devices" / "lab-00"
    (dev_out / "recommended").mkdir(parents=True)  # an earlier run's answer: not left behind
    here = reship(result, None, dev_out, "lab-00")
    assert here.recommendation is not None and here.recommendation.deployment is None
    assert here.recommendation.shipped_check is None and not (dev_out / "recommended").exists()
    (warning,) = here.warnings
    assert warning.startswith("recommended/ not written for fp16/onnxruntime on lab-00: its deployment record")
