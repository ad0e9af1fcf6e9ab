"""``<out>/recommended/`` and the shipped check, on any CPU.

The folder: a model's companion files travel with it (IR ``.bin``, ONNX external data), a re-run replaces the
folder whole. The check, on real onnxruntime sessions through the local agent: a deployment whose recorded option
changes the outputs (``graph_optimization_level: disable`` keeps a Conv+BatchNormalization unfused, so the
outputs differ in their last bits from ORT's default fused Conv) gives the measured retention as shipped, another
one with the runtime's defaults, and the one-line note naming the option.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.deploy import DeployedFile, DeploymentMeasured, ShippedCheck, load_deployment, save_deployment
from edgeopt.deploy.io import DeploymentError
from edgeopt.evaluation import parse_output, resolve_metric
from edgeopt.runners.local import LocalRunner
from edgeopt.settings import MeasureSettings
from edgeopt.sweep.measure import Context
from edgeopt.sweep.result import Level
from edgeopt.sweep.ship.check import check_shipped, shipped_note, shipped_record
from edgeopt.sweep.ship.deployment import SweepFacts, build_deployment, copy_files, publish, stage

pytest.importorskip("onnxruntime")


def _conv_bn(path: Path, *, external: bool = False) -> Path:
    rng = np.random.RandomState(0)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in [
        ("w", rng.randn(4, 3, 3, 3)), ("scale", rng.rand(4) + 0.5), ("bias", rng.randn(4)), ("mean", rng.randn(4)),
        ("var", rng.rand(4) + 0.5)]]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["y"])]
    graph = helper.make_graph(nodes, "conv_bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, 8, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if external:
        onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="weights.bin",
                  size_threshold=0)
    else:
        onnx.save(model, str(path))
    return path


def _level(artifact: Path, options: dict[str, object], retention: float = 1.0) -> Level:
    return Level(recipe="fp32", runtime="onnxruntime", runtime_version="1.0", artifact=str(artifact), size_bytes=1,
                 latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                 metric="snr_db", metric_value=1.0, retention=retention, meets_retention=True, meets_budget=True,
                 passed=True, valid=True, cached=False, runtime_options=options, threads=1)


def _facts(min_retention: float = 0.99) -> SweepFacts:
    return SweepFacts(target="local", metric="snr_db", min_retention=min_retention, eval_samples=4, threads=1,
                      streams=1, batch=1, shapes={"x": [1, 3, 8, 8]},
                      environment={"cpu": "test", "cpu_flags": ["avx2", "sse4_2"]}, model_sha256="ab")


def test_companions_travel_and_a_rerun_replaces_the_folder(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    model = _conv_bn(src / "m.onnx", external=True)
    xml = src / "ir.xml"
    xml.write_text("<net/>")
    xml.with_suffix(".bin").write_bytes(b"\0" * 8)
    staged = tmp_path / "stage"
    staged.mkdir()
    onnx_files = copy_files(model, staged)
    assert [(f.path, f.role) for f in onnx_files] == [("m.onnx", "model"), ("weights.bin", "companion")]
    ir_files = copy_files(xml, staged)
    assert [(f.path, f.role) for f in ir_files] == [("ir.xml", "model"), ("ir.bin", "companion")]
    out = tmp_path / "out"
    out.mkdir()
    tmp, deployment = stage(out, _level(model, {"graph_optimization_level": "disable"}), _facts())
    folder = publish(tmp, out)
    assert deployment.cpu_flags == ("avx2",) and deployment.static_shapes == {"x": [1, 3, 8, 8]}
    assert load_deployment(folder)[0] == deployment  # hashes checked
    (folder / "stale.txt").write_text("from the last run")
    tmp, _ = stage(out, _level(model, {}), _facts())
    publish(tmp, out)
    assert not (folder / "stale.txt").exists() and sorted(p.name for p in out.iterdir()) == ["recommended"]


def test_note_names_the_options_the_defaults_lack() -> None:
    deployment = build_deployment(_level(Path("m.xml"), {"inference_precision": "f32"}, 0.995),
                                  [_file_stub()], _facts())
    deployment = deployment.model_copy(update={"runtime": "openvino", "measured": DeploymentMeasured(
        target="local", metric="top1", min_retention=0.99, retention=0.995, latency_ms=1.0, size_bytes=1)})
    bad = ShippedCheck(retention_as_shipped=0.995, retention_with_defaults=0.970, defaults_pass=False)
    assert shipped_note(deployment, bad) == "needs inference_precision=f32: with OpenVINO's defaults 0.970 < 0.99"
    good = ShippedCheck(retention_as_shipped=0.9951, retention_with_defaults=0.991, defaults_pass=True)
    assert shipped_note(deployment, good) is None
    drift = ShippedCheck(retention_as_shipped=0.98, retention_with_defaults=0.991, defaults_pass=True)
    assert shipped_note(deployment, drift) == "as shipped 0.9800 != measured 0.9950"


def _file_stub() -> DeployedFile:
    return DeployedFile(path="m.xml", sha256="0" * 64, size_bytes=1, role="model")


def test_shipped_check_applies_the_recorded_option_and_compares_with_the_defaults(tmp_path: Path) -> None:
    model = _conv_bn(tmp_path / "model.onnx")
    x = np.random.RandomState(1).randn(4, 3, 8, 8).astype(np.float32)
    np.savez(tmp_path / "eval.npz", x=x)
    unfused = {"graph_optimization_level": "disable"}  # the measured setting; the reference ran with it too
    ctx = Context(target="local", runner=LocalRunner(), eval_npz=tmp_path / "eval.npz", labels=None,
                  metric=resolve_metric("snr_db", has_labels=False), selection=parse_output(None), min_retention=1.0,
                  measure=MeasureSettings.from_kwargs(threads=1), targets_dirs=(), versions={},
                  runtime_options={"onnxruntime": unfused})
    out = tmp_path / "out"
    out.mkdir()
    tmp, deployment = stage(out, _level(model, unfused), _facts(min_retention=1.0))
    check = check_shipped(ctx, tmp, deployment, model)
    assert check.retention_as_shipped == 1.0  # the recorded option: the reference's outputs, bit for bit
    assert check.retention_with_defaults is not None and check.retention_with_defaults < 1.0  # ORT fuses Conv+BN
    assert check.defaults_pass is False
    assert check.note is not None and check.note.startswith(
        "needs graph_optimization_level=disable: with ONNX Runtime's defaults 0.")
    # issue 30: the record every kind's sweep writes: the measured number, the tolerance, the verdict, the files
    assert check.passed is True and check.retention_measured == 1.0 and check.tolerance == 0.002
    assert check.files == deployment.files and check.files[0].path == "model.onnx"
    save_deployment(tmp, deployment.model_copy(update={"shipped_check": check}))
    assert load_deployment(tmp)[0].shipped_check == check
    (tmp / "model.onnx").write_bytes((tmp / "model.onnx").read_bytes() + b"\0")  # edited before the check
    with pytest.raises(DeploymentError, match="model.onnx"):
        check_shipped(ctx, tmp, deployment, model)


def test_a_shipped_retention_off_the_measured_one_does_not_pass() -> None:
    deployment = build_deployment(_level(Path("m.onnx"), {}, 0.995), [_file_stub()], _facts())
    check = shipped_record(deployment, deployment.files, 0.98, 0.98)
    assert check.passed is False and check.retention_measured == 0.995 and check.retention_as_shipped == 0.98
    assert check.note == "as shipped 0.9800 != measured 0.9950"  # no options: the defaults are what shipped
    assert shipped_record(deployment, deployment.files, 0.9951, 0.9951).passed is True


def test_a_missing_artifact_leaves_no_folder_and_says_why(tmp_path: Path) -> None:
    from edgeopt.sweep.result import Recommendation, SweepResult
    from edgeopt.sweep.ship.check import ship

    out = tmp_path / "out"
    (out / "recommended").mkdir(parents=True)  # an earlier run's answer
    gone = _level(tmp_path / "deleted.onnx", {})
    rec = Recommendation(recipe="fp32", runtime="onnxruntime", artifact=gone.artifact, retention=1.0, latency_ms=1.0,
                         size_bytes=1)
    result = SweepResult(model="m", model_sha256="ab", target="local", runner="local", metric="snr_db", output="0",
                         eval_samples=4, min_retention=0.99, fps=None, objective="latency", runtimes=["onnxruntime"],
                         levels=[gone], pareto=[gone], recommendation=rec, reason=None, int8_search=None, plot=None,
                         out_dir=str(out), seconds=0.0, warnings=[])
    shipped = ship(result, None, tmp_path / "m.onnx", _facts())  # type: ignore[arg-type]  # no check runs
    assert shipped.recommendation is not None and shipped.recommendation.deployment is None
    assert not (out / "recommended").exists() and not list(out.iterdir())
    assert "recommended/ not written for fp32/onnxruntime" in shipped.warnings[-1]


def test_an_int8_mix_carries_what_was_done_per_layer() -> None:
    layers = [{"node": "conv2", "repair": "range:percentile", "tensors": ["r1"], "why": "percentile range [0, 3.9]: "
               "host retention 0.5768 -> 0.9995"}, {"node": "conv3", "repair": "float", "tensors": [], "why": "x"}]
    level = _level(Path("m.onnx"), {}).model_copy(update={"recipe": "int8-search", "details": {"int8_layers": layers}})
    deployment = build_deployment(level, [_file_stub()], _facts())
    assert [(x.node, x.repair, x.tensors) for x in deployment.int8_layers] == [
        ("conv2", "range:percentile", ["r1"]), ("conv3", "float", [])]
    assert build_deployment(_level(Path("m.onnx"), {}), [_file_stub()], _facts()).int8_layers == ()
