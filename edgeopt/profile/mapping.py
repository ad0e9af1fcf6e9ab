"""Map a runtime's layers back to the ONNX nodes they cover.

1. **Anchors.** Each layer names source nodes: OpenVINO lists them (``originalLayersNames``), TensorRT joins them
   in its layer names, ORT names a fused node after one source node or output tensor (``conv1_token_3``,
   ``relu1_nchwc``) and reports the source ``node_index`` of nodes it kept. :meth:`GraphIndex.resolve` turns each
   name into a node; a node anchored by an executed layer is not also given to a layer that did not run.
2. **Fused nodes.** Nodes no layer names were fused into a neighbour or folded away at load. Each is given to a
   neighbouring layer, in the direction runtimes fuse: compute nodes (MACs > 0), DequantizeLinear and nodes fed by
   constants only (weight paths) go to the layer of their consumer (the nearest owned one, past unnamed nodes
   without MACs: a folded BatchNorm); everything else (activations, QuantizeLinear, reshapes) to the layer of
   their producer. What still has no layer after both directions is reported as unmapped.

A layer naming no node of the graph is *inserted* when the runtime's type says it converts layout or precision
(reorders, transposes, converts, copies), else *unmapped*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .graph import GraphIndex

CONSUMER_HOPS = 3  # unowned nodes a node's consumer search looks past (a folded BatchNorm's Mul and Add)
# Bumped when a layer's nodes can change for the same profile (2: the consumer search looks past unnamed nodes),
# so what was derived from an older mapping (the INT8 search's cached per-node gains) is measured again.
MAPPING_VERSION = 2
_INSERTED_TYPES = ("reorder", "transpose", "convert", "cast", "reformat", "memcpy", "copy", "layout")


@dataclass(frozen=True)
class Coverage:
    """Per layer: the nodes it covers (anchors and fused ones) and those whose cost it carries (``owned``)."""

    covered: list[list[int]]
    owned: list[list[int]]
    unmapped_nodes: list[int]


def is_inserted(op_type: str, name: str) -> bool:
    """Whether a runtime layer type/name says it is a layout or precision conversion the runtime added."""
    text = f"{op_type} {name}".lower()
    return any(word in text for word in _INSERTED_TYPES)


def _anchors(layer: dict[str, Any], graph: GraphIndex) -> set[int]:
    found: set[int] = set()
    for name in layer.get("original_names") or []:
        hit = graph.resolve(str(name))
        if hit is not None:
            found.add(hit)
    index = layer.get("node_index")
    if (not found and isinstance(index, int) and 0 <= index < len(graph.nodes)
            and graph.nodes[index].op_type.split(".")[-1] == str(layer.get("op_type", ""))):
        found.add(index)  # ORT kept this source node as it was (an unnamed node, too)
    return found


def _prefers_consumer(graph: GraphIndex, i: int) -> bool:
    node = graph.nodes[i]
    if node.macs > 0 or node.op_type == "DequantizeLinear":
        return True
    real = [t for t in node.inputs if t]
    return not real or all(t in graph.constant for t in real)


def _consumer_owner(graph: GraphIndex, i: int, owner: dict[int, int]) -> int | None:
    """The layer of the nearest owned consumer of node ``i``, looking past unowned nodes without MACs (at most
    :data:`CONSUMER_HOPS` deep, never past another compute node). OpenVINO folds a BatchNorm's Mul into the conv
    before it and names the fused layer after that Mul, so the conv and the Mul are both unnamed and the conv's
    layer is known only from the named ops after the Mul: one hop found none, and the conv went to the layer
    before it, the previous conv's (PP-OCRv4 rec: each depthwise conv was charged its 1x1 neighbour's time)."""
    frontier, seen = [i], {i}
    for _ in range(CONSUMER_HOPS):
        nxt: list[int] = []
        for j in frontier:
            for t in graph.nodes[j].outputs:
                for c in graph.consumers.get(t, []):
                    if c in owner:
                        return owner[c]
                    if c not in seen and graph.nodes[c].macs == 0:
                        seen.add(c)
                        nxt.append(c)
        frontier = nxt
    return None


def _neighbour_owner(graph: GraphIndex, i: int, owner: dict[int, int], toward_consumer: bool) -> int | None:
    node = graph.nodes[i]
    if toward_consumer:
        return _consumer_owner(graph, i, owner)
    for t in node.inputs:
        p = graph.producer.get(t)
        if t and t not in graph.constant and p is not None and p in owner:
            return owner[p]
    return None


def _attribute(graph: GraphIndex, owner: dict[int, int]) -> None:
    """Give every unowned node to a neighbouring layer (module docstring, step 2), in place."""
    order = range(len(graph.nodes))
    for strict in (True, False):
        for i in order:  # producer direction, graph order: a chain of activations follows its producer
            if i not in owner and not (strict and _prefers_consumer(graph, i)):
                hit = _neighbour_owner(graph, i, owner, toward_consumer=False)
                if hit is not None:
                    owner[i] = hit
        for i in reversed(order):  # consumer direction, reverse order: weight paths join their consumer
            if i not in owner and (not strict or _prefers_consumer(graph, i)):
                hit = _neighbour_owner(graph, i, owner, toward_consumer=True)
                if hit is not None:
                    owner[i] = hit


def map_layers(layers: Sequence[dict[str, Any]], graph: GraphIndex) -> Coverage:
    """Cover every layer with ONNX nodes (module docstring); ``layers`` are the agent's layer records."""
    anchors = [_anchors(layer, graph) for layer in layers]
    executed_anchored = set().union(*(a for a, layer in zip(anchors, layers, strict=True)
                                      if layer.get("executed", True))) if anchors else set()
    for a, layer in zip(anchors, layers, strict=True):
        if not layer.get("executed", True):
            a -= executed_anchored
    owner: dict[int, int] = {}
    by_time = sorted(range(len(layers)), key=lambda k: -float(layers[k].get("median_us", 0.0)))
    for k in reversed(by_time):  # a node two layers name: the slower layer carries its cost
        for i in anchors[k]:
            owner[i] = k
    _attribute(graph, owner)
    owned: list[list[int]] = [[] for _ in layers]
    for i, k in owner.items():
        owned[k].append(i)
    covered = [sorted(set(anchors[k]) | set(owned[k])) for k in range(len(layers))]
    unmapped = [i for i in range(len(graph.nodes)) if i not in owner]
    return Coverage(covered=covered, owned=[sorted(o) for o in owned], unmapped_nodes=unmapped)
