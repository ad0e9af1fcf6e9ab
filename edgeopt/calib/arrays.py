"""Calibration data from numpy files: ``.npz`` keyed by input name, or ``.npy`` for single-input models."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import inbound
from ..errors import first_line
from .base import CalibrationError, InputSpec

# What numpy lets through for a damaged or hostile file: a broken zip, a cut deflate stream, a header that
# declares a huge array, an object array (pickles are never loaded: allow_pickle=False).
_UNREADABLE = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, MemoryError, OverflowError)

LABELS_KEY = "labels"  # an eval .npz may carry the true class of each sample under this key


def load_arrays(path: Path, specs: Sequence[InputSpec]) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Arrays keyed by input name, plus the optional ``labels`` array of an ``.npz``.

    Raises:
        CalibrationError: unreadable file, ``.npy`` for a multi-input model, or an unknown suffix.
    """
    arrays, labels = _read(path, specs)
    for name, arr in arrays.items():
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            bad = int(np.argwhere(~np.isfinite(arr))[0][0]) if arr.ndim else 0
            raise CalibrationError(f"{path}: array '{name}' holds NaN or infinite values (first at index {bad} of "
                                   "axis 0); remove or fix those samples")
    return arrays, labels


def _read(path: Path, specs: Sequence[InputSpec]) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    try:
        if path.suffix == ".npz":
            loaded = inbound.load_arrays(path)
            if not isinstance(loaded, dict):
                raise ValueError("a single .npy array, not an .npz archive: rename it to .npy")
            arrays = dict(loaded)
            labels = arrays.pop(LABELS_KEY, None) if LABELS_KEY not in {s.name for s in specs} else None
            return arrays, labels
        if path.suffix == ".npy":
            if len(specs) != 1:
                names = ", ".join(s.name for s in specs)
                raise CalibrationError(
                    f"{path}: a .npy file holds one array but the model has inputs {names}; "
                    "save an .npz keyed by input name (np.savez(path, name=array, ...))"
                )
            single = inbound.load_arrays(path)
            if isinstance(single, dict):
                raise ValueError("an .npz archive, not a single .npy array: rename it to .npz")
            return {specs[0].name: single}, None
    except _UNREADABLE as exc:
        why = first_line(exc, limit=200)
        if "allow_pickle" in why or "pickles" in why:
            why = "it holds Python objects (pickles), which edgeopt never loads"
        raise CalibrationError(f"cannot read {path} ({why}); save numeric arrays with numpy (np.savez / np.save)") \
            from None
    raise CalibrationError(f"{path}: unknown data file type; use .npz, .npy or a folder of images")
