"""Bytes a model stores (weights) and produces (activations): the traffic side of the roofline.

Conventions:

- Weights are every stored tensor: initializers (sparse ones as values + indices) and ``Constant`` node
  values, in the main graph and in subgraphs. Small shape-like ``int64`` tensors are counted too; they are
  negligible next to real weights and filtering them would need guesses.
- Activations are the real graph inputs plus every node output of the main graph that is used (by a node
  or as a graph output; ``Constant`` outputs excluded, being weights), each counted once at its size.
  Tensors whose shape is not static are skipped and reported, so the figure is then a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import onnx

from .dtypes import tensor_bytes
from .shapes import ShapeInfo
from .walk import DEFAULT_DOMAINS, iter_graphs


@dataclass(frozen=True)
class WeightStats:
    """Stored tensors of a model: element count and bytes."""

    params: int
    weight_bytes: int


@dataclass(frozen=True)
class ActivationStats:
    """Bytes of the tensors a run produces, and how many tensors had no static size."""

    activation_bytes: int
    unknown_tensors: int


def _is_constant(node: onnx.NodeProto) -> bool:
    return node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS


def _dense(tensor: onnx.TensorProto) -> tuple[int, int]:
    numel = math.prod(tensor.dims)
    return numel, tensor_bytes(numel, tensor.data_type)


def _sparse(sparse: onnx.SparseTensorProto) -> tuple[int, int]:
    values, value_bytes = _dense(sparse.values)
    _, index_bytes = _dense(sparse.indices)
    return values, value_bytes + index_bytes


def weight_stats(model: onnx.ModelProto) -> WeightStats:
    """Count the elements and bytes of every stored tensor (see the module docstring).

    Args:
        model: the loaded model (external data may or may not be loaded: only dims and types are read).

    Returns:
        Total parameter elements and their storage bytes.
    """
    params = size = 0
    for graph in iter_graphs(model.graph):
        counted = [_dense(t) for t in graph.initializer] + [_sparse(s) for s in graph.sparse_initializer]
        for node in filter(_is_constant, graph.node):
            for attr in node.attribute:
                if attr.name == "value":
                    counted.append(_dense(attr.t))
                elif attr.name == "sparse_value":
                    counted.append(_sparse(attr.sparse_tensor))
        params += sum(n for n, _ in counted)
        size += sum(b for _, b in counted)
    return WeightStats(params=params, weight_bytes=size)


def activation_stats(graph: onnx.GraphProto, shapes: ShapeInfo) -> ActivationStats:
    """Sum the bytes of the real inputs and every used, non-constant node output of ``graph``.

    Args:
        graph: the model's main graph.
        shapes: inferred tensor types and the input shapes used.

    Returns:
        The byte total over tensors of static shape, and the number of tensors left out.
    """
    live = {name for node in graph.node for name in node.input} | {vi.name for vi in graph.output}
    names = list(shapes.inputs)
    for node in graph.node:
        if not _is_constant(node):
            names.extend(name for name in node.output if name in live)
    total = unknown = 0
    for name in dict.fromkeys(names):
        info = shapes.tensors.get(name)
        numel = None if info is None else info.numel
        if info is None or numel is None:
            unknown += 1
            continue
        total += tensor_bytes(numel, info.elem_type)
    return ActivationStats(activation_bytes=total, unknown_tensors=unknown)
