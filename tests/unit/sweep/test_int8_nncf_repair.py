"""NNCF's repairs of the INT8 search, on the host: an outlier in every calibration sample ruins NNCF's default
min-max ranges; its mean-quantile range estimator repairs them, so OpenVINO needs no layer in float."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.evaluation import resolve_metric, retention
from edgeopt.sweep.int8.nncf_repair import NncfRepair, host_retention, ov_outputs, quantize_ir, repairs_for, try_repairs

pytest.importorskip("nncf")
pytest.importorskip("openvino")

SIZE = 64
THRESHOLD = 0.95  # snr_db retention
SHAPES = {"x": [1, 4, SIZE, SIZE]}


def _model(path: Path, matmul: bool = False) -> Path:
    """x -> 1x1 conv -> Relu -> 3x3 conv -> Relu -> 1x1 conv; input channel 0 (the outlier's) feeds only r1's
    channel 0, which nothing reads further on (optionally a MatMul with a weight at the end)."""
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((8, 4, 1, 1)) * 0.5).astype(np.float32)
    w1[0], w1[:, 0] = 0.0, 0.0
    w1[0, 0] = 1.0
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    w2[:, 0] = 0.0
    w3 = (rng.standard_normal((4, 8, 1, 1)) * 0.4).astype(np.float32)
    inits = [numpy_helper.from_array(w, n) for w, n in ((w1, "w1"), (w2, "w2"), (w3, "w3"))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3"], ["y" if not matmul else "c3"], name="conv3")]
    if matmul:
        inits.append(numpy_helper.from_array((rng.standard_normal((SIZE, SIZE)) * 0.1).astype(np.float32), "wm"))
        nodes.append(helper.make_node("MatMul", ["c3", "wm"], ["y"], name="mm"))
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4, SIZE, SIZE]) for n in ("x", "y")]
    model = helper.make_model(helper.make_graph(nodes, "outlier", io[:1], io[1:], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_only_applicable_repairs_are_listed(tmp_path: Path) -> None:
    conv, skipped = repairs_for(onnx.load(str(_model(tmp_path / "c.onnx"))))
    assert [r.name for r in conv] == ["fast_bias_correction", "range_mean_quantile", "bias_correction"]
    assert "MatMul" in skipped["smooth_quant"]
    with_mm, skipped = repairs_for(onnx.load(str(_model(tmp_path / "m.onnx", matmul=True))))
    assert with_mm[-1].name == "smooth_quant" and not skipped


def test_range_estimator_repairs_what_the_default_ruins(tmp_path: Path) -> None:
    src = _model(tmp_path / "m.onnx")
    rng = np.random.default_rng(1)
    calib = rng.standard_normal((32, 1, 4, SIZE, SIZE)).astype(np.float32)
    for c in calib:  # one outlier in every calibration sample: a per-sample min-max sees it every time
        c[0, 0, rng.integers(SIZE), rng.integers(SIZE)] = 400.0
    feeds = [{"x": c} for c in calib]
    evals = [{"x": e} for e in rng.standard_normal((8, 1, 4, SIZE, SIZE)).astype(np.float32)]
    ref, _ = ov_outputs(src, evals, SHAPES)
    metric = resolve_metric("snr_db")

    def build(rep: NncfRepair) -> tuple[Path, float, float]:
        xml = tmp_path / rep.name / "m.xml"
        seconds = quantize_ir(src, xml, rep, feeds, SHAPES)
        return xml, seconds, host_retention(xml, evals, lambda o, _: retention(metric, ref[0], o[0], None)[1], SHAPES)

    rows, winner = try_repairs(repairs_for(onnx.load(str(src)))[0], build, THRESHOLD)
    assert winner is not None and winner[0].name == "range_mean_quantile" and winner[1].is_file()
    assert [r["name"] for r in rows] == ["fast_bias_correction", "range_mean_quantile"], "cheapest passing first"
    assert rows[0]["host_retention"] < THRESHOLD <= rows[1]["host_retention"]
    assert rows[1]["options"] == {"range_estimator": "mean_quantile"}
