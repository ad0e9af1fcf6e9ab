"""Compare two profiles layer by layer (``edgeopt profile A --vs B``): which ONNX nodes got faster or slower,
which layers only one side has (reorders/converts the runtime inserted, kernels of Q/DQ nodes), which precisions
changed, and which nodes quantized in the ONNX still ran a float kernel.

Layers are matched through the ONNX nodes they cover, by name, Q/DQ nodes left out (an INT8 model from
``quantize_int8`` keeps the float model's node names): layers of A and B that share a weight op (conv, matmul) fall
into one row, so different fusion decisions on the two sides still line up. A layer without a weight op (an
activation or elementwise layer one side ran apart) joins the row of a weight layer that covers one of its nodes,
else the row of another such layer that covers one (the first found: it never merges two rows). Joining rows
through any shared node instead chains them wherever the two sides fuse a conv's epilogue differently: PP-OCRv4 det
on OpenVINO with AMX, INT8 against bf16, came out as one row of 358 nodes, a third of the network.
"""

from __future__ import annotations

from collections.abc import Sequence

from .explain import explain
from .graph import QDQ_OPS
from .schema import ExtraLayer, Headline, LayerDelta, LayerOrigin, LayerRecord, ProfileComparison, ProfileResult

# ONNX ops with a weight (MACs): each runs in exactly one layer on each side, so rows are joined through them
WEIGHT_OPS = frozenset({"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "MatMul", "MatMulInteger",
                        "QLinearMatMul", "Gemm"})


def _compute_nodes(layer: LayerRecord) -> list[str]:
    return [n for n, op in zip(layer.onnx_nodes, layer.onnx_op_types, strict=True) if op not in QDQ_OPS]


def _weight_nodes(layer: LayerRecord) -> list[str]:
    return [n for n, op in zip(layer.onnx_nodes, layer.onnx_op_types, strict=True) if op in WEIGHT_OPS]


class _Groups:
    """Union-find over layer keys ("a", i) / ("b", j)."""

    def __init__(self) -> None:
        self.parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(self, x: tuple[str, int]) -> tuple[str, int]:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, x: tuple[str, int], y: tuple[str, int]) -> None:
        self.parent[self.find(x)] = self.find(y)


def _joined(values: Sequence[str]) -> str:
    return "+".join(dict.fromkeys(values)) or "-"


def _row(a: list[LayerRecord], b: list[LayerRecord]) -> LayerDelta:
    nodes = list(dict.fromkeys(n for layer in a + b for n in _compute_nodes(layer)))
    heaviest = max(a + b, key=lambda layer: (layer.flops or 0, layer.median_ms))
    a_ms, b_ms = sum(x.median_ms for x in a), sum(x.median_ms for x in b)
    a_prec = _joined([x.precision.value for x in a])
    b_prec = _joined([x.precision.value for x in b])
    quantized = any(x.quantized_in_onnx for x in b)
    a_quantized = any(x.quantized_in_onnx for x in a)
    return LayerDelta(
        onnx_nodes=nodes, op_type=heaviest.primary_op, a_kernels=[x.kernel for x in a], b_kernels=[x.kernel for x in b],
        a_ms=a_ms, b_ms=b_ms, delta_ms=b_ms - a_ms, ratio=b_ms / a_ms if a_ms > 0 else None, a_precision=a_prec,
        b_precision=b_prec, a_impl=_joined([x.impl for x in a]), b_impl=_joined([x.impl for x in b]),
        precision_changed=bool(a and b) and a_prec != b_prec, b_quantized_in_onnx=quantized,
        b_float_kernel=quantized and bool(b) and all(x.precision.is_float for x in b if x.quantized_in_onnx),
        a_quantized_in_onnx=a_quantized,
        a_float_kernel=a_quantized and bool(a) and all(x.precision.is_float for x in a if x.quantized_in_onnx),
    )


