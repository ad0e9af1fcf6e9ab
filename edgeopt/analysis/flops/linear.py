"""Counters for the ops that do the multiply-accumulate work: convolutions, Gemm and matrix products.

FLOPs are ``2 * MACs`` (one multiply and one add each), plus one add per output element for a bias.
Quantized variants (``ConvInteger``, ``QLinearConv``, ``MatMulInteger``, ``QLinearMatMul``, ``MatMulNBits``)
count the same MACs; their "FLOPs" are integer operations.
"""

from __future__ import annotations

import math

import onnx

from .registry import OpCount, ShapeMap, has_input, int_attr, numel, register, static


def _conv(node: onnx.NodeProto, shapes: ShapeMap, w: int, bias: int | None) -> OpCount | None:
    """Conv with weight input ``w`` and optional bias input ``bias`` (indices); output ``[N, Cout, ...]``."""
    w_shape, y_shape = static(shapes, node.input[w]), static(shapes, node.output[0])
    if w_shape is None or y_shape is None or len(y_shape) < 2 or len(w_shape) < 2:
        return None
    batch, c_out, out_spatial = y_shape[0], y_shape[1], math.prod(y_shape[2:])
    c_in_per_group, kernel = w_shape[1], math.prod(w_shape[2:])  # W is [Cout, Cin/group, *kernel]
    macs = batch * c_out * out_spatial * c_in_per_group * kernel
    adds = batch * c_out * out_spatial if bias is not None and has_input(node, bias) else 0
    return OpCount(macs=macs, flops=2 * macs + adds)


@register("Conv")
def conv(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """MACs = N * Cout * prod(out spatial) * (Cin/group) * prod(kernel); 1D, 2D, 3D, grouped, depthwise."""
    return _conv(node, shapes, w=1, bias=2)


@register("ConvInteger")
def conv_integer(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """As Conv; zero points are not counted."""
    return _conv(node, shapes, w=1, bias=None)


@register("QLinearConv")
def qlinear_conv(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """As Conv (inputs x, x_scale, x_zp, w, ...; bias at index 8); requantization is not counted."""
    return _conv(node, shapes, w=3, bias=8)


@register("ConvTranspose")
def conv_transpose(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """MACs = N * Cin * prod(in spatial) * (Cout/group) * prod(kernel): each input pixel scatters a kernel."""
    x_shape, w_shape = static(shapes, node.input[0]), static(shapes, node.input[1])
    if x_shape is None or w_shape is None or len(x_shape) < 2 or len(w_shape) < 2:
        return None
    batch, c_in, in_spatial = x_shape[0], x_shape[1], math.prod(x_shape[2:])
    c_out_per_group, kernel = w_shape[1], math.prod(w_shape[2:])  # W is [Cin, Cout/group, *kernel]
    macs = batch * c_in * in_spatial * c_out_per_group * kernel
    adds = 0
    if has_input(node, 2):
        out = numel(shapes, node.output[0])
        if out is None:
            return None
        adds = out
    return OpCount(macs=macs, flops=2 * macs + adds)


@register("Gemm")
def gemm(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """MACs = M * N * K honouring transA/transB; + M * N adds for C. alpha/beta scaling is not counted."""
    a, b = static(shapes, node.input[0]), static(shapes, node.input[1])
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        return None
    m, k = (a[1], a[0]) if int_attr(node, "transA", 0) else (a[0], a[1])
    n = b[0] if int_attr(node, "transB", 0) else b[1]
    macs = m * n * k
    return OpCount(macs=macs, flops=2 * macs + (m * n if has_input(node, 2) else 0))


def _broadcast_numel(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    """Element count of the numpy broadcast of two batch shapes."""
    width = max(len(left), len(right))
    padded_l, padded_r = (1,) * (width - len(left)) + left, (1,) * (width - len(right)) + right
    return math.prod(max(dl, dr) for dl, dr in zip(padded_l, padded_r, strict=True))


def _matmul(shapes: ShapeMap, a_name: str, b_name: str) -> OpCount | None:
    a, b = static(shapes, a_name), static(shapes, b_name)
    if a is None or b is None or not a or not b:
        return None
    a2 = (1, *a) if len(a) == 1 else a  # numpy: a 1-D left operand is a row vector
    b2 = (*b, 1) if len(b) == 1 else b  # and a 1-D right operand a column vector
    m, k, n = a2[-2], a2[-1], b2[-1]
    macs = _broadcast_numel(a2[:-2], b2[:-2]) * m * n * k
    return OpCount(macs=macs, flops=2 * macs)


@register("MatMul")
def matmul(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """MACs = prod(broadcast batch dims) * M * N * K, 1-D operands promoted as numpy does."""
    return _matmul(shapes, node.input[0], node.input[1])


@register("MatMulInteger")
def matmul_integer(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """As MatMul; zero points are not counted."""
    return _matmul(shapes, node.input[0], node.input[1])


@register("QLinearMatMul")
def qlinear_matmul(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """As MatMul on inputs 0 and 3; requantization is not counted."""
    return _matmul(shapes, node.input[0], node.input[3])


@register("com.microsoft.MatMulNBits")
def matmul_nbits(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """Block-quantized weight MatMul: MACs = prod(A dims but last) * N * K, with K, N from its attributes."""
    a = static(shapes, node.input[0])
    k, n = int_attr(node, "K", 0), int_attr(node, "N", 0)
    if a is None or not a or k <= 0 or n <= 0:
        return None
    macs = math.prod(a[:-1]) * n * k
    return OpCount(macs=macs, flops=2 * macs)
