"""Tie the analysis stages together: load, infer shapes, count, size, place on a roofline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import onnx

from ..enums import Precision
from ..fsutil import sha256_file
from ..targets.schema import Target
from .dtypes import dtype_name
from .example_shapes import Example, raw_symbols, shape_hint
from .example_shapes import example_shapes as find_examples
from .external_data import load_external_data
from .flops import GraphCount, count_graph
from .loader import model_size_bytes, read_model
from .memory import activation_stats, weight_stats
from .overrides import Dims, declared_dims, real_inputs
from .precision import model_precision
from .report import InspectResult, OpStats, ShapeDims, SymbolicDim, TensorSpec
from .roofline import Roofline, roofline
from .shapes import ShapeInfo, infer_shapes
from .walk import DEFAULT_DOMAINS

_SHOWN_NODES = 5  # unresolved node names quoted in a note


def _dims(dims: Dims | None) -> ShapeDims | None:
    return None if dims is None else ["?" if d is None else d for d in dims]


def _spec(value_info: onnx.ValueInfoProto) -> TensorSpec:
    kind = value_info.type.WhichOneof("value")
    dtype = dtype_name(value_info.type.tensor_type.elem_type) if kind == "tensor_type" else str(kind)
    return TensorSpec(name=value_info.name, dtype=dtype, shape=_dims(declared_dims(value_info)))


def _opset(model: onnx.ModelProto) -> int | None:
    versions = [int(o.version) for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    return max(versions) if versions else None


def _open_inputs(model: onnx.ModelProto, info: ShapeInfo) -> list[str]:
    return [vi.name for vi in real_inputs(model.graph)
            if (d := info.inputs.get(vi.name)) is None or not all(isinstance(v, int) for v in d)]


def _hint(model: onnx.ModelProto, info: ShapeInfo, batch: int) -> str | None:
    """The ``--shape`` flags that close every open input, e.g. ``--shape x=1x3x640x640``."""
    flags = [shape_hint(vi.name, declared_dims(vi), info.inputs.get(vi.name), batch)
             for vi in real_inputs(model.graph) if vi.name in _open_inputs(model, info)]
    return " ".join(flags) or None


def _symbolic(model: onnx.ModelProto, info: ShapeInfo, given: Mapping[str, Sequence[int]], example: Example,
              batch: int) -> list[SymbolicDim]:
    """Every open dim of the inputs: symbol, the value the counts used, where it came from."""
    out = []
    for vi in real_inputs(model.graph):
        resolved = info.inputs.get(vi.name)
        for axis, symbol in raw_symbols(vi):
            value = resolved[axis] if resolved is not None and axis < len(resolved) else None
            size = value if isinstance(value, int) else None
            if size is None:
                source = None
            elif vi.name in given:
                source = "--shape"
            elif axis == 0:
                source = f"--batch {batch}"
            else:
                source = example.sources.get(vi.name, "--shape of another input with the same symbol")
            out.append(SymbolicDim(input=vi.name, axis=axis, symbol=symbol, value=size, source=source))
    return out


def _notes(model: onnx.ModelProto, counts: GraphCount, info: ShapeInfo, unknown_tensors: int,
           hint: str | None) -> list[str]:
    notes = list(info.notes)
    if hint:
        dims = ", ".join(_open_inputs(model, info))
        fix = f"dims of input(s) {dims} are open: pass {hint} (your real sizes)"
    else:
        fix = "shape inference cannot follow the model there (see uncounted_ops); check it with onnx.shape_inference"
    if counts.unresolved_nodes:
        shown = ", ".join(counts.unresolved_nodes[:_SHOWN_NODES])
        more = len(counts.unresolved_nodes) - _SHOWN_NODES
        shown += f" and {more} more" if more > 0 else ""
        if counts.macs_complete:
            notes.append(f"flops is partial (partial_flops, a lower bound): {len(counts.unresolved_nodes)} nodes have "
                         f"no static shapes ({shown}); they are all zero-MAC ops (elementwise, pooling, data "
                         f"movement), so macs is complete; {fix}")
        else:
            notes.append(f"macs and flops are unknown: {len(counts.unresolved_nodes)} nodes have no static shapes "
                         f"({shown}); {fix}")
    if unknown_tensors:
        notes.append(f"activation_bytes omits {unknown_tensors} tensors of unknown size (a lower bound): {fix}")
    if counts.subgraph_nodes:
        notes.append(
            f"{counts.subgraph_nodes} nodes inside If/Loop/Scan bodies are not counted: "
            "the totals cover the main graph only"
        )
    return notes


def _roofline(counts: GraphCount, moved: int, target: Target, precision: Precision,
              notes: list[str]) -> Roofline | None:
    """The roofline bound on ``target``; None (and a note) for a partial count or a target without the numbers."""
    if counts.unresolved_nodes:
        notes.append(f"no roofline on {target.name}: it needs the complete FLOP count")
        return None
    roof = roofline(counts.flops, moved, target, precision)
    if roof is None:
        notes.append(f"target {target.name} states no peak rate for {precision.value} or no memory bandwidth: "
                     "add them to its YAML to get a roofline")
    return roof


def inspect_model(
    path: Path,
    *,
    target: Target | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
    batch: int = 1,
    example_shapes: bool = False,
) -> InspectResult:
    """Analyse an ONNX model without running it: structure, MACs/FLOPs, sizes, and a roofline bound.

    Args:
        path: the ``.onnx`` file; external data files must sit in its directory.
        target: device to compute the roofline bound for; ``None`` skips the roofline.
        shapes: concrete shapes for dynamic inputs, input name -> dims (``--shape``).
        batch: value for every input's symbolic first dim not fixed by ``shapes`` (``--batch``).
        example_shapes: give open inputs not in ``shapes`` the target's ``default_input_shape`` or the model's
            own example shape (``edgeopt inspect`` does; :mod:`.example_shapes`).

    Returns:
        The analysis; see ``docs/inspect.md`` for the counting conventions.

    Raises:
        ModelLoadError: the file is missing, not ONNX, corrupt, or references unsafe or missing external data.
        ShapeError: ``shapes`` names an unknown input or does not fit it, or ``batch`` is not positive.
    """
    path = Path(path)
    model = read_model(path)
    size_bytes = model_size_bytes(path, model)  # before loading: loading drops the data file references
    load_external_data(model, path)
    given = dict(shapes or {})
    example = find_examples(model, target, given, batch) if example_shapes else Example({}, {})
    info = infer_shapes(model, overrides={**example.shapes, **given}, batch=batch, model_name=str(path))
    counts = count_graph(model.graph, info.tensors)
    complete = not counts.unresolved_nodes
    hint = _hint(model, info, batch)
    weights = weight_stats(model)
    activations = activation_stats(model.graph, info)
    moved = weights.weight_bytes + activations.activation_bytes
    precision = model_precision(model)
    notes = _notes(model, counts, info, activations.unknown_tensors, hint)
    roof = _roofline(counts, moved, target, precision, notes) if target is not None else None
    ops = {key: totals.count for key, totals in counts.per_op.items()}
    return InspectResult(
        path=str(path),
        sha256=sha256_file(path),
        size_bytes=size_bytes,
        ir_version=model.ir_version,
        opset=_opset(model),
        producer=f"{model.producer_name} {model.producer_version}".strip(),
        precision=precision,
        inputs=[_spec(vi) for vi in real_inputs(model.graph)],
        outputs=[_spec(vi) for vi in model.graph.output],
        batch=batch,
        input_shapes={name: _dims(dims) for name, dims in info.inputs.items()},
        symbolic_dims=_symbolic(model, info, given, example, batch),
        shape_hint=hint,
        params=weights.params,
        weight_bytes=weights.weight_bytes,
        activation_bytes=activations.activation_bytes,
        macs=counts.macs if counts.macs_complete else None,
        flops=counts.flops if complete else None,
        partial_macs=None if counts.macs_complete else counts.macs,
        partial_flops=None if complete else counts.flops,
        arithmetic_intensity=(counts.flops / moved if moved else 0.0) if complete else None,
        ops=dict(sorted(ops.items(), key=lambda item: (-item[1], item[0]))),
        per_op={key: OpStats(count=t.count, macs=t.macs, flops=t.flops) for key, t in counts.per_op.items()},
        uncounted_ops=counts.uncounted_ops,
        unresolved_nodes=counts.unresolved_nodes,
        subgraph_nodes=counts.subgraph_nodes,
        notes=notes,
        roofline=roof,
    )
