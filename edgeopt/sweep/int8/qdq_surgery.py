"""Mixed precision without re-calibrating: put chosen nodes of a calibrated QDQ model back in float.

A QDQ model computes every quantized node on ``DequantizeLinear`` outputs: weights come from an int8 initializer
through ``DequantizeLinear`` and activations through a ``QuantizeLinear -> DequantizeLinear`` pair that follows
the float tensor. Keeping a node in float is therefore rewiring: its inputs go back to the float tensors of the
model it was quantized from (the same node name, the same input position), float weights and biases are copied
back, and the Q/DQ nodes nobody reads any more are dropped. A tensor that a still-quantized neighbour reads or
writes keeps its Q/DQ pair for every consumer, as onnxruntime does, so the result equals what
``quantize_static(nodes_to_exclude=...)`` produces with the same ranges, at the cost of a graph edit instead of
a calibration run. The accuracy-aware INT8 search uses this for its per-node sensitivity and its exclusion
trials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import onnx

QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})


def quantized_nodes(qdq: onnx.ModelProto, op_types: Iterable[str] | None = None) -> list[str]:
    """Names of the nodes (of ``op_types``, default any) that read at least one ``DequantizeLinear`` output."""
    dq_out = {o for n in qdq.graph.node if n.op_type == "DequantizeLinear" for o in n.output}
    ops = set(op_types) if op_types is not None else None
    return [n.name for n in qdq.graph.node
            if n.name and n.op_type not in QDQ_OPS and (ops is None or n.op_type in ops)
            and any(i in dq_out for i in n.input)]


def keep_float(qdq: onnx.ModelProto, base: onnx.ModelProto, nodes: Iterable[str],
               op_types: Iterable[str] | None = None) -> onnx.ModelProto:
    """A copy of ``qdq`` in which ``nodes`` compute in float, as if quantized with ``nodes_to_exclude=nodes``.

    The rule is onnxruntime's: an activation stays quantized (and every consumer reads its ``DequantizeLinear``
    output) only while it is an input or output of a node that is still quantized (of ``op_types``, default
    any); otherwise every consumer reads the float tensor again. A node kept in float gets its float weights
    back. The result equals ``quantize_static(..., nodes_to_exclude=nodes)`` with the same ranges (tested).
    Activations are traced back through their ``DequantizeLinear <- QuantizeLinear`` pair; weights and biases
    come from ``base`` (the model that was quantized, matched by node name and input position).
    """
    wanted = set(nodes)
    out = onnx.ModelProto()
    out.CopyFrom(qdq)
    g = out.graph
    base_nodes = {n.name: n for n in base.graph.node if n.name}
    base_inits = {t.name: t for t in base.graph.initializer}
    dq_of = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear"}
    q_of = {n.output[0]: n for n in g.node if n.op_type == "QuantizeLinear"}
    taken = {i.name for i in g.input} | {t.name for t in g.initializer} | {o for n in g.node for o in n.output}

    def float_activation(name: str) -> str | None:
        q = q_of.get(dq_of[name].input[0])
        return q.input[0] if q is not None else None

    still_names = set(quantized_nodes(qdq, op_types)) - wanted  # computed once: this runs per search trial
    still = [n for n in g.node if n.name in still_names]
    quantized = {t for n in still for t in n.output}
    quantized |= {f for n in still for i in n.input if i in dq_of and (f := float_activation(i)) is not None}
    restored: dict[str, str] = {}

    def float_weight(name: str) -> str:
        if name not in restored:
            restored[name] = name if name not in taken else f"{name}_float"
            t = onnx.TensorProto()
            t.CopyFrom(base_inits[name])
            t.name = restored[name]
            g.initializer.append(t)
            taken.add(restored[name])
        return restored[name]

    for node in g.node:
        if node.op_type in QDQ_OPS:
            continue
        for j, cur in enumerate(node.input):
            if cur not in dq_of:
                continue
            act = float_activation(cur)
            if act is not None:
                if act not in quantized:
                    node.input[j] = act
            elif node.name in wanted and (w := base_initializer(base_nodes, base_inits, node, j)) is not None:
                node.input[j] = float_weight(w)
    _unquantize_graph_outputs(g, dq_of, float_activation, quantized)
    prune(g)
    return out


def base_initializer(base_nodes: Mapping[str, onnx.NodeProto], base_inits: Mapping[str, onnx.TensorProto],
                     node: onnx.NodeProto, j: int) -> str | None:
    """The float initializer behind input ``j`` of a quantized model's ``node``: the input at the same position of
    the float model's node of the same name and type (``base_nodes``, ``base_inits``), if it is an initializer."""
    ref = base_nodes.get(node.name)
    if ref is None or ref.op_type != node.op_type or j >= len(ref.input) or ref.input[j] not in base_inits:
        return None
    return ref.input[j]


def _unquantize_graph_outputs(g: onnx.GraphProto, dq_of: dict[str, onnx.NodeProto],
                              float_activation: Callable[[str], str | None], quantized: set[str]) -> None:
    """A graph output whose Q/DQ pair lost its quantized producer is produced in float again, under its name."""
    renames: dict[str, str] = {}
    drop: set[int] = set()
    for out in g.output:
        if out.name not in dq_of:
            continue
        src = float_activation(out.name)
        if src is None or src in quantized:
            continue
        renames[src] = out.name
        dq = dq_of[out.name]
        drop.update({id(dq), *(id(n) for n in g.node if n.op_type == "QuantizeLinear" and n.output[0] == dq.input[0])})
    if not renames:
        return
    keep = [n for n in g.node if id(n) not in drop]
    for node in keep:
        for seq in (node.input, node.output):
            for j, name in enumerate(seq):
                if name in renames:
                    seq[j] = renames[name]
    del g.node[:]
    g.node.extend(keep)


def prune(g: onnx.GraphProto) -> None:
    """Drop nodes whose outputs nobody reads (graph outputs count as read), then unread initializers."""
    keep = {o.name for o in g.output}
    live: list[onnx.NodeProto] = []
    for node in reversed(g.node):  # nodes are topologically sorted: walk back from the outputs
        if any(o in keep for o in node.output) or not node.output:
            live.append(node)
            keep.update(i for i in node.input if i)
            keep.update(_subgraph_inputs(node))
    live.reverse()
    if len(live) != len(g.node):
        del g.node[:]
        g.node.extend(live)
    used = {i for n in g.node for i in n.input} | {i for n in g.node for i in _subgraph_inputs(n)}
    used |= {o.name for o in g.output}
    inits = [t for t in g.initializer if t.name in used]
    if len(inits) != len(g.initializer):
        del g.initializer[:]
        g.initializer.extend(inits)


def _subgraph_inputs(node: onnx.NodeProto) -> set[str]:
    """Outer-scope names read inside If/Loop/Scan bodies (kept alive conservatively)."""
    names: set[str] = set()
    for attr in node.attribute:
        for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
            for n in sub.node:
                names.update(i for i in n.input if i)
                names.update(_subgraph_inputs(n))
    return names
