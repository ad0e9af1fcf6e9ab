"""A level that changed nothing is detected from the graphs: int4 on a conv-only model is 'no change'."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt import optimize
from edgeopt.errors import InputError
from edgeopt.sweep.honest import Step, compare_graphs, graph_signature, pipeline_change, steps_of
from tests.unit.passes.builders import save


def conv_only(path: Path, *, seed: int = 0, names: str = "", as_constant: bool = False,
              tweak: float = 0.0) -> Path:
    """x -> Conv(3->8, 3x3, bias) -> Relu -> Conv(8->4, 1x1): no MatMul for int4 to quantize."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    w1[0, 0, 0, 0] += tweak
    b1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
    inits = [numpy_helper.from_array(a, f"{names}{n}") for n, a in (("w1", w1), ("b1", b1), ("w2", w2))]
    nodes = [
        helper.make_node("Conv", ["x", f"{names}w1", f"{names}b1"], [f"{names}c1"], name=f"{names}conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", [f"{names}c1"], [f"{names}r1"], name=f"{names}relu"),
        helper.make_node("Conv", [f"{names}r1", f"{names}w2"], ["y"], name=f"{names}conv2"),
    ]
    if as_constant:
        nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in inits] + nodes
        inits = []
    graph = helper.make_graph(nodes, "conv_only", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                 ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, 16, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save(model, path)


@pytest.fixture
def calib(tmp_path: Path) -> Path:
    path = tmp_path / "calib.npz"
    np.savez(path, x=np.random.default_rng(0).standard_normal((8, 3, 16, 16)).astype(np.float32))
    return path


def test_names_order_and_constants_do_not_count(tmp_path: Path) -> None:
    a = conv_only(tmp_path / "a.onnx")
    b = conv_only(tmp_path / "b.onnx", names="renamed_", as_constant=True)
    m = onnx.load(str(b))
    m.graph.node.insert(len(m.graph.node) - 1, helper.make_node("Identity", ["renamed_r1"], ["alias"]))
    m.graph.node[-1].input[0] = "alias"  # the last conv reads through an Identity: still the same computation
    onnx.save(m, str(tmp_path / "c.onnx"))
    assert graph_signature(a) == graph_signature(b) == graph_signature(tmp_path / "c.onnx")
    assert not compare_graphs(a, tmp_path / "c.onnx").changed


def test_a_changed_weight_is_a_change(tmp_path: Path) -> None:
    diff = compare_graphs(conv_only(tmp_path / "a.onnx"), conv_only(tmp_path / "b.onnx", tweak=0.5))
    assert diff.changed and diff.weights_changed == 1, diff
    assert "1 weight tensors changed" in diff.summary


def test_int4_on_a_conv_only_model_changes_nothing(tmp_path: Path, calib: Path) -> None:
    model = conv_only(tmp_path / "conv.onnx")
    res = optimize(model, target="local", recipe="int4", out_dir=tmp_path / "int4", fidelity=False, bench=False)
    steps = steps_of(res.artifacts, model)
    assert [s.pass_name for s in steps] == ["cleanup", "quantize_int4"]
    verdict = pipeline_change(steps)
    assert not verdict.changed, verdict
    assert "no change" in verdict.summary and "quantize_int4" in verdict.summary


def test_int8_on_the_same_model_is_a_change(tmp_path: Path, calib: Path) -> None:
    model = conv_only(tmp_path / "conv.onnx")
    res = optimize(model, target="local", recipe="int8", calib=calib, out_dir=tmp_path / "int8", fidelity=False,
                   bench=False)
    verdict = pipeline_change(steps_of(res.artifacts, model))
    assert verdict.changed, verdict
    assert verdict.summary.startswith("quantize_int8:")
    assert verdict.ops_added.get("QuantizeLinear", 0) > 0 and verdict.ops_added.get("DequantizeLinear", 0) > 0


def test_a_conversion_between_formats_counts_as_a_change(tmp_path: Path) -> None:
    step = Step(pass_name="to_openvino", source=tmp_path / "m.onnx", output=tmp_path / "m.xml")
    assert pipeline_change([step]).changed


def test_not_onnx_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("x")
    with pytest.raises(InputError, match="not an .onnx file"):
        graph_signature(tmp_path / "m.txt")
