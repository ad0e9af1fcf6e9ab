"""Honest levels: does a recipe's artifact compute anything other than its parent, or is it the same graph again?

A recipe can run and change nothing: ``int4`` on a conv-only model quantizes no MatMul and writes the FP32 graph
back. Timing noise then makes that "level" look 1.1x faster than the model it copies (issue 14). This module
decides it from the graphs themselves, not from a pass's own report:

- :func:`graph_signature`: a Merkle hash of what an ONNX graph computes. Each tensor gets a token from what
  produces it: a graph input its position and type, a weight (initializer or ``Constant`` node) its dtype, shape
  and bytes, a node output its op type, domain, attributes and input tokens. ``Identity`` passes its input's token
  through. Names, node order, doc strings, ``value_info`` and the opset import do not count; dead nodes do not
  either (nothing reads them). Two graphs with the same signature run the same ops on the same weights.
- :func:`compare_graphs`: parent vs artifact: same signature or not, with a one-line summary of what changed
  (op types added or removed, weights whose bytes changed, weight dtypes).
- :func:`pipeline_change`: an ``optimize`` run as ``(pass, input, output)`` steps. Steps of passes that preserve
  semantics by design (``cleanup``: constant folding, opset upgrade, Conv+BN fusion) are skipped, since they
  rewrite the graph without changing the precision or the weights' information. The artifact is "no change"
  when every other step's output has its input's signature. A step between formats (e.g. ONNX -> OpenVINO IR)
  is always a change: it cannot be compared here.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import onnx
from onnx import helper, numpy_helper

from ..errors import InputError

SEMANTICS_PRESERVING_PASSES = frozenset({"cleanup"})
_PASSTHROUGH = frozenset({"Identity"})
ModelLike = Path | str | onnx.ModelProto


@dataclass(frozen=True)
class GraphChange:
    """Whether an artifact computes something other than its parent, and what differs."""

    changed: bool
    summary: str
    ops_added: dict[str, int] = field(default_factory=dict)
    ops_removed: dict[str, int] = field(default_factory=dict)
    weights_changed: int = 0


def _digest(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
        h.update(b"\x00")
    return h.hexdigest()[:32]


def _tensor_token(t: onnx.TensorProto) -> str:
    arr = numpy_helper.to_array(t)
    return "w:" + _digest(str(arr.dtype), tuple(arr.shape), hashlib.sha256(arr.tobytes()).hexdigest())


def _attr_value(attr: onnx.AttributeProto, env: dict[str, str]) -> object:
    if attr.type == onnx.AttributeProto.TENSOR:
        return _tensor_token(attr.t)
    if attr.type == onnx.AttributeProto.GRAPH:
        return _graph_tokens(attr.g, dict(env))
    if attr.type == onnx.AttributeProto.GRAPHS:
        return [_graph_tokens(g, dict(env)) for g in attr.graphs]
    if attr.type == onnx.AttributeProto.TENSORS:
        return [_tensor_token(t) for t in attr.tensors]
    return helper.get_attribute_value(attr)


def _graph_tokens(g: onnx.GraphProto, env: dict[str, str]) -> list[str]:
    """Tokens of ``g``'s outputs; ``env`` maps outer-scope names (subgraphs) and is extended in place."""
    for t in g.initializer:
        env[t.name] = _tensor_token(t)
    inits = {t.name for t in g.initializer}
    for k, i in enumerate(x for x in g.input if x.name not in inits):
        env[i.name] = _digest("input", k, i.type.tensor_type.elem_type)
    for node in g.node:
        ins = [env.get(i, f"free:{i}") if i else "" for i in node.input]
        if node.op_type in _PASSTHROUGH and node.domain in ("", "ai.onnx") and ins:
            env[node.output[0]] = ins[0]
            continue
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                env[node.output[0]] = _tensor_token(value)
                continue
        attrs = sorted((a.name, _attr_value(a, env)) for a in node.attribute)
        sig = _digest(node.domain or "ai.onnx", node.op_type, attrs, ins)
        for j, out in enumerate(node.output):
            if out:
                env[out] = f"{sig}:{j}"
    return [env.get(o.name, f"free:{o.name}") for o in g.output]


def _load(model: ModelLike) -> onnx.ModelProto:
    if isinstance(model, onnx.ModelProto):
        return model
    path = Path(model)
    if path.suffix != ".onnx" or not path.is_file():
        raise InputError(f"{path}: not an .onnx file; the graph comparison reads ONNX models only")
    return onnx.load(str(path))


