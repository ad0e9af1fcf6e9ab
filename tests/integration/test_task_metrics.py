"""Metrics for detectors end to end, on a YOLOv8-style head built in the test: the sweep CLI with --axis,
--score-threshold and detection (the metric parameters in the cache key), optimize's fidelity table with the same
metric on the eval data, and qualify's retention gate through the same resolver."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from edgeopt.cli.main import main
from edgeopt.evaluation import MetricSpec
from edgeopt.optimize import optimize
from edgeopt.qualify.retention import HostOnnxEvaluator
from edgeopt.qualify.spec import EvalSpec
from tests.detector_model import head_inputs, head_model, run

# --objective size: no latency-ranking rounds (these tests judge metrics; the ranking: test_sweep_ranking.py)
FAST = ["--recipes", "fp16", "--runtimes", "onnxruntime", "--no-int8-search", "--iterations", "10",
        "--min-duration", "0.05", "--objective", "size", "--json"]
CLASSES = "0,slice=[:,4:,:]"


@pytest.fixture(scope="module")
def head(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(reference head, pruned head with mixed class scores, eval .npz of 6 samples)."""
    tmp = tmp_path_factory.mktemp("head")
    data = tmp / "eval.npz"
    np.savez(data, x=head_inputs())
    return head_model(tmp / "head.onnx"), head_model(tmp / "pruned.onnx", class_mix=0.45), data


def _sweep(capsys: pytest.CaptureFixture[str], model: Path, data: Path, out: Path, *args: str) -> dict:
    code = main(["sweep", str(model), "--eval", str(data), "--out", str(out), *FAST, *args])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    return doc


def test_sweep_metric_parameters_are_reported_and_part_of_the_cache_key(
        head: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, _, data = head
    agree = _sweep(capsys, model, data, tmp_path, "--metric", "agreement", "--axis", "1", "--score-threshold", "0.25",
                   "--output", CLASSES)
    assert agree["metric"] == "agreement" and agree["metric_params"] == {"axis": 1, "score_threshold": 0.25}
    assert agree["output"] == CLASSES and {lv["retention"] for lv in agree["levels"]} == {1.0}
    assert not any(lv["cached"] for lv in agree["levels"])
    det = _sweep(capsys, model, data, tmp_path, "--metric", "detection")
    assert det["metric_params"] == {"axis": 1, "score_threshold": 0.25, "iou_threshold": 0.5}
    assert not any(lv["cached"] for lv in det["levels"])  # another metric: measured again
    assert all(lv["retention"] == 1.0 for lv in det["levels"])  # fp16 keeps every box
    # another parameter (measured again) and the same request (read back): tests/unit/sweep/test_level_cache_key.py


def _probability_map(path: Path) -> Path:
    """A DBNet-like head: x[N, 3, H, W] -> Conv(1 filter, 3x3, pad 1) -> Sigmoid -> a [N, 1, H, W] map."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(2).standard_normal((1, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["maps"])]
    graph = helper.make_graph(nodes, "db", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                              [helper.make_tensor_value_info("maps", TensorProto.FLOAT, ["N", 1, 32, 32])],
                              [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_sweep_mask_iou_on_a_probability_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = _probability_map(tmp_path / "db.onnx")
    data = tmp_path / "maps.npz"
    np.savez(data, x=np.random.default_rng(3).standard_normal((4, 3, 32, 32)).astype(np.float32))
    doc = _sweep(capsys, model, data, tmp_path / "out", "--metric", "mask_iou", "--mask-threshold", "0.3")
    assert doc["metric"] == "mask_iou" and doc["metric_params"] == {"mask_threshold": 0.3}
    by = {lv["recipe"]: lv for lv in doc["levels"]}
    assert by["fp32"]["retention"] == 1.0 and 0.95 < by["fp16"]["retention"] <= 1.0
    assert by["fp32"]["details"]["static_shapes"]["static"]  # the run's shape was known: compiled static


def test_sweep_refuses_a_parameter_the_metric_does_not_take(
        head: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, _, data = head
    code = main(["sweep", str(model), "--eval", str(data), "--out", str(tmp_path), *FAST, "--metric", "agreement",
                 "--mask-threshold", "0.3"])
    assert code == 2
    assert "--mask-threshold 0.3 does not apply to metric agreement" in capsys.readouterr().out


def test_optimize_fidelity_uses_the_metric_and_the_eval_data(
        head: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, _, data = head
    result = optimize(model, target="local", recipe="fp16", eval_data=data, out_dir=tmp_path / "o", bench=False,
                      metric=MetricSpec(name="agreement", axis=1, score_threshold=0.25), output=CLASSES)
    rows = result.fidelity or []
    assert [r.metric for r in rows] == ["agreement(axis=1, score_threshold=0.25)"] * len(rows) and len(rows) >= 2
    assert all(r.data == "eval" and r.source == str(data) and r.samples == 6 and r.output == CLASSES for r in rows)
    assert rows[0].retention == 1.0 and rows[-1].retention is not None and rows[-1].retention > 0.99
    assert rows[0].top1_agreement is None  # not a classifier: the old column stays empty, the metric does not
    code = main(["optimize", str(model), "-t", "local", "-r", "fp16", "--eval", str(data), "--out",
                 str(tmp_path / "cli"), "--no-bench", "--metric", "detection"])
    out = capsys.readouterr().out
    assert code == 0 and "retention" in out
    assert f"fidelity on the first 6 eval samples of {data}" in out.replace("\n", "")
    assert "metric detection(axis=1, score_threshold=0.25, iou_threshold=0.5)" in out.replace("\n", "")


def test_qualify_retention_by_the_same_metric(head: tuple[Path, Path, Path]) -> None:
    model, pruned, data = head
    ref, out = run(model, head_inputs()), run(pruned, head_inputs())
    a, b = ref[:, 4:], out[:, 4:]
    kept = float(np.mean((a.argmax(axis=1) == b.argmax(axis=1))[a.max(axis=1) > 0.25]))
    spec = EvalSpec(data=str(data), metric="detection").metric_spec()
    result = HostOnnxEvaluator().evaluate(model, pruned, data=data, samples=6, metric=spec, shapes={}, seed=0)
    assert result.metric == "detection(axis=1, score_threshold=0.25, iou_threshold=0.5)"
    assert result.retention == pytest.approx(kept, abs=1e-6) and result.reference_value == 1.0
    agree = EvalSpec(data=str(data), metric="top1_agreement", axis=1, output=CLASSES)
    assert agree.metric_spec() == MetricSpec(name="agreement", axis=1)
    by_class = HostOnnxEvaluator().evaluate(model, pruned, data=data, samples=6, metric=agree.metric_spec(),
                                            shapes={}, seed=0, output=agree.output)
    assert by_class.retention == pytest.approx(float(np.mean(a.argmax(axis=1) == b.argmax(axis=1))), abs=1e-6)
    legacy = HostOnnxEvaluator().evaluate(model, pruned, data=data, samples=6, metric="auto", shapes={}, seed=0)
    assert legacy.retention is None and legacy.metric == "top1_agreement"  # not classifier-like: says so
    with pytest.raises(ValidationError, match="--mask-threshold 0.3 does not apply to metric agreement"):
        EvalSpec(metric="agreement", mask_threshold=0.3)
