"""Counters for per-element ops: activations, arithmetic, normalizations and softmax.

These do no multiply-accumulates (MACs = 0). Each output element costs one FLOP, transcendental functions
(``Exp``, ``Tanh``, ``Erf``...) included: their real cost depends on the runtime's implementation, so no
factor is guessed. Variadic ops (``Sum``, ``Max``...) cost one FLOP per output element per extra input.
"""

from __future__ import annotations

import onnx

from .registry import OpCount, ShapeMap, numel, register

_ELEMENTWISE = (
    # arithmetic and comparison
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Neg", "Abs", "Sign", "Reciprocal", "Sqrt", "Exp", "Log",
    "Ceil", "Floor", "Round", "Clip", "Where", "Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual",
    "And", "Or", "Xor", "Not", "IsNaN", "IsInf",
    # activations
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Sigmoid", "HardSigmoid",
    "HardSwish", "Tanh", "Softplus", "Softsign", "Mish", "Gelu", "Erf",
    # trigonometry
    "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
    # (de)quantization: a scale and a zero point per element, counted like one elementwise op
    "QuantizeLinear", "DequantizeLinear",
)  # fmt: skip

_VARIADIC = ("Sum", "Mean", "Max", "Min")


def _per_output_element(node: onnx.NodeProto, shapes: ShapeMap, per_element: int) -> OpCount | None:
    out = numel(shapes, node.output[0])
    return None if out is None else OpCount(macs=0, flops=per_element * out)


def _per_input_element(node: onnx.NodeProto, shapes: ShapeMap, per_element: int) -> OpCount | None:
    size = numel(shapes, node.input[0])
    return None if size is None else OpCount(macs=0, flops=per_element * size)


@register(*_ELEMENTWISE, zero_macs=True)
def elementwise(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = output elements."""
    return _per_output_element(node, shapes, 1)


@register(*_VARIADIC, zero_macs=True)
def variadic(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = output elements * (inputs - 1), at least output elements."""
    present = sum(1 for name in node.input if name)
    return _per_output_element(node, shapes, max(1, present - 1))


@register("BatchNormalization", zero_macs=True)
def batch_norm(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = 2 * elements: inference folds it into one scale and one shift per element."""
    return _per_input_element(node, shapes, 2)


@register("LayerNormalization", "InstanceNormalization", "GroupNormalization", zero_macs=True)
def norm(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = 5 * elements (mean, subtract, variance, normalize, scale-and-shift): an approximation."""
    return _per_input_element(node, shapes, 5)


@register("Softmax", "LogSoftmax", zero_macs=True)
def softmax(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = 3 * elements (exp, sum, divide): an approximation."""
    return _per_input_element(node, shapes, 3)
