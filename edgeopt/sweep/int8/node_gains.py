"""Per-node latency gains of INT8 from per-layer profiles: what keeping each quantized node in float costs.

1. :func:`node_times`: per-layer timings (the agent's layer events: ``name``, ``op_type``, ``original_names``,
   ``duration_us``, as ``edgeopt profile`` returns them, or OpenVINO ``get_profiling_info`` rows turned into
   events) attributed to the ONNX nodes of interest through the names each layer covers. A layer covering several
   nodes of interest is split evenly between them.
2. :func:`latency_gain`: per node, its time in the float model minus its time in the INT8 model (ms). Layers the
   runtime renamed in one model (OpenVINO names a conv fused with its BatchNorm and activation after a
   ``Multiply``) are matched by execution order among layers of the same type, when both models have the same
   sequence of such layers.

3. :func:`gains_between`: per node, float minus INT8 time from two per-node time maps. The sweep's gains
   (:func:`.latency.gains`) use it on ``edgeopt profile``'s node times, whose layers are mapped to ONNX nodes by
   :mod:`edgeopt.profile.mapping` (renamed and fused layers included); :func:`node_times` and :func:`latency_gain`
   work on raw layer events, for the research scripts (``benchmarks/research/``).
4. :func:`float_cost`: what a chosen float set costs by those gains (``sweep.json``).

The float-set search (:mod:`.float_sets`) ranks and chooses nodes by these gains. Plain inputs only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LayerEvent = Mapping[str, Any]
# Layer types that carry a weight op (conv, matmul) in OpenVINO's execution graph and onnxruntime's profile.
WEIGHT_LAYER_TYPES = frozenset({"Convolution", "GroupConvolution", "Deconvolution", "FullyConnected", "MatMul",
                                "Conv", "QLinearConv", "ConvInteger", "Gemm", "QLinearMatMul", "MatMulInteger",
                                "FusedConv", "FusedMatMul", "FusedGemm"})
_SUFFIX = re.compile(r"/(WithoutBiases|DequantizationSubtract|DequantizationMultiply|fq_weights_\d+)$")


@dataclass(frozen=True)
class NodeTimes:
    """Time per node of interest (ms per inference), and the weight layers no node of interest claimed."""

    ms: dict[str, float]
    unmapped: tuple[tuple[str, str, float], ...]  # (layer name, layer type, ms) in execution order


def _covered(event: LayerEvent, nodes: set[str]) -> list[str]:
    names = [str(n) for n in event.get("original_names") or [event.get("name", "")]]
    out: list[str] = []
    for raw in names:
        name = _SUFFIX.sub("", raw)
        if name in nodes and name not in out:
            out.append(name)
    return out


def node_times(events: Sequence[LayerEvent], nodes: Iterable[str]) -> NodeTimes:
    """Attribute each executed layer's time to the nodes of interest it covers (split evenly).

    Args:
        events: one inference's layer events in execution order (median durations when several were kept).
        nodes: the ONNX node names of interest (e.g. the quantized weight nodes).

    Returns:
        ms per node that some layer covers, and the weight layers (:data:`WEIGHT_LAYER_TYPES`) that covered none.
    """
    wanted = set(nodes)
    ms: dict[str, float] = {}
    unmapped: list[tuple[str, str, float]] = []
    for ev in events:
        if ev.get("executed", True) is False:
            continue
        t = float(ev.get("duration_us", 0.0)) / 1e3
        covered = _covered(ev, wanted)
        for name in covered:
            ms[name] = ms.get(name, 0.0) + t / len(covered)
        if not covered and str(ev.get("op_type", "")) in WEIGHT_LAYER_TYPES:
            unmapped.append((str(ev.get("name", "")), str(ev.get("op_type", "")), t))
    return NodeTimes(ms=ms, unmapped=tuple(unmapped))


def _weight_layers(events: Sequence[LayerEvent], nodes: set[str]) -> list[tuple[str, list[str], float]]:
    """(layer type, nodes covered, ms) of the executed weight layers, in execution order."""
    return [(str(ev.get("op_type", "")), _covered(ev, nodes), float(ev.get("duration_us", 0.0)) / 1e3)
            for ev in events if ev.get("executed", True) is not False
            and str(ev.get("op_type", "")) in WEIGHT_LAYER_TYPES]


def _by_order(float_events: Sequence[LayerEvent], int8_events: Sequence[LayerEvent],
              nodes: set[str]) -> dict[str, float]:
    """Float-model times of nodes whose float layer lost its name, matched by order within each layer type.

    Only used when both models run the same number of weight layers of that type; each float layer takes the node
    names the INT8 layer at the same position covers.
    """
    out: dict[str, float] = {}
    fl, il = _weight_layers(float_events, nodes), _weight_layers(int8_events, nodes)
    for kind in {k for k, _, _ in fl}:
        f = [x for x in fl if x[0] == kind]
        i = [x for x in il if x[0] == kind]
        if len(f) != len(i):
            continue
        for (_, f_nodes, t), (_, i_nodes, _) in zip(f, i, strict=True):
            if not f_nodes and i_nodes:
                for name in i_nodes:
                    out[name] = out.get(name, 0.0) + t / len(i_nodes)
    return out


def gains_between(float_ms: Mapping[str, float], int8_ms: Mapping[str, float], nodes: Iterable[str]
                  ) -> dict[str, float]:
    """Per node: its float time minus its INT8 time (ms); a node missing from ``float_ms`` counts its INT8 time
    there (gain 0), one missing from both gains 0."""
    return {n: round(float_ms.get(n, int8_ms.get(n, 0.0)) - int8_ms.get(n, 0.0), 6) for n in nodes}


def latency_gain(float_events: Sequence[LayerEvent], int8_events: Sequence[LayerEvent],
                 nodes: Iterable[str]) -> dict[str, float]:
    """Per node: float time minus INT8 time (ms per inference): the latency lost by keeping it in float.

    A node the float profile does not show, even by execution order, is given its INT8 time as float time
    (gain 0: free to keep in float); a node neither profile shows gains 0 too. Negative gains (the INT8 kernel
    is slower) are kept as measured: those nodes are free.
    """
    wanted = list(nodes)
    fl = node_times(float_events, wanted).ms
    for name, t in _by_order(float_events, int8_events, set(wanted)).items():
        fl.setdefault(name, t)
    il = node_times(int8_events, wanted).ms
    return gains_between(fl, il, wanted)


def float_cost(float_nodes: Sequence[str], gain_ms: Mapping[str, float], top: int = 3) -> dict[str, Any]:
    """What a float set costs by the per-layer profile: ``sweep.json``'s ``float_sets.<runtime>.float_cost``.

    The sum of its nodes' gains (a negative gain, an INT8 kernel slower than float, counts 0) and the ``top``
    costliest nodes with their gains (node -> ms, costliest first). Only their float kernels: the conversions
    between float and INT8 parts are in no node's gain, so a measured mix can be slower than this predicts
    (:mod:`..rank.ceiling` splits the measured cost into the two).
    """
    costs = sorted(((n, max(float(gain_ms.get(n, 0.0)), 0.0)) for n in float_nodes), key=lambda c: (-c[1], c[0]))
    return {"nodes": len(float_nodes), "profiled_ms": round(sum(c for _, c in costs), 4),
            "costliest": {n: round(c, 4) for n, c in costs[:top] if c > 0}}
