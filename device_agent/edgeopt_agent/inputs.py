"""Input data for a run: seeded random tensors from the model signature, or the user's ``.npz``."""

from __future__ import annotations

import zipfile
import zlib
from typing import Any, Dict, List

import numpy as np

from .protocol import TensorInfo


class InputSpecError(ValueError):
    """The requested shapes or data do not fit the model's inputs; the message names the fix."""


def _fmt(shape: List[Any]) -> str:
    return "x".join(str(d) for d in shape)


def resolve_shape(info: TensorInfo, shapes: Dict[str, List[int]], batch: int) -> List[int]:
    """Concrete shape of one input: an explicit ``--shape`` wins; a dynamic batch axis takes ``batch``."""
    if info.name in shapes:
        given = [int(d) for d in shapes[info.name]]
        if len(given) != len(info.shape):
            raise InputSpecError(
                "shape %s for input %r has rank %d but the model expects rank %d (%s): pass --shape %s=%s"
                % (_fmt(given), info.name, len(given), len(info.shape), _fmt(info.shape), info.name,
                   _fmt([d if isinstance(d, int) else 1 for d in info.shape]))
            )
        for axis, (want, got) in enumerate(zip(info.shape, given)):
            if got <= 0:
                raise InputSpecError(
                    "shape %s for input %r has a non-positive dim at axis %d" % (_fmt(given), info.name, axis))
            if isinstance(want, int) and want != got:
                raise InputSpecError(
                    "shape %s for input %r conflicts with the model's fixed dim %d at axis %d (model shape %s)"
                    % (_fmt(given), info.name, want, axis, _fmt(info.shape))
                )
        return given
    out = []
    for axis, dim in enumerate(info.shape):
        if isinstance(dim, int):
            if axis == 0 and batch != 1 and dim != batch:
                raise InputSpecError(
                    "batch %d requested but input %r has a fixed batch dim of %d: export the model with a dynamic "
                    "batch axis or use --batch %d" % (batch, info.name, dim, dim)
                )
            out.append(dim)
        elif axis == 0:
            out.append(batch)
        else:
            raise InputSpecError(
                "input %r has a dynamic dim %r at axis %d (model shape %s): pass --shape %s=%s"
                % (info.name, dim, axis, _fmt(info.shape), info.name,
                   _fmt([d if isinstance(d, int) else (batch if i == 0 else 1) for i, d in enumerate(info.shape)]))
            )
    return out


def generate(infos: List[TensorInfo], shapes: Dict[str, List[int]], batch: int, seed: int) -> Dict[str, np.ndarray]:
    """Seeded random inputs of the right dtype and shape.

    Floats are standard normal; integers uniform in [0, 100) (safe for token ids and indices of most
    vocabularies); uint8 uniform in [0, 256); bools fair coin flips.
    """
    unknown = sorted(set(shapes) - {i.name for i in infos})
    if unknown:
        raise InputSpecError(
            "--shape names input(s) %s that the model does not have; its inputs are: %s"
            % (", ".join(unknown), ", ".join(i.name for i in infos))
        )
    rng = np.random.default_rng(seed)
    feeds: Dict[str, np.ndarray] = {}
    for info in infos:
        shape = resolve_shape(info, shapes, batch)
        dtype = np.dtype(info.dtype)
        if dtype.kind == "f":
            arr = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.uint8:
            arr = rng.integers(0, 256, size=shape, dtype=np.uint8)
        elif dtype.kind in "iu":
            arr = rng.integers(0, 100, size=shape).astype(dtype)
        elif dtype.kind == "b":
            arr = rng.integers(0, 2, size=shape).astype(bool)
        else:
            raise InputSpecError(
                "input %r has dtype %s, which the agent cannot generate: pass inputs as .npz" % (info.name, info.dtype))
        feeds[info.name] = arr
    return feeds


# What numpy lets through for a damaged or hostile .npz: a broken zip, a cut deflate stream, a header declaring a
# huge array, an object array (pickles are never loaded: allow_pickle=False).
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, MemoryError, OverflowError)


def read_npz(path: str, what: str = "inputs file") -> Dict[str, np.ndarray]:
    """Every array of an ``.npz``, read now; a damaged file or one holding Python objects is an InputSpecError."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if not hasattr(loaded, "files"):
            raise ValueError("a single .npy array, not an .npz archive")
        with loaded as data:
            arrays = {k: data[k] for k in data.files}
        junk = [k for k, v in arrays.items() if not isinstance(v, np.ndarray)]
        if junk:
            raise ValueError("member %r is not a numpy array" % junk[0])
        return arrays
    except _UNREADABLE as exc:
        text = str(exc).strip()
        why = text.splitlines()[0][:200] if text else type(exc).__name__
        if "allow_pickle" in why:
            why = "it holds Python objects (pickles), which are never loaded"
        raise InputSpecError("cannot read %s %s (%s): save numeric arrays with numpy.savez" % (what, path, why)) \
            from None


def load_npz(path: str, infos: List[TensorInfo]) -> Dict[str, np.ndarray]:
    """Inputs from a user ``.npz`` keyed by input name, checked against the model signature (dtype and shape)."""
    data = _Archive(read_npz(path))
    names = [i.name for i in infos]
    missing = [n for n in names if n not in data.files]
    if missing:
        raise InputSpecError(
            "inputs file %s lacks input(s) %s (it has: %s): save arrays keyed by the model's input names"
            % (path, ", ".join(missing), ", ".join(data.files) or "nothing")
        )
    feeds: Dict[str, np.ndarray] = {}
    for info in infos:
        arr = data[info.name]
        if np.dtype(info.dtype) != arr.dtype:
            raise InputSpecError(
                "array %r in %s has dtype %s but the model expects %s: save it as %s"
                % (info.name, path, arr.dtype, info.dtype, info.dtype)
            )
        if len(arr.shape) != len(info.shape) or any(
                isinstance(want, int) and want > 0 and want != got for want, got in zip(info.shape, arr.shape)):
            raise InputSpecError(
                "array %r in %s has shape %s but the model expects %s: save it with that shape"
                % (info.name, path, _fmt(list(arr.shape)), _fmt(info.shape))
            )
        feeds[info.name] = arr
    return feeds


class _Archive(dict):  # type: ignore[type-arg]
    """The arrays of an .npz with numpy's ``files`` attribute."""

    @property
    def files(self) -> List[str]:
        return list(self)


def describe(feeds: Dict[str, np.ndarray]) -> List[Dict[str, Any]]:
    return [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype)} for k, v in feeds.items()]


