"""MAC and FLOP counting for the main graph of an ONNX model.

One small counter per op family, registered by op key in :data:`.registry.COUNTERS` (see
``docs/inspect.md`` for the full table). Conventions:

- A MAC is one multiply-accumulate; ``FLOPs = 2 * MACs`` for Conv, ConvTranspose, Gemm and MatMul, plus one
  add per output element for a bias (Conv, ConvTranspose) or ``C`` (Gemm, whose alpha/beta are ignored).
- Conv: ``N * Cout * prod(out spatial) * (Cin/group) * prod(kernel)``; ConvTranspose:
  ``N * Cin * prod(in spatial) * (Cout/group) * prod(kernel)``; MatMul: ``prod(batch) * M * N * K``.
- Pools: output elements * prod(kernel); global pools and reductions: input elements.
- BatchNormalization 2, Layer/Instance/GroupNormalization 5, Softmax 3 FLOPs per element (approximations).
- Elementwise ops, transcendental ones included: 1 FLOP per output element.
- Data movement (Reshape, Transpose, Concat...) costs 0; any other op costs 0 and is listed as *uncounted*.
- A node whose needed shapes are not static counts 0 and is listed as *unresolved*; when every unresolved node is
  of a zero-MAC op (elementwise, pool, data movement), the MAC count is still complete (``macs_complete``).
- Nodes inside subgraphs (If, Loop, Scan bodies) are not counted; their op types are listed as uncounted
  with an ``(in subgraph)`` suffix.
"""

from __future__ import annotations

from collections import Counter as Tally
from dataclasses import dataclass

import onnx

from ..walk import iter_graphs, subgraphs
from . import linear, movement, pointwise, pooling  # noqa: F401  (registers the counters)
from .registry import COUNTERS, ZERO_MAC, OpCount, ShapeMap, op_key, register

__all__ = ["COUNTERS", "ZERO_MAC", "GraphCount", "OpCount", "OpTotals", "count_graph", "op_key", "register"]


@dataclass(frozen=True)
class OpTotals:
    """Nodes of one op type and the work they do together."""

    count: int
    macs: int
    flops: int


@dataclass(frozen=True)
class GraphCount:
    """Result of :func:`count_graph`."""

    macs: int
    flops: int
    per_op: dict[str, OpTotals]  # op key -> totals, most FLOPs first
    uncounted_ops: list[str]  # op keys with no counter, and "Op (in subgraph)" keys; sorted
    unresolved_nodes: list[str]  # nodes skipped for want of static shapes, in graph order
    subgraph_nodes: int  # nodes inside If/Loop/Scan bodies, not counted
    unresolved_mac_nodes: list[str]  # the unresolved nodes whose op may carry MACs (not a ZERO_MAC op)

    @property
    def macs_complete(self) -> bool:
        """No node that could carry MACs is unresolved: ``macs`` is the model's count even if ``flops`` is not."""
        return not self.unresolved_mac_nodes


def _node_label(node: onnx.NodeProto, index: int) -> str:
    return node.name or f"{node.op_type}#{index}"


def count_graph(graph: onnx.GraphProto, shapes: ShapeMap) -> GraphCount:
    """Count MACs and FLOPs of every node of ``graph`` (not of its subgraphs).

    Args:
        graph: the model's main graph.
        shapes: tensor name -> inferred type and shape (from :func:`..shapes.infer_shapes`).

    Returns:
        Totals, per-op-type totals, and what could not be counted.
    """
    nodes: Tally[str] = Tally()
    macs: Tally[str] = Tally()
    flops: Tally[str] = Tally()
    uncounted: set[str] = set()
    unresolved: list[str] = []
    unresolved_mac: list[str] = []
    subgraph_nodes = 0
    for index, node in enumerate(graph.node):
        key = op_key(node)
        nodes[key] += 1
        for sub in subgraphs(node):
            for inner in iter_graphs(sub):
                subgraph_nodes += len(inner.node)
                uncounted.update(f"{op_key(n)} (in subgraph)" for n in inner.node)
        counter = COUNTERS.get(key)
        if counter is None:
            uncounted.add(key)
            continue
        count = counter(node, shapes)
        if count is None:
            unresolved.append(_node_label(node, index))
            if key not in ZERO_MAC:
                unresolved_mac.append(_node_label(node, index))
            continue
        macs[key] += count.macs
        flops[key] += count.flops
    per_op = {key: OpTotals(count=n, macs=macs[key], flops=flops[key]) for key, n in nodes.items()}
    ordered = dict(sorted(per_op.items(), key=lambda item: (-item[1].flops, -item[1].count, item[0])))
    return GraphCount(
        macs=sum(macs.values()),
        flops=sum(flops.values()),
        per_op=ordered,
        uncounted_ops=sorted(uncounted),
        unresolved_nodes=unresolved,
        subgraph_nodes=subgraph_nodes,
        unresolved_mac_nodes=unresolved_mac,
    )
