"""What the join needs to know about the ONNX graph: per-node MACs/FLOPs, tensor sizes, who produces and who
consumes each tensor, which tensors are constant, and how a runtime's layer name resolves to a node.

Counting follows ``edgeopt inspect`` (same counters, same shape inference; ``docs/inspect.md``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import onnx

from ..analysis.dtypes import tensor_bytes
from ..analysis.flops import COUNTERS, op_key
from ..analysis.loader import read_model
from ..analysis.precision import model_precision
from ..analysis.shapes import infer_shapes
from ..analysis.walk import DEFAULT_DOMAINS
from ..enums import Precision

_MAX_STRIPS = 3  # name suffixes tried away: conv1_token_3 -> conv1_token -> conv1
_SUFFIX = re.compile(r"^(.+?)[/_][^/_]*$")
QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"})


@dataclass(frozen=True)
class NodeInfo:
    """One node of the main graph, with its work."""

    index: int
    label: str  # the node's name, or "<op>#<index>" when unnamed
    op_type: str  # op key: Conv, com.microsoft.QGemm
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    macs: int
    flops: int


@dataclass
class GraphIndex:
    """Lookups over the main graph of one ONNX model."""

    path: Path
    nodes: list[NodeInfo]
    producer: dict[str, int] = field(default_factory=dict)
    consumers: dict[str, list[int]] = field(default_factory=dict)
    by_name: dict[str, int] = field(default_factory=dict)
    by_output: dict[str, int] = field(default_factory=dict)
    constant: set[str] = field(default_factory=set)
    sizes: dict[str, int] = field(default_factory=dict)
    graph_outputs: set[str] = field(default_factory=set)
    precision: Precision = Precision.FP32

    @property
    def flops(self) -> int:
        return sum(n.flops for n in self.nodes)

    @property
    def bytes_moved(self) -> int:
        """Every tensor of known size once (weights and activations): the whole-model roofline's traffic."""
        return sum(self.sizes.values())

    def resolve(self, name: str) -> int | None:
        """The node a runtime's name stands for: a node name or output tensor name, trying known suffixes away
        (``relu1_nchwc``, ``conv1_token_3``, ``conv1/WithoutBiases``) and TensorRT's ``node_of_`` prefix."""
        candidate = name.removeprefix("node_of_") if name.startswith("node_of_") else name
        for _ in range(_MAX_STRIPS + 1):
            if not candidate:
                return None
            hit = self.by_name.get(candidate, self.by_output.get(candidate))
            if hit is not None:
                return hit
            match = _SUFFIX.match(candidate)
            if match is None:
                return None
            candidate = match.group(1)
        return None

    def quantized(self, index: int) -> bool:
        """Whether a node reads a DequantizeLinear output (QDQ around it), Q/DQ nodes themselves excluded."""
        node = self.nodes[index]
        if node.op_type in QDQ_OPS:
            return False
        return any(t in self.producer and self.nodes[self.producer[t]].op_type == "DequantizeLinear"
                   for t in node.inputs)

    def boundary_bytes(self, indices: Iterable[int]) -> int | None:
        """Bytes of the tensors entering (weights included) and leaving a set of nodes; None if none is known."""
        members = set(indices)
        tensors: set[str] = set()
        for i in members:
            node = self.nodes[i]
            tensors.update(t for t in node.inputs if t and self.producer.get(t) not in members)
            tensors.update(t for t in node.outputs if t and (t in self.graph_outputs or any(
                c not in members for c in self.consumers.get(t, []))))
        known = [self.sizes[t] for t in tensors if t in self.sizes]
        return sum(known) if known else None


def _initializer_sizes(graph: onnx.GraphProto) -> dict[str, int]:
    return {t.name: tensor_bytes(math.prod(t.dims), t.data_type) for t in graph.initializer}


def _constants(graph: onnx.GraphProto) -> set[str]:
    """Initializers, Constant outputs, and outputs of nodes fed by constants only (the graph is topological)."""
    constant = {t.name for t in graph.initializer}
    for node in graph.node:
        is_const = node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS
        if is_const or (node.input and all(not t or t in constant for t in node.input)):
            constant.update(t for t in node.output if t)
    return constant


def load_graph(path: Path, *, shapes: Mapping[str, Sequence[int]] | None = None, batch: int = 1) -> GraphIndex:
    """Index ``path``'s main graph with per-node MACs/FLOPs and tensor sizes.

    Raises:
        ModelLoadError: the file is missing or not ONNX. ShapeError: ``shapes`` do not fit the model.
    """
    model = read_model(Path(path))
    info = infer_shapes(model, overrides=shapes, batch=batch, model_name=str(path))
    graph = model.graph
    index = GraphIndex(path=Path(path), nodes=[])
    for i, node in enumerate(graph.node):
        key = op_key(node)
        counter = COUNTERS.get(key)
        count = counter(node, info.tensors) if counter is not None else None
        info_node = NodeInfo(index=i, label=node.name or f"{node.op_type}#{i}", op_type=key,
                             inputs=tuple(node.input), outputs=tuple(node.output),
                             macs=count.macs if count else 0, flops=count.flops if count else 0)
        index.nodes.append(info_node)
        if node.name:
            index.by_name.setdefault(node.name, i)
        for t in node.output:
            if t:
                index.producer[t] = i
                index.by_output.setdefault(t, i)
        for t in node.input:
            if t:
                index.consumers.setdefault(t, []).append(i)
    index.sizes = _initializer_sizes(graph)
    for name, tensor in info.tensors.items():
        if name not in index.sizes and tensor.numel is not None:
            index.sizes[name] = tensor_bytes(tensor.numel, tensor.elem_type)
    index.constant = _constants(graph)
    index.graph_outputs = {vi.name for vi in graph.output}
    index.precision = model_precision(model)
    return index