def graph_signature(model: ModelLike) -> str:
    """A hash of what ``model``'s main graph computes (names, order and opset do not count).

    Raises:
        InputError: ``model`` is not an ONNX file.
    """
    m = _load(model)
    outs = _graph_tokens(m.graph, {})
    return _digest(outs, [o.type.tensor_type.elem_type for o in m.graph.output])


def _ops(m: onnx.ModelProto) -> Counter[str]:
    return Counter(n.op_type for n in m.graph.node if n.op_type not in {"Constant", *_PASSTHROUGH})


def _weights(m: onnx.ModelProto) -> Counter[str]:
    tensors = list(m.graph.initializer) + [a.t for n in m.graph.node if n.op_type == "Constant"
                                           for a in n.attribute if a.name == "value"]
    return Counter(_tensor_token(t) for t in tensors if len(t.dims) >= 1 and int(max(t.dims, default=0)) > 1)


def compare_graphs(parent: ModelLike, artifact: ModelLike) -> GraphChange:
    """Whether ``artifact`` computes something other than ``parent``; the summary names what differs.

    Raises:
        InputError: either is not an ONNX file.
    """
    pm, am = _load(parent), _load(artifact)
    if graph_signature(pm) == graph_signature(am):
        return GraphChange(changed=False, summary=f"no change: the same {sum(_ops(am).values())} ops on the same "
                                                  "weights as its parent")
    po, ao = _ops(pm), _ops(am)
    added, removed = dict(ao - po), dict(po - ao)
    pw, aw = _weights(pm), _weights(am)
    changed_w = sum((pw - aw).values())
    parts = []
    if added:
        parts.append("added " + ", ".join(f"{k} x{v}" for k, v in sorted(added.items())))
    if removed:
        parts.append("removed " + ", ".join(f"{k} x{v}" for k, v in sorted(removed.items())))
    if changed_w:
        parts.append(f"{changed_w} weight tensors changed")
    if not parts:
        parts.append("same op types and weights, different wiring or attributes")
    return GraphChange(changed=True, summary="; ".join(parts), ops_added=added, ops_removed=removed,
                       weights_changed=changed_w)


@dataclass(frozen=True)
class Step:
    """One pass of an optimize run: its name, the model it read and the model it wrote."""

    pass_name: str
    source: Path
    output: Path


class _ArtifactLike(Protocol):
    """What :func:`steps_of` reads of an ``edgeopt.passes.Artifact``."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def pass_name(self) -> str | None: ...
    @property
    def parent_name(self) -> str | None: ...


def steps_of(artifacts: Sequence[_ArtifactLike], source: Path | str) -> list[Step]:
    """The steps of an optimize run from its artifacts (``OptimizeResult.artifacts``); ``source`` is its input."""
    paths = {a.name: Path(a.path) for a in artifacts}
    steps, previous = [], Path(source)
    for art in artifacts:
        if art.pass_name is None:
            continue
        parent = paths.get(art.parent_name or "", previous)
        steps.append(Step(pass_name=art.pass_name, source=parent, output=Path(art.path)))
        previous = Path(art.path)
    return steps


def pipeline_change(steps: Iterable[Step],
                    preserving: frozenset[str] = SEMANTICS_PRESERVING_PASSES) -> GraphChange:
    """Whether a recipe's result computes something other than its input, judged step by step.

    Args:
        steps: the recipe's passes in order (from ``OptimizeResult.artifacts``: each artifact's ``pass_name``,
            its parent's path and its own path).
        preserving: passes that rewrite the graph without changing what it computes; they are not judged.

    Returns:
        ``changed=False`` when every judged step wrote its input's graph again (or there was none to judge);
        otherwise the first changed step's comparison, its summary prefixed with the pass name.

    Raises:
        InputError: an ONNX step's file is missing.
    """
    judged: Sequence[Step] = [s for s in steps if s.pass_name not in preserving]
    for step in judged:
        src, dst = Path(step.source).suffix, Path(step.output).suffix
        if src != ".onnx" or dst != ".onnx":
            return GraphChange(changed=True, summary=f"{step.pass_name}: converted {src} -> {dst} (not comparable; "
                                                     "counted as a change)")
        diff = compare_graphs(step.source, step.output)
        if diff.changed:
            return GraphChange(changed=True, summary=f"{step.pass_name}: {diff.summary}", ops_added=diff.ops_added,
                               ops_removed=diff.ops_removed, weights_changed=diff.weights_changed)
    names = ", ".join(s.pass_name for s in judged) or "no pass"
    return GraphChange(changed=False, summary=f"no change (= its input): {names} left the graph as it was")
