"""What calibration and evaluation data must fit: the model's inputs, and how arrays become samples."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from ..analysis.loader import read_model
from ..errors import InputError, ShapeError

Dim = int | str | None


class CalibrationError(InputError):
    """Calibration or evaluation data is missing, unreadable, or does not fit the model's inputs."""


@dataclass(frozen=True)
class InputSpec:
    """One model input: name, numpy dtype and dims (a str or None for a dynamic dim)."""

    name: str
    dtype: np.dtype
    dims: tuple[Dim, ...]

    def resolved(self, input_shapes: Mapping[str, Sequence[int]]) -> tuple[int, ...]:
        """Concrete dims: ``input_shapes`` first, a dynamic leading dim as 1, else an error naming the fix."""
        if self.name in input_shapes:
            return tuple(int(d) for d in input_shapes[self.name])
        out = []
        for i, d in enumerate(self.dims):
            if isinstance(d, int) and d > 0:
                out.append(d)
            elif i == 0:
                out.append(1)
            else:
                raise ShapeError(
                    f"input '{self.name}' has dynamic dims {list(self.dims)}: pass "
                    f"--input-shape {self.name}="
                    + "x".join(str(x) if isinstance(x, int) and x > 0 else "N" for x in self.dims)
                )
        return tuple(out)


def model_inputs(model_path: Path) -> list[InputSpec]:
    """The real inputs (initializers excluded) of an ONNX model file, without loading its weights."""
    model = read_model(Path(model_path))
    inits = {t.name for t in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in inits:
            continue
        ttype = value.type.tensor_type
        dtype = (
            np.dtype(onnx.helper.tensor_dtype_to_np_dtype(ttype.elem_type)) if ttype.elem_type else np.dtype(np.float32)
        )
        dims: tuple[Dim, ...] = tuple(
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in ttype.shape.dim
        )
        specs.append(InputSpec(value.name, dtype, dims))
    return specs


def split_samples(
    arrays: Mapping[str, np.ndarray], specs: Sequence[InputSpec], source: str
) -> list[dict[str, np.ndarray]]:
    """Cut arrays keyed by input name into one feed per sample.

    An array with one more axis than the input holds one sample per row; an array of the input's rank is cut
    along its batch axis into the model's batch size (1 when dynamic). A scalar input may be given once for all.

    Raises:
        CalibrationError: a missing input, a wrong dtype kind, or inputs with different sample counts.
        ShapeError: a sample's fixed dims differ from the model's.
    """
    missing = [s.name for s in specs if s.name not in arrays]
    if missing:
        raise CalibrationError(
            f"{source}: no array for input(s) {', '.join(missing)}; it has "
            f"{', '.join(sorted(arrays)) or 'nothing'}: key the arrays by input name"
        )
    per_input: dict[str, list[np.ndarray]] = {}
    shared: dict[str, np.ndarray] = {}
    for spec in specs:
        arr = _cast(np.asarray(arrays[spec.name]), spec, source)
        rank = len(spec.dims)
        if rank == 0:
            if arr.ndim == 0:
                shared[spec.name] = arr
            else:
                per_input[spec.name] = [arr[i] for i in range(arr.shape[0])]
            continue
        if arr.ndim == rank + 1:
            per_input[spec.name] = [arr[i] for i in range(arr.shape[0])]
        elif arr.ndim == rank:
            lead = spec.dims[0]
            batch = lead if isinstance(lead, int) and lead > 0 else 1
            n = arr.shape[0] // batch
            per_input[spec.name] = [arr[i * batch : (i + 1) * batch] for i in range(n)]
        else:
            raise ShapeError(
                f"{source}: array '{spec.name}' has shape {list(arr.shape)} but the input has rank "
                f"{rank} {list(spec.dims)}: give [N, ...input dims] or [batch, ...]"
            )
    counts = {name: len(v) for name, v in per_input.items()}
    if len(set(counts.values())) > 1:
        raise CalibrationError(
            f"{source}: inputs hold different sample counts {counts}; give every input the same number of samples"
        )
    n = next(iter(counts.values()), 1)
    if n == 0:
        raise CalibrationError(f"{source}: the arrays hold no samples")
    samples = [{**{k: v[i] for k, v in per_input.items()}, **shared} for i in range(n)]
    for spec in specs:
        _check_dims(samples[0][spec.name], spec, source)
    return samples


def _cast(arr: np.ndarray, spec: InputSpec, source: str) -> np.ndarray:
    if arr.dtype == spec.dtype:
        return arr
    kinds_ok = (arr.dtype.kind in "fiub" and spec.dtype.kind == "f") or (
        arr.dtype.kind in "iub" and spec.dtype.kind in "iub"
    )
    if not kinds_ok:
        raise CalibrationError(
            f"{source}: array '{spec.name}' is {arr.dtype} but the input takes {spec.dtype}; convert it"
        )
    return arr.astype(spec.dtype)


def _check_dims(sample: np.ndarray, spec: InputSpec, source: str) -> None:
    if len(spec.dims) != sample.ndim:
        raise ShapeError(
            f"{source}: a sample of '{spec.name}' has shape {list(sample.shape)}, the input {list(spec.dims)}"
        )
    for want, got in zip(spec.dims, sample.shape, strict=True):
        if isinstance(want, int) and want > 0 and want != got:
            raise ShapeError(
                f"{source}: a sample of '{spec.name}' has shape {list(sample.shape)} but the model "
                f"takes {list(spec.dims)}; resize the data to the model's input"
            )
