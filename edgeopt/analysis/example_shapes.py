"""Which dims of a model's inputs are symbolic, and a concrete shape to count MACs at when the user gave none.

``inspect`` states the shape its headline count is for. For an input whose dims are open and not set by
``--shape``, it takes, in order:

1. the target's ``default_input_shape`` (a target YAML field), when its rank and fixed dims fit the input;
2. the model's own example shape: Ultralytics exports record ``imgsz`` (``[640, 640]``) in the ONNX metadata,
   given to the open height and width of a 4-D image input (NCHW or NHWC);
3. ``--batch`` for an open leading dim (:mod:`.overrides`, rule 2).

A symbolic leading dim always takes ``--batch``, whatever the source of the other dims. When dims stay open the
count is partial and :func:`shape_hint` writes the ``--shape`` to pass, with the input's real name and numbers a
user can type.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import onnx

from ..targets.schema import Target
from .overrides import Dims, declared_dims, format_dims, real_inputs

IMAGE_CHANNELS = (1, 3, 4)
HINT_SPATIAL = 640  # a typical detector input side, in the hint only
HINT_OTHER = 128  # a typical sequence length, in the hint only


@dataclass(frozen=True)
class Example:
    """Shapes for inputs the user left open, and where each came from (``{"x": "model metadata imgsz"}``)."""

    shapes: dict[str, list[int]]
    sources: dict[str, str]


def raw_symbols(value_info: onnx.ValueInfoProto) -> list[tuple[int, str | None]]:
    """``(axis, symbol)`` of every dim that is not a fixed size; the symbol is None for an unnamed dim or -1."""
    ttype = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not ttype.HasField("shape"):
        return []
    out: list[tuple[int, str | None]] = []
    for axis, dim in enumerate(ttype.shape.dim):
        if dim.HasField("dim_value") and dim.dim_value >= 0:
            continue
        out.append((axis, dim.dim_param if dim.HasField("dim_param") and dim.dim_param else None))
    return out


def _spatial_axes(dims: Dims) -> tuple[int, int] | None:
    """Height and width axes of a 4-D image input (channels fixed at 1, 3 or 4): NCHW or NHWC."""
    if len(dims) != 4:
        return None
    if isinstance(dims[1], int) and dims[1] in IMAGE_CHANNELS:
        return 2, 3
    if isinstance(dims[3], int) and dims[3] in IMAGE_CHANNELS:
        return 1, 2
    return None


def _metadata_imgsz(model: onnx.ModelProto) -> tuple[int, int] | None:
    """``imgsz`` from the model's metadata (``"[640, 640]"`` or ``"640"``), as Ultralytics exports write it."""
    for prop in model.metadata_props:
        if prop.key != "imgsz":
            continue
        try:
            value = ast.literal_eval(prop.value.strip())
        except (ValueError, SyntaxError):
            return None
        sizes = [value, value] if isinstance(value, int) else list(value) if isinstance(value, list | tuple) else []
        if len(sizes) == 2 and all(isinstance(v, int) and v > 0 for v in sizes):
            return int(sizes[0]), int(sizes[1])
    return None


def _fit(dims: Dims, shape: Sequence[int], batch: int) -> list[int] | None:
    """``shape`` for an input declared ``dims`` (fixed dims must agree); an open leading dim takes ``batch``."""
    if len(shape) != len(dims) or any(isinstance(d, int) and d != s for d, s in zip(dims, shape, strict=True)):
        return None
    out = [int(s) for s in shape]
    if not isinstance(dims[0], int):
        out[0] = batch
    return out


def _from_imgsz(dims: Dims, imgsz: tuple[int, int], batch: int) -> list[int] | None:
    axes = _spatial_axes(dims)
    if axes is None:
        return None
    out = [d if isinstance(d, int) else None for d in dims]
    for axis, size in zip(axes, imgsz, strict=True):
        out[axis] = out[axis] if out[axis] is not None else size
    if out[0] is None:
        out[0] = batch
    fixed = [d for d in out if d is not None]
    return fixed if len(fixed) == len(out) else None


def example_shapes(model: onnx.ModelProto, target: Target | None, given: Mapping[str, Sequence[int]],
                   batch: int) -> Example:
    """Shapes for the inputs with open dims that ``given`` (``--shape``) does not set; see the module docstring."""
    imgsz = _metadata_imgsz(model)
    default = target.default_input_shape if target is not None else None
    shapes: dict[str, list[int]] = {}
    sources: dict[str, str] = {}
    for vi in real_inputs(model.graph):
        dims = declared_dims(vi)
        if vi.name in given or dims is None or all(isinstance(d, int) for d in dims):
            continue
        shape = _fit(dims, default, batch) if default else None
        if shape is not None and target is not None:
            shapes[vi.name], sources[vi.name] = shape, f"target {target.name} default_input_shape"
            continue
        shape = _from_imgsz(dims, imgsz, batch) if imgsz else None
        if shape is not None:
            shapes[vi.name], sources[vi.name] = shape, f"model metadata imgsz={list(imgsz or ())}"
    return Example(shapes=shapes, sources=sources)


def shape_hint(name: str, declared: Dims | None, resolved: Dims | None, batch: int) -> str:
    """``--shape x=1x3x640x640``: the input's name, its fixed dims, numbers in place of the open ones."""
    dims = resolved if resolved is not None else declared
    if dims is None:
        return f"--shape {name}=<dims> (the input's rank is unknown: give every dim)"
    spatial = _spatial_axes(declared) if declared is not None else None
    out: list[int] = []
    for axis, dim in enumerate(dims):
        if isinstance(dim, int):
            out.append(dim)
        elif axis == 0:
            out.append(batch)
        else:
            out.append(HINT_SPATIAL if spatial and axis in spatial else HINT_OTHER)
    return f"--shape {name}={format_dims(out)}"
