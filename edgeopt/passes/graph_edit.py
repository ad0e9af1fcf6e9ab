"""Small graph rewrites shared by passes: Gemm -> MatMul + Add, and finding weight initializers."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import onnx
from onnx import helper, numpy_helper


def initializers(graph: onnx.GraphProto) -> dict[str, onnx.TensorProto]:
    """Initializers of ``graph`` by name."""
    return {t.name: t for t in graph.initializer}


def weight_inputs(graph: onnx.GraphProto, op_types: Iterable[str]) -> list[tuple[onnx.NodeProto, str]]:
    """(node, initializer name) for every node of ``op_types`` whose weight (input 1) is an initializer."""
    inits = initializers(graph)
    ops = set(op_types)
    return [(n, n.input[1]) for n in graph.node if n.op_type in ops and len(n.input) > 1 and n.input[1] in inits]


def gemm_to_matmul(model: onnx.ModelProto) -> int:
    """Rewrite every ``Gemm`` with a constant B (and transA=0) into ``MatMul`` (+ ``Add`` for C), in place.

    Quantizers that handle only MatMul (MatMulNBits, dynamic INT8) otherwise skip every exported nn.Linear.
    ``alpha`` is folded into B and ``beta`` into C; output names are kept, so consumers are untouched.

    Returns:
        How many Gemm nodes were rewritten.
    """
    graph = model.graph
    inits = initializers(graph)
    new_nodes: list[onnx.NodeProto] = []
    rewritten = 0
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type != "Gemm" or node.input[1] not in inits or int(attrs.get("transA", 0)) != 0:
            new_nodes.append(node)
            continue
        has_c = len(node.input) > 2 and node.input[2] != ""
        beta = float(attrs.get("beta", 1.0))
        if has_c and beta != 1.0 and node.input[2] not in inits:
            new_nodes.append(node)  # a computed C scaled by beta: leave this Gemm as it is
            continue
        b = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        if int(attrs.get("transB", 0)):
            b = b.T
        b = np.ascontiguousarray(b * np.float32(attrs.get("alpha", 1.0)))
        base = node.name or node.output[0]
        b_name = f"{base}.matmul_B"
        graph.initializer.append(numpy_helper.from_array(b, b_name))
        mm_out = f"{base}.matmul_out" if has_c else node.output[0]
        new_nodes.append(helper.make_node("MatMul", [node.input[0], b_name], [mm_out], name=f"{base}.matmul"))
        if has_c:
            c_name = node.input[2]
            if beta != 1.0:
                c = numpy_helper.to_array(inits[c_name]).astype(np.float32) * np.float32(beta)
                c_name = f"{base}.add_C"
                graph.initializer.append(numpy_helper.from_array(c, c_name))
            new_nodes.append(helper.make_node("Add", [mm_out, c_name], [node.output[0]], name=f"{base}.add"))
        rewritten += 1
    del graph.node[:]
    graph.node.extend(new_nodes)
    _drop_unused_initializers(graph)
    return rewritten


def _drop_unused_initializers(graph: onnx.GraphProto) -> None:
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    for attr_graph in (a.g for n in graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH):
        used |= {i for n in attr_graph.node for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)


def topological_sort(graph: onnx.GraphProto, outer: frozenset[str] = frozenset()) -> None:
    """Reorder ``graph.node`` (and every subgraph) so each node follows the producers of its inputs, in place.

    Some converters (onnxconverter-common's FP16 with keep_io_types, onnxruntime's quantizers on If branches)
    append nodes at the end, which the ONNX checker rejects. ``outer`` holds the names visible from enclosing
    graphs. Nodes whose inputs never become available keep their relative order at the end.
    """
    available = set(outer) | {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    pending = list(graph.node)
    ordered: list[onnx.NodeProto] = []
    while pending:
        progressed = False
        rest = []
        for node in pending:
            if all(name in available for name in node.input if name) and _outer_inputs_ready(node, available):
                ordered.append(node)
                available.update(node.output)
                progressed = True
            else:
                rest.append(node)
        pending = rest
        if not progressed:
            ordered.extend(pending)
            break
    del graph.node[:]
    graph.node.extend(ordered)
    scope = frozenset(available | {o for n in ordered for o in n.output})
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                topological_sort(attr.g, scope)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    topological_sort(sub, scope)


def _outer_inputs_ready(node: onnx.NodeProto, available: set[str]) -> bool:
    """Subgraphs (If/Loop bodies) may read outer values: those must be produced first too."""
    for attr in node.attribute:
        if attr.type != onnx.AttributeProto.GRAPH:
            continue
        local = {i.name for i in attr.g.input} | {t.name for t in attr.g.initializer}
        local |= {o for n in attr.g.node for o in n.output}
        needed = {i for n in attr.g.node for i in n.input if i and i not in local}
        if not needed <= available:
            return False
    return True
