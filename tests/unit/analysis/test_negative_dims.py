"""Paddle-style exports write -1 for a dynamic dim: it must behave like a symbolic dim, never as a size."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgeopt.analysis import inspect_model


def _conv_with_minus_one_batch(path: Path) -> Path:
    w = numpy_helper.from_array(np.ones((3, 4, 3, 3), np.float32), "W")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["y"], pads=[1, 1, 1, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 3, 8, 8])], [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def test_minus_one_dim_is_a_symbol_that_takes_the_batch(tmp_path):
    path = _conv_with_minus_one_batch(tmp_path / "neg.onnx")
    one = inspect_model(path)
    assert one.inputs[0].shape[0] == "x_dim0"
    assert one.macs == 1 * 3 * 8 * 8 * 4 * 3 * 3
    assert inspect_model(path, batch=2).macs == 2 * one.macs
    assert inspect_model(path, shapes={"x": [3, 4, 8, 8]}).macs == 3 * one.macs
