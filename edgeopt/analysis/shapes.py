"""Infer the shape and element type of every tensor in a model's main graph.

Inference runs on a light *skeleton* of the model, never on the model itself: the same nodes, inputs fixed
by :mod:`.overrides`, small initializers kept (their values drive ``Reshape``/``Slice`` shape inference)
and large ones turned into typed graph inputs. The skeleton stays small, so models above protobuf's 2 GB
limit still get inferred, and the caller's model is left untouched. Inference failures are tolerated: they
leave shapes unknown and add a note, they never stop the analysis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx

from ..errors import first_line
from .overrides import Dims, declared_dims, real_inputs, resolve_inputs, substitute

_KEEP_VALUES_MAX_NUMEL = 1024  # initializers up to this size keep their values in the skeleton


@dataclass(frozen=True)
class TensorType:
    """Element type and shape of one tensor; ``shape`` is ``None`` when even the rank is unknown."""

    elem_type: int
    shape: Dims | None

    @property
    def static(self) -> tuple[int, ...] | None:
        """The shape if every dim is a known integer, else ``None``."""
        if self.shape is None or not all(isinstance(d, int) for d in self.shape):
            return None
        return tuple(int(d) for d in self.shape if isinstance(d, int))

    @property
    def numel(self) -> int | None:
        """Number of elements if the shape is static, else ``None``."""
        static = self.static
        return None if static is None else math.prod(static)


@dataclass(frozen=True)
class ShapeInfo:
    """Result of :func:`infer_shapes`."""

    tensors: dict[str, TensorType]
    inputs: dict[str, Dims | None]  # real inputs, as fixed for inference
    notes: tuple[str, ...] = field(default=())


def _set_dims(value_info: onnx.ValueInfoProto, dims: Dims | None) -> onnx.ValueInfoProto:
    """A copy of ``value_info`` with its tensor shape replaced by ``dims``."""
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(value_info)
    if dims is None or not copy.type.HasField("tensor_type"):
        return copy
    shape = copy.type.tensor_type.shape
    shape.ClearField("dim")
    shape.SetInParent()
    for value in dims:
        dim = shape.dim.add()
        if isinstance(value, int):
            dim.dim_value = value
        elif isinstance(value, str):
            dim.dim_param = value
    return copy


def _skeleton(model: onnx.ModelProto, shapes: Mapping[str, Dims | None], symbols: Mapping[str, int]) -> onnx.ModelProto:
    src = model.graph
    graph = onnx.GraphProto(name=src.name)
    graph.node.extend(src.node)
    graph.sparse_initializer.extend(src.sparse_initializer)
    listed = {vi.name for vi in src.input}
    for vi in src.input:
        dims = shapes[vi.name] if vi.name in shapes else declared_dims(vi)
        graph.input.append(_set_dims(vi, dims))
    for tensor in src.initializer:
        if math.prod(tensor.dims) <= _KEEP_VALUES_MAX_NUMEL:
            graph.initializer.append(tensor)
            continue
        if tensor.name not in listed:
            graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))
        else:  # old-style initializer-input: it must now be a plain input with the initializer's type
            index = [vi.name for vi in graph.input].index(tensor.name)
            graph.input[index].CopyFrom(
                onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims))
            )
    for target, source in ((graph.output, src.output), (graph.value_info, src.value_info)):
        target.extend(_set_dims(vi, substitute(declared_dims(vi), symbols)) for vi in source)
    return onnx.helper.make_model(
        graph,
        ir_version=model.ir_version,
        opset_imports=list(model.opset_import),
        functions=list(model.functions),
    )


def _run_inference(skeleton: onnx.ModelProto) -> tuple[onnx.ModelProto, str | None]:
    reason = ""
    # Data propagation resolves Shape->Gather->Reshape chains but is less robust: fall back without it.
    for data_prop in (True, False):
        try:
            return onnx.shape_inference.infer_shapes(skeleton, strict_mode=False, data_prop=data_prop), None
        # onnx raises InferenceError, ValidationError, RuntimeError...; any of them only means fewer shapes.
        except Exception as exc:
            reason = first_line(exc, limit=None)
    return skeleton, f"shape inference failed ({reason}); only declared shapes are known"


def infer_shapes(
    model: onnx.ModelProto,
    *,
    overrides: Mapping[str, Sequence[int]] | None = None,
    batch: int = 1,
    model_name: str = "the model",
) -> ShapeInfo:
    """Map every tensor of the main graph to its element type and (possibly symbolic) shape.

    Args:
        model: the loaded model; not modified.
        overrides: input name -> concrete shape, for dynamic inputs (``--shape``).
        batch: value for each input's symbolic first dim that no override fixes (``--batch``).
        model_name: the model file, named in error messages.

    Returns:
        Types of inputs, outputs, inferred intermediates and initializers, plus the input shapes used.

    Raises:
        ShapeError: an override names an unknown input or does not fit the input's rank or fixed dims.
    """
    resolved = resolve_inputs(model.graph, overrides=overrides or {}, batch=batch, model_name=model_name)
    inferred, failure = _run_inference(_skeleton(model, resolved.shapes, resolved.symbols))
    tensors: dict[str, TensorType] = {}
    graph = inferred.graph
    for vi in (*graph.input, *graph.value_info, *graph.output):
        if vi.type.HasField("tensor_type"):
            tensors[vi.name] = TensorType(vi.type.tensor_type.elem_type, declared_dims(vi))
    for tensor in model.graph.initializer:
        tensors[tensor.name] = TensorType(tensor.data_type, tuple(int(d) for d in tensor.dims))
    for sparse in model.graph.sparse_initializer:
        tensors[sparse.values.name] = TensorType(sparse.values.data_type, tuple(int(d) for d in sparse.dims))
    real = {vi.name for vi in real_inputs(model.graph)}
    return ShapeInfo(
        tensors=tensors,
        inputs={name: dims for name, dims in resolved.shapes.items() if name in real},
        notes=(failure,) if failure else (),
    )
