"""Join the agent's per-layer records with the ONNX graph and the target's roofline.

Per layer: the ONNX nodes it covers (:mod:`.mapping`), the MACs/FLOPs of the nodes whose cost it carries, the
bytes crossing its boundary, then achieved GOP/s, arithmetic intensity and the roof it sits under on the target
(the target's peak for the layer's precision and its memory bandwidth, as ``edgeopt inspect`` uses them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..analysis.roofline import roofline
from ..enums import Precision
from ..targets.schema import Target
from .graph import QDQ_OPS, GraphIndex
from .mapping import Coverage, is_inserted, map_layers
from .schema import KernelPrecision, LayerOrigin, LayerRecord, OpTypeSummary

_ROOF_PRECISION = {KernelPrecision.FP16: Precision.FP16, KernelPrecision.BF16: Precision.BF16,
                   KernelPrecision.INT8: Precision.INT8, KernelPrecision.INT4: Precision.INT4}


def roof_precision(precision: KernelPrecision) -> Precision:
    """The precision whose peak a layer's compute roof uses: the one its kernel ran in (fp32 for the others)."""
    return _ROOF_PRECISION.get(precision, Precision.FP32)


def roof_peaks_note(layers: Sequence[LayerRecord], target: Target | None) -> str | None:
    """One sentence naming the peak each precision's layers were judged against, with its source, or None."""
    ran = sorted({x.precision for x in layers if x.executed and x.roof_gops is not None}, key=lambda k: k.value)
    if target is None or not ran:
        return None
    parts = []
    for kernel in ran:
        peak = target.peak_ops_per_s(roof_precision(kernel))
        if peak is not None:
            parts.append(f"{kernel.value} layers {peak[0] / 1e9:,.0f} GOP/s ({peak[1]})")
    if not parts:
        return None
    return ("compute roofs use the peak of the precision each layer ran in (a bf16 or int8 kernel against the FP32 "
            "peak would show over 100 %): " + "; ".join(parts))


def _primary(graph: GraphIndex, nodes: Sequence[int], fallback: str) -> str:
    if not nodes:
        return fallback
    compute = [i for i in nodes if graph.nodes[i].op_type not in QDQ_OPS] or list(nodes)
    best = max(compute, key=lambda i: (graph.nodes[i].flops, -i))
    return graph.nodes[best].op_type


def _roof(flops: int, moved: int | None, median_ms: float, precision: KernelPrecision,
          target: Target | None) -> dict[str, Any]:
    out: dict[str, Any] = {"achieved_gops": None, "arithmetic_intensity": None, "bound": None, "roof_gops": None,
                           "roof_fraction": None}
    if flops <= 0:
        return out
    if median_ms > 0:
        out["achieved_gops"] = flops / (median_ms * 1e-3) / 1e9
    if not moved:
        return out
    out["arithmetic_intensity"] = flops / moved
    roof = roofline(flops, moved, target, roof_precision(precision)) if target else None
    if roof is not None and roof.lower_bound_latency_ms > 0:
        out["bound"] = roof.bound
        out["roof_gops"] = flops / (roof.lower_bound_latency_ms * 1e-3) / 1e9
        if out["achieved_gops"] is not None:
            out["roof_fraction"] = out["achieved_gops"] / out["roof_gops"]
    return out


def _record(raw: dict[str, Any], k: int, graph: GraphIndex | None, cover: Coverage | None,
            target: Target | None) -> LayerRecord:
    precision = KernelPrecision.parse(raw.get("precision"))
    median_ms = float(raw.get("median_us", 0.0)) / 1e3
    nodes = cover.covered[k] if cover is not None else []
    owned = cover.owned[k] if cover is not None else []
    op_type = str(raw.get("op_type", ""))
    if graph is None or cover is None:
        origin = LayerOrigin.INSERTED if is_inserted(op_type, str(raw.get("name", ""))) else LayerOrigin.UNMAPPED
        costs: dict[str, Any] = {"macs": None, "flops": None, "bytes_moved": None, **_roof(0, None, 0, precision, None)}
    else:
        origin = LayerOrigin.ONNX if nodes else (
            LayerOrigin.INSERTED if is_inserted(op_type, str(raw.get("name", ""))) else LayerOrigin.UNMAPPED)
        flops = sum(graph.nodes[i].flops for i in owned)
        moved = graph.boundary_bytes(owned) if owned else None
        costs = {"macs": sum(graph.nodes[i].macs for i in owned), "flops": flops, "bytes_moved": moved,
                 **_roof(flops, moved, median_ms, precision, target)}
    return LayerRecord(
        kernel=str(raw.get("name", "")), op_type=op_type, impl=str(raw.get("impl", "")),
        provider=str(raw.get("provider", "")), precision=precision, origin=origin,
        onnx_nodes=[graph.nodes[i].label for i in nodes] if graph else [],
        onnx_op_types=[graph.nodes[i].op_type for i in nodes] if graph else [],
        onnx_node_flops=[graph.nodes[i].flops if i in owned else 0 for i in nodes] if graph else [],
        primary_op=_primary(graph, owned or nodes, op_type) if graph else op_type,
        executed=bool(raw.get("executed", True)), order=int(raw.get("order", k)), calls=int(raw.get("calls", 1)),
        median_ms=median_ms, p90_ms=float(raw.get("p90_us", 0.0)) / 1e3, mean_ms=float(raw.get("mean_us", 0.0)) / 1e3,
        share=min(1.0, max(0.0, float(raw.get("share", 0.0)))),
        quantized_in_onnx=graph is not None and any(graph.quantized(i) for i in owned or nodes),
        **costs,
    )


def join_layers(raw_layers: Sequence[dict[str, Any]], graph: GraphIndex | None,
                target: Target | None) -> tuple[list[LayerRecord], list[str]]:
    """Typed layer records, most time first, and the ONNX nodes no layer covers."""
    cover = map_layers(raw_layers, graph) if graph is not None else None
    records = [_record(raw, k, graph, cover, target) for k, raw in enumerate(raw_layers)]
    records.sort(key=lambda r: (-r.median_ms, r.order))
    unmapped = [graph.nodes[i].label for i in cover.unmapped_nodes] if graph is not None and cover else []
    return records, unmapped


def per_op_type(layers: Sequence[LayerRecord]) -> list[OpTypeSummary]:
    """Executed layers grouped by primary op type (inserted ones by runtime type), most time first."""
    groups: dict[str, list[LayerRecord]] = defaultdict(list)
    for layer in layers:
        if layer.executed:
            key = layer.primary_op if layer.origin is LayerOrigin.ONNX else f"{layer.op_type} ({layer.origin.value})"
            groups[key].append(layer)
    total = sum(layer.median_ms for layer in layers) or 1.0
    out = []
    for key, members in groups.items():
        ms = sum(m.median_ms for m in members)
        known = [m.flops for m in members if m.flops is not None]
        flops = sum(known) if known else None
        out.append(OpTypeSummary(op_type=key, layers=len(members), median_ms=ms, share=min(1.0, ms / total),
                                 flops=flops, achieved_gops=flops / (ms * 1e-3) / 1e9 if flops and ms > 0 else None))
    return sorted(out, key=lambda s: -s.median_ms)
