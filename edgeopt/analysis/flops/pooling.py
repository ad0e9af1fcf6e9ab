"""Counters for windowed and global reductions: pooling, ``Reduce*``, ``ArgMax``/``ArgMin``.

No multiply-accumulates (MACs = 0): a window pool costs one FLOP per window element per output, a global pool
or a reduction one FLOP per input element.
"""

from __future__ import annotations

import math

import onnx

from .registry import OpCount, ShapeMap, ints_attr, numel, register

_REDUCTIONS = (
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin",
)  # fmt: skip


@register("MaxPool", "AveragePool", "LpPool", zero_macs=True)
def window_pool(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = output elements * prod(kernel_shape)."""
    out = numel(shapes, node.output[0])
    kernel = ints_attr(node, "kernel_shape")
    if out is None or not kernel:
        return None
    return OpCount(macs=0, flops=out * math.prod(kernel))


@register("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", *_REDUCTIONS, zero_macs=True)
def reduction(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """FLOPs = input elements."""
    size = numel(shapes, node.input[0])
    return None if size is None else OpCount(macs=0, flops=size)
