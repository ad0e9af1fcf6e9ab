"""Ops that only move, reshape or relabel data: known to cost zero FLOPs, whatever their shapes.

Registering them keeps the *uncounted* list meaningful: it names only ops whose arithmetic edgeopt does not
know, not every ``Reshape`` in the model.
"""

from __future__ import annotations

import onnx

from .registry import OpCount, ShapeMap, register

_ZERO_COST = (
    "Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND", "Squeeze",
    "Unsqueeze", "Flatten", "Identity", "Shape", "Size", "Constant", "ConstantOfShape", "Cast", "CastLike",
    "Expand", "Tile", "Pad", "DepthToSpace", "SpaceToDepth", "Dropout",
)  # fmt: skip


@register(*_ZERO_COST, zero_macs=True)
def data_movement(node: onnx.NodeProto, shapes: ShapeMap) -> OpCount | None:
    """Zero MACs and zero FLOPs (memory traffic is accounted for in the roofline's bytes, not here)."""
    return OpCount(macs=0, flops=0)
