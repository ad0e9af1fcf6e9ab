"""Fix a model's dynamic input dims from the user's ``--shape`` and ``--batch`` before shapes are inferred.

Rules, in order:

1. ``--shape name=1x3x224x224`` sets every dim of that input. Dims the model fixes must be kept; a symbolic
   dim (``"seq"``) takes the given value *everywhere* the model uses that symbol, so one override can
   resolve several inputs that share a dimension.
2. ``--batch N`` sets the symbolic (or unknown) first dim of every input not overridden, unless that dim's
   symbol was already set by rule 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import onnx

from ..errors import ShapeError

Dim = int | str | None  # int: fixed; str: symbolic (dim_param); None: unknown
Dims = tuple[Dim, ...]


def format_dims(dims: Sequence[Dim] | None) -> str:
    """``1x3xHx?`` style text of a shape; ``?`` for an unknown dim, ``(unknown rank)`` for no shape."""
    if dims is None:
        return "(unknown rank)"
    return "x".join("?" if d is None else str(d) for d in dims) or "(scalar)"


def declared_dims(value_info: onnx.ValueInfoProto) -> Dims | None:
    """The dims a value info declares, or ``None`` when it has no tensor shape (unknown rank)."""
    ttype = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type") or not ttype.HasField("shape"):
        return None
    dims: list[Dim] = []
    for dim in ttype.shape.dim:
        if dim.HasField("dim_value") and dim.dim_value < 0:
            # Some exporters (Paddle) write -1 for a dynamic dim: give it its own symbol.
            dims.append(f"{value_info.name}_dim{len(dims)}")
        elif dim.HasField("dim_value"):
            dims.append(dim.dim_value)
        elif dim.HasField("dim_param"):
            dims.append(dim.dim_param)
        else:
            dims.append(None)
    return tuple(dims)


def check_shape_names(source: str, names: Sequence[str], shapes: Mapping[str, object], *,
                      key_by: str = "one of those names") -> None:
    """``optimize``'s ``--input-shape``: every name is one of ``source``'s inputs, or a one-line error naming them
    (:func:`resolve_inputs` checks ``--shape`` the same way for bench, profile and sweep)."""
    unknown = sorted(set(shapes) - set(names))
    if unknown:
        raise ShapeError(f"{source} has inputs {', '.join(names) or '(none)'} but --input-shape names "
                         f"{', '.join(unknown)}; key each shape by {key_by}")


def real_inputs(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs the caller feeds: older exporters also list every initializer as an input."""
    stored = {t.name for t in graph.initializer} | {s.values.name for s in graph.sparse_initializer}
    return [vi for vi in graph.input if vi.name not in stored]


@dataclass(frozen=True)
class ResolvedInputs:
    """Input shapes to infer with, and the values given to symbolic dims (``{"batch": 4, "seq": 128}``)."""

    shapes: dict[str, Dims | None]
    symbols: dict[str, int]


def substitute(dims: Dims | None, symbols: Mapping[str, int]) -> Dims | None:
    """``dims`` with every symbol that has a value replaced by it."""
    if dims is None:
        return None
    return tuple(symbols.get(d, d) if isinstance(d, str) else d for d in dims)


def _apply_override(
    name: str, given: Sequence[int], declared: Dims | None, model_name: str, symbols: dict[str, int]
) -> Dims:
    text = f"--shape {name}={format_dims(given)}"
    if any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in given):
        raise ShapeError(f"{text} for {model_name}: each dim must be a positive integer, e.g. {name}=1x3x8x8")
    if declared is None:
        return tuple(given)
    if len(given) != len(declared):
        raise ShapeError(
            f"{text} has {len(given)} dims but input '{name}' of {model_name} has {len(declared)} "
            f"({format_dims(declared)}): give {len(declared)} dims"
        )
    for index, (want, have) in enumerate(zip(given, declared, strict=True)):
        if isinstance(have, int) and have != want:
            raise ShapeError(
                f"{text} sets dim {index} to {want} but {model_name} fixes it at {have}: keep {have} there"
            )
        if isinstance(have, str) and symbols.setdefault(have, want) != want:
            raise ShapeError(
                f"{text} gives dim '{have}' of {model_name} the value {want}, but another --shape gave it "
                f"{symbols[have]}: use one value for '{have}'"
            )
    return tuple(given)


def resolve_inputs(
    graph: onnx.GraphProto, *, overrides: Mapping[str, Sequence[int]], batch: int, model_name: str
) -> ResolvedInputs:
    """Apply ``--shape`` overrides and ``--batch`` to the inputs of ``graph``.

    Args:
        graph: the model's main graph (not modified).
        overrides: input name -> full concrete shape.
        batch: value for each remaining symbolic first dim.
        model_name: the model file, named in error messages.

    Returns:
        The shape of every real input after the rules in the module docstring.

    Raises:
        ShapeError: an unknown input name, a wrong rank, a changed fixed dim, a non-positive dim or batch.
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ShapeError(f"batch {batch!r} for {model_name} is not positive: pass --batch 1 or more")
    inputs = {vi.name: declared_dims(vi) for vi in real_inputs(graph)}
    unknown = sorted(set(overrides) - set(inputs))
    if unknown:
        raise ShapeError(
            f"--shape names {', '.join(repr(n) for n in unknown)}, not an input of {model_name}: "
            f"use one of {', '.join(repr(n) for n in inputs) or '(the model has no inputs)'}"
        )
    symbols: dict[str, int] = {}
    shapes: dict[str, Dims | None] = dict(inputs)
    for name, given in overrides.items():
        shapes[name] = _apply_override(name, list(given), inputs[name], model_name, symbols)
    for name, dims in shapes.items():
        if name in overrides or not dims or isinstance(dims[0], int):
            continue
        first = dims[0]
        value = symbols.setdefault(first, batch) if isinstance(first, str) else batch
        shapes[name] = (value, *dims[1:])
    return ResolvedInputs(shapes={n: substitute(d, symbols) for n, d in shapes.items()}, symbols=symbols)
