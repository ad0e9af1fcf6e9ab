"""The precision guess from ops and weights."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from edgeopt.analysis import model_precision
from edgeopt.enums import Precision

from .builders import model, tensor, weight


def _matmul(w: onnx.TensorProto, elem: int = TensorProto.FLOAT) -> onnx.ModelProto:
    node = helper.make_node("MatMul", ["x", w.name], ["y"])
    return model([node], [tensor("x", [1, 8], elem)], [tensor("y", None, elem)], [w])


def test_fp32(stack_model: onnx.ModelProto) -> None:
    assert model_precision(stack_model) is Precision.FP32


def test_fp16_weights() -> None:
    assert model_precision(_matmul(weight("w", [8, 8], np.float16), TensorProto.FLOAT16)) is Precision.FP16


def test_int8_from_dequantize_linear() -> None:
    nodes = [
        helper.make_node("DequantizeLinear", ["qw", "s"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    inits = [weight("qw", [8, 8], np.int8), weight("s", [])]
    m = model(nodes, [tensor("x", [1, 8])], [tensor("y", None)], inits)
    assert model_precision(m) is Precision.INT8


def test_int4_from_matmul_nbits() -> None:
    node = helper.make_node("MatMulNBits", ["x", "qw", "s"], ["y"], domain="com.microsoft", K=8, N=8)
    inits = [weight("qw", [8, 1, 4], np.uint8), weight("s", [8])]
    m = model([node], [tensor("x", [1, 8])], [tensor("y", None)], inits, extra_opsets=[("com.microsoft", 1)])
    assert model_precision(m) is Precision.INT4
