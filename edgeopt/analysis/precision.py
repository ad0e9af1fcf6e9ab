"""Guess the precision a model computes in, from its ops and stored weights.

The guess picks which peak rate of a target the roofline uses. In order of precedence:

1. ``MatMulNBits`` nodes or 4-bit weights -> ``int4``;
2. ``QuantizeLinear``/``DequantizeLinear``/``QLinear*``/``*Integer`` nodes or 8-bit int weights -> ``int8``;
3. otherwise the float type holding most weight elements: ``float16`` -> ``fp16``, ``bfloat16`` -> ``bf16``;
4. otherwise ``fp32``.
"""

from __future__ import annotations

import math
from collections import Counter

import onnx

from ..enums import Precision
from .walk import iter_graphs

_T = onnx.TensorProto
_INT4_TYPES = {_T.INT4, _T.UINT4}
_INT8_TYPES = {_T.INT8, _T.UINT8}
_FLOAT_PRECISION: dict[int, Precision] = {
    _T.FLOAT: Precision.FP32,
    _T.DOUBLE: Precision.FP32,
    _T.FLOAT16: Precision.FP16,
    _T.BFLOAT16: Precision.BF16,
}
_INT4_OPS = {"MatMulNBits"}
_INT8_OPS = {"QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger",
             "MatMulInteger", "DynamicQuantizeLinear", "QGemm", "QLinearAdd", "QLinearMul"}  # fmt: skip


def model_precision(model: onnx.ModelProto) -> Precision:
    """The precision ``model`` most likely runs in (rules in the module docstring).

    Args:
        model: the loaded model; only op types and initializer types and dims are read.

    Returns:
        The guessed :class:`Precision`.
    """
    op_types: set[str] = set()
    elements: Counter[int] = Counter()
    for graph in iter_graphs(model.graph):
        op_types.update(node.op_type for node in graph.node)
        for tensor in graph.initializer:
            elements[tensor.data_type] += math.prod(tensor.dims)
    if op_types & _INT4_OPS or any(elements[t] for t in _INT4_TYPES):
        return Precision.INT4
    if op_types & _INT8_OPS or any(elements[t] for t in _INT8_TYPES):
        return Precision.INT8
    floats = {t: n for t, n in elements.items() if t in _FLOAT_PRECISION and n}
    if not floats:
        return Precision.FP32
    return _FLOAT_PRECISION[max(floats, key=lambda t: floats[t])]
