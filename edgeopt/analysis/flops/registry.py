"""The op counter registry: op key -> function computing one node's MACs and FLOPs from inferred shapes.

A counter returns :class:`OpCount`, or ``None`` when a shape it needs is not known (a dynamic dim nobody
resolved); the node is then reported as *unresolved* instead of silently counted as zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import onnx

from ...errors import EdgeoptError
from ..shapes import TensorType
from ..walk import DEFAULT_DOMAINS


@dataclass(frozen=True)
class OpCount:
    """Work done by one node: multiply-accumulates and floating-point (or integer) operations."""

    macs: int
    flops: int


ShapeMap = Mapping[str, TensorType]
Counter = Callable[[onnx.NodeProto, ShapeMap], "OpCount | None"]

COUNTERS: dict[str, Counter] = {}
ZERO_MAC: set[str] = set()  # op keys whose counter never returns MACs: an unresolved one leaves the MACs complete


def op_key(node: onnx.NodeProto) -> str:
    """``Conv`` for default-domain ops, ``com.microsoft.MatMulNBits`` for the others."""
    return node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"


def register(*keys: str, zero_macs: bool = False) -> Callable[[Counter], Counter]:
    """Register a counter for one or more op keys (see :func:`op_key`); a key registered twice is an error.

    ``zero_macs``: the ops never multiply-accumulate (elementwise, pools, data movement), so one whose shapes are
    unknown leaves only the FLOP count partial (a YOLO anchor grid's ``Add`` must not hide the model's MACs).
    """

    def decorate(func: Counter) -> Counter:
        for key in keys:
            if key in COUNTERS:
                raise EdgeoptError(
                    f"op counter for {key!r} registered twice "
                    f"({COUNTERS[key].__name__} and {func.__name__}): remove one registration"
                )
            COUNTERS[key] = func
            if zero_macs:
                ZERO_MAC.add(key)
        return func

    return decorate


# Small helpers shared by the counter families.


def has_input(node: onnx.NodeProto, index: int) -> bool:
    """Whether optional input ``index`` is present (omitted optional inputs are empty names)."""
    return len(node.input) > index and node.input[index] != ""


def static(shapes: ShapeMap, name: str) -> tuple[int, ...] | None:
    """The static shape of tensor ``name``, or ``None`` if it is unknown or has a dynamic dim."""
    info = shapes.get(name)
    return None if info is None else info.static


def numel(shapes: ShapeMap, name: str) -> int | None:
    """Element count of tensor ``name``, or ``None`` if its shape is not static."""
    shape = static(shapes, name)
    return None if shape is None else math.prod(shape)


def int_attr(node: onnx.NodeProto, name: str, default: int) -> int:
    """Integer attribute ``name`` of ``node``, or ``default`` when absent."""
    for attr in node.attribute:
        if attr.name == name:
            return int(attr.i)
    return default


def ints_attr(node: onnx.NodeProto, name: str) -> list[int] | None:
    """Integer-list attribute ``name`` of ``node``, or ``None`` when absent."""
    for attr in node.attribute:
        if attr.name == name:
            return [int(v) for v in attr.ints]
    return None
