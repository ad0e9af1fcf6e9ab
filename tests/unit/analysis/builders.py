"""Tiny ONNX models built in memory for the analysis tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgeopt.analysis.flops import GraphCount, count_graph
from edgeopt.analysis.shapes import infer_shapes

Dims = Sequence[int | str | None] | None


def tensor(name: str, dims: Dims, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
    """A graph input/output declaration."""
    return helper.make_tensor_value_info(name, elem, None if dims is None else list(dims))


def weight(name: str, shape: Sequence[int], dtype: type = np.float32) -> onnx.TensorProto:
    """An initializer filled with small deterministic values."""
    size = int(np.prod(shape)) if shape else 1
    return numpy_helper.from_array((np.arange(size) % 7).astype(dtype).reshape(shape), name)


def model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    inits: Sequence[onnx.TensorProto] = (),
    opset: int = 17,
    extra_opsets: Sequence[tuple[str, int]] = (),
) -> onnx.ModelProto:
    """A model around one graph, at ``opset`` of the default domain."""
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    made = helper.make_model(graph, opset_imports=opsets, producer_name="edgeopt-tests", producer_version="1")
    made.ir_version = 8
    return made


def single(
    node: onnx.NodeProto, x_dims: Dims, inits: Sequence[onnx.TensorProto] = (), opset: int = 17
) -> onnx.ModelProto:
    """A one-node model: input ``x``, output ``y``."""
    return model([node], [tensor("x", x_dims)], [tensor("y", None)], inits, opset=opset)


def count(m: onnx.ModelProto, *, overrides: dict[str, list[int]] | None = None, batch: int = 1) -> GraphCount:
    """Infer shapes and count the main graph of ``m``."""
    info = infer_shapes(m, overrides=overrides, batch=batch)
    return count_graph(m.graph, info.tensors)


def save(m: onnx.ModelProto, directory: Path, name: str = "m.onnx") -> Path:
    """Write ``m`` to ``directory/name`` and return the path."""
    path = directory / name
    onnx.save_model(m, str(path))
    return path


def conv_stack() -> onnx.ModelProto:
    """Conv(3->16, 3x3, pad 1, bias) -> depthwise Conv -> GlobalAveragePool -> Flatten -> Gemm -> MatMul."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16, name="dw"),
        helper.make_node("GlobalAveragePool", ["c2"], ["p"], name="gap"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["g"], transB=1, name="fc"),
        helper.make_node("MatMul", ["g", "w4"], ["y"], name="proj"),
    ]
    inits = [
        weight("w1", [16, 3, 3, 3]),
        weight("b1", [16]),
        weight("w2", [16, 1, 3, 3]),
        weight("w3", [10, 16]),
        weight("b3", [10]),
        weight("w4", [10, 10]),
    ]
    return model(nodes, [tensor("x", ["N", 3, 32, 32])], [tensor("y", ["N", 10])], inits)
