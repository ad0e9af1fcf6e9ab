"""Walk every graph and tensor of an ONNX model, nested subgraphs and local functions included.

The loader's safety checks must see *every* tensor that can point at external data, and the weight counters
must see every stored tensor, so both use these walkers instead of looking at ``graph.initializer`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import onnx

DEFAULT_DOMAINS = ("", "ai.onnx")  # the standard ONNX operator set

_GRAPH = onnx.AttributeProto.GRAPH
_GRAPHS = onnx.AttributeProto.GRAPHS


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs held directly by a node's attributes (the branches of ``If``, the body of ``Loop``)."""
    for attr in node.attribute:
        if attr.type == _GRAPH:
            yield attr.g
        elif attr.type == _GRAPHS:
            yield from attr.graphs


def iter_graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """``graph`` itself, then every graph nested in it, depth first."""
    yield graph
    for node in graph.node:
        for sub in subgraphs(node):
            yield from iter_graphs(sub)


def _node_tensors(nodes: Iterable[onnx.NodeProto]) -> Iterator[onnx.TensorProto]:
    for node in nodes:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            for sparse in attr.sparse_tensors:
                yield sparse.values
                yield sparse.indices


def iter_all_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every stored tensor (initializers, sparse ones, node attributes) in all graphs and functions."""
    for graph in iter_graphs(model.graph):
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        yield from _node_tensors(graph.node)
    for function in model.functions:
        yield from _node_tensors(function.node)
        for node in function.node:
            for sub in subgraphs(node):
                for graph in iter_graphs(sub):
                    yield from graph.initializer
                    yield from _node_tensors(graph.node)