def _extra(side: str, layer: LayerRecord) -> ExtraLayer:
    kind = "quantize" if layer.origin is LayerOrigin.ONNX else layer.origin.value  # ONNX here: Q/DQ nodes only
    return ExtraLayer(side=side, kernel=layer.kernel, op_type=layer.op_type, kind=kind, median_ms=layer.median_ms)


def _group(sides: dict[str, list[LayerRecord]]) -> tuple[_Groups, list[ExtraLayer]]:
    """The rows as union-find groups (module docstring), and the layers covering no compute node (one side only)."""
    groups = _Groups()
    extra: list[ExtraLayer] = []
    weight_owner: dict[str, tuple[str, int]] = {}  # weight op -> its first layer
    covered_by_weight: dict[str, tuple[str, int]] = {}  # any compute node a weight layer covers -> that layer
    rest: list[tuple[tuple[str, int], list[str]]] = []
    for side, layers in sides.items():
        for i, layer in enumerate(layers):
            nodes, weights = _compute_nodes(layer), _weight_nodes(layer)
            if not nodes:
                extra.append(_extra(side, layer))
                continue
            groups.find((side, i))
            if not weights:
                rest.append(((side, i), nodes))
                continue
            for node in weights:
                groups.union((side, i), weight_owner.setdefault(node, (side, i)))
            for node in nodes:
                covered_by_weight.setdefault(node, (side, i))
    first_owner: dict[str, tuple[str, int]] = {}  # compute node -> the first layer without a weight op covering it
    homeless: list[tuple[tuple[str, int], list[str]]] = []
    for key, nodes in rest:
        home = next((covered_by_weight[n] for n in nodes if n in covered_by_weight), None)
        if home is None:
            homeless.append((key, nodes))
            continue
        groups.union(key, home)
        for node in nodes:
            first_owner.setdefault(node, key)
    for key, nodes in homeless:  # each joins one row at most: a layer never merges two rows (no chains)
        owner = next((first_owner[n] for n in nodes if n in first_owner), None)
        if owner is not None:
            groups.union(key, owner)
        for node in nodes:
            first_owner.setdefault(node, key)
    return groups, extra


def compare_profiles(a: ProfileResult, b: ProfileResult, headline: Headline | None = None) -> ProfileComparison:
    """Match ``a``'s and ``b``'s executed layers through their ONNX nodes (module docstring) and explain.

    ``headline``: A and B timed in interleaved rounds (:mod:`.headline`); its speedup and interval then make the
    headline, else the two profiles' unprofiled p50s do (measured minutes apart: noisy).
    """
    sides = {"a": [x for x in a.layers if x.executed], "b": [x for x in b.layers if x.executed]}
    groups, extra = _group(sides)
    members: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for key in list(groups.parent):
        members.setdefault(groups.find(key), []).append(key)
    rows = [_row([sides["a"][i] for s, i in keys if s == "a"], [sides["b"][i] for s, i in keys if s == "b"])
            for keys in members.values()]
    rows.sort(key=lambda r: -abs(r.delta_ms))
    extra.sort(key=lambda e: -e.median_ms)
    speedup = a.unprofiled_p50_ms / b.unprofiled_p50_ms if b.unprofiled_p50_ms > 0 else 0.0
    partial = ProfileComparison(
        a=a, b=b, speedup=headline.speedup if headline is not None else speedup, headline=headline, layers=rows,
        extra=extra,
        extra_a_ms=sum(e.median_ms for e in extra if e.side == "a"),
        extra_b_ms=sum(e.median_ms for e in extra if e.side == "b"),
        precision_changed=[r.onnx_nodes[0] for r in rows if r.precision_changed and r.onnx_nodes],
        float_despite_qdq=[r.onnx_nodes[0] for r in rows if r.b_float_kernel and r.onnx_nodes],
        float_despite_qdq_a=[r.onnx_nodes[0] for r in rows if r.a_float_kernel and r.onnx_nodes],
        explanation=[],
    )
    return partial.model_copy(update={"explanation": explain(partial)})
