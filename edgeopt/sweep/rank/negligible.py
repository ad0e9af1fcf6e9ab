"""Levels that change a negligible share of the model: shown like a no-change level, never the winner of a tie.

A recipe can change a little and still be "a level": INT4 weight-only quantizes MatMul/Gemm weights only, and on a
CNN classifier that is the final fully-connected layer (issue 32: 6.69 MB against 6.78 MB, the convolutions, all
the time, untouched). Its latency is the original's within noise, so a tie-break on size or retention then picks it
by a coin toss. :func:`mark_negligible` measures, per level, two shares against its runtime's ``fp32`` level:

- ``change_share_size``: how much the artifact's size differs from the fp32 artifact's, ``|1 - size / fp32 size|``
  (what the weights' new storage saved or cost);
- ``change_share_macs``: the share of the model's MACs its ONNX graph computes in another precision
  (:func:`changed_mac_share`: a quantized or low-bit op, an input from a ``DequantizeLinear``, or a float16/bfloat16
  input), counted with :mod:`edgeopt.analysis.flops`. Only read when the size share is already below
  :data:`NEGLIGIBLE_SHARE` (one shape inference per such level, on the host).

A level is ``negligible_change`` when both shares are below :data:`NEGLIGIBLE_SHARE`. Levels that run with runtime
options other than their runtime's fp32 level (OpenVINO's bf16: the same file computed in BF16) and artifacts that
are not ONNX are not judged (their MAC share is unknown): they are never marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from ...analysis.flops import COUNTERS, ZERO_MAC, op_key
from ...analysis.loader import read_model
from ...analysis.shapes import infer_shapes
from ...errors import EdgeoptError
from ..result import Level

NEGLIGIBLE_SHARE = 0.05  # below 5 % of the MACs and of the artifact's size changed: the original model again
_T = onnx.TensorProto
_LOW_FLOATS = frozenset({_T.FLOAT16, _T.BFLOAT16})
# ops that compute in a quantized or low-bit form whatever their inputs' types
_LOW_OPS = frozenset({"MatMulNBits", "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "QGemm",
                      "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "QAttention", "GatherBlockQuantized"})


def _changed(node: onnx.NodeProto, producers: Mapping[str, str], types: Mapping[str, int]) -> bool:
    """Whether ``node`` computes in another precision than FP32."""
    if node.op_type in _LOW_OPS:
        return True
    return any(producers.get(i) == "DequantizeLinear" or types.get(i) in _LOW_FLOATS for i in node.input if i)


def changed_mac_share(path: Path, shapes: Mapping[str, Sequence[int]] | None = None) -> float | None:
    """The share of ``path``'s MACs computed in another precision than FP32; None when it cannot be counted (not
    ONNX, unreadable, no MACs, or a node that may carry MACs without static shapes).

    Args:
        path: the level's artifact.
        shapes: concrete shapes of inputs with dynamic dims (the sweep's, one eval sample's).
    """
    if Path(path).suffix.lower() != ".onnx":
        return None
    try:
        model = read_model(Path(path))
        info = infer_shapes(model, overrides=shapes or None, batch=1, model_name=str(path))
    except (EdgeoptError, ValueError, onnx.checker.ValidationError):
        return None
    graph = model.graph
    producers = {out: n.op_type for n in graph.node for out in n.output}
    types = {name: t.elem_type for name, t in info.tensors.items()}
    total = changed = 0
    for node in graph.node:
        counter = COUNTERS.get(op_key(node))
        count = counter(node, info.tensors) if counter is not None else None
        if count is None:
            if counter is not None and op_key(node) not in ZERO_MAC:
                return None  # a node that may carry MACs but cannot be counted: the share is unknown
            continue
        total += count.macs
        if count.macs and _changed(node, producers, types):
            changed += count.macs
    return changed / total if total else None


def _options(lv: Level) -> dict[str, Any]:
    return dict(lv.runtime_options if lv.runtime_options is not None
                else lv.details.get("effective_runtime_options") or {})


def mark_negligible(levels: Sequence[Level], shapes: Mapping[str, Sequence[int]] | None = None, *,
                    share: float = NEGLIGIBLE_SHARE) -> list[Level]:
    """``levels`` with ``change_share_size``, ``change_share_macs`` and ``negligible_change`` filled in (module
    docstring); fp32 levels, no-change levels and levels not comparable with their runtime's fp32 level unchanged."""
    base = {lv.runtime: lv for lv in levels if lv.recipe == "fp32"}
    out = []
    for lv in levels:
        ref = base.get(lv.runtime)
        if ref is None or lv is ref or lv.no_change or ref.size_bytes <= 0 or _options(lv) != _options(ref):
            out.append(lv)
            continue
        size_share = abs(1 - lv.size_bytes / ref.size_bytes)
        macs = changed_mac_share(Path(lv.artifact), shapes) if size_share < share else None
        out.append(lv.model_copy(update={
            "change_share_size": round(size_share, 6), "change_share_macs": None if macs is None else round(macs, 6),
            "negligible_change": macs is not None and size_share < share and macs < share}))
    return out


def negligible_note(lv: Level) -> str:
    """The warning a negligible-change level gets (in the sweep's warnings)."""
    return (f"recipe {lv.recipe} on {lv.runtime}: negligible change (~ fp32): {pct(lv.change_share_size)} of the "
            f"size, {pct(lv.change_share_macs)} of the MACs changed; never wins a tie within noise over another "
            "level")


def pct(share: float | None) -> str:
    """A share as a percentage with one decimal, "?" when unknown."""
    return "?" if share is None else f"{share * 100:.1f} %"
