"""Putting nodes of a calibrated QDQ model back in float equals onnxruntime's own ``nodes_to_exclude``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes
from tests.unit.passes.builders import run_model, save

OPS = ["Conv", "MatMul", "Gemm"]


def convnet(path: Path, seed: int = 0) -> Path:
    """conv (bias) -> relu -> conv (bias) -> add (skip) -> conv -> flatten -> matmul -> gemm: a branchy graph."""
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)

    inits = {"w1": w(8, 3, 3, 3), "b1": w(8), "w2": w(8, 8, 3, 3), "b2": w(8), "w3": w(4, 8, 1, 1),
             "m1": w(4 * 8 * 8, 32), "g1": w(10, 32), "gb": w(10), "shape": np.array([0, -1], np.int64)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="skip"),
        helper.make_node("Conv", ["s", "w3"], ["c3"], name="conv3"),
        helper.make_node("Reshape", ["c3", "shape"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "m1"], ["h"], name="matmul"),
        helper.make_node("Gemm", ["h", "g1", "gb"], ["y"], name="gemm", transB=1),
    ]
    graph = helper.make_graph(nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what the installed onnxruntime loads
    return save(model, path)


def quantize(model: Path, out: Path, x: np.ndarray, exclude: list[str] | None = None, *,
             reduce_range: bool = False, per_channel: bool = True) -> Path:
    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{"x": x[i:i + 1]} for i in range(len(x))])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    quantize_static(str(model), str(out), Reader(), quant_format=QuantFormat.QDQ, op_types_to_quantize=OPS,
                    per_channel=per_channel, reduce_range=reduce_range, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, nodes_to_exclude=exclude)
    return out


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, np.ndarray]:
    tmp = tmp_path_factory.mktemp("qdq")
    x = np.random.default_rng(1).standard_normal((16, 3, 8, 8)).astype(np.float32)
    base = convnet(tmp / "base.onnx")
    return base, quantize(base, tmp / "q.onnx", x), x


def test_quantized_nodes_are_the_weight_ops(models: tuple[Path, Path, np.ndarray]) -> None:
    _, q, _ = models
    assert quantized_nodes(onnx.load(str(q)), OPS) == ["conv1", "conv2", "conv3", "matmul", "gemm"]


@pytest.mark.parametrize("exclude", [["conv1"], ["conv2"], ["matmul"], ["gemm"], ["conv1", "conv3"],
                                     ["conv2", "conv3", "matmul"]])
def test_keep_float_equals_onnxruntime_exclusion(models: tuple[Path, Path, np.ndarray], tmp_path: Path,
                                                 exclude: list[str]) -> None:
    base, q, x = models
    edited = keep_float(onnx.load(str(q)), onnx.load(str(base)), exclude, OPS)
    onnx.checker.check_model(edited)
    reference = quantize(base, tmp_path / "ex.onnx", x, exclude)
    got = run_model(save(edited, tmp_path / "edited.onnx"), {"x": x})[0]
    want = run_model(reference, {"x": x})[0]
    np.testing.assert_array_equal(got, want)
    full = run_model(q, {"x": x})[0]
    assert not np.array_equal(got, full), "excluding a node must change the output"
    ops = [n.op_type for n in edited.graph.node]
    assert ops.count("DequantizeLinear") < [n.op_type for n in onnx.load(str(q)).graph.node].count("DequantizeLinear")


def test_every_node_float_is_the_float_model(models: tuple[Path, Path, np.ndarray], tmp_path: Path) -> None:
    base, q, x = models
    qm = onnx.load(str(q))
    edited = keep_float(qm, onnx.load(str(base)), quantized_nodes(qm, OPS), OPS)
    assert not {"QuantizeLinear", "DequantizeLinear"} & {n.op_type for n in edited.graph.node}
    got = run_model(save(edited, tmp_path / "f.onnx"), {"x": x})[0]
    np.testing.assert_allclose(got, run_model(base, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_unknown_names_change_nothing(models: tuple[Path, Path, np.ndarray]) -> None:
    base, q, _ = models
    qm = onnx.load(str(q))
    assert keep_float(qm, onnx.load(str(base)), ["no-such-node"], OPS) == qm
