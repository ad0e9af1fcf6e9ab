"""Calibration data from numpy files: ``.npz`` keyed by input name, or ``.npy`` for single-input models."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .base import CalibrationError, InputSpec

LABELS_KEY = "labels"  # an eval .npz may carry the true class of each sample under this key


def load_arrays(path: Path, specs: Sequence[InputSpec]) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Arrays keyed by input name, plus the optional ``labels`` array of an ``.npz``.

    Raises:
        CalibrationError: unreadable file, ``.npy`` for a multi-input model, or an unknown suffix.
    """
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            labels = arrays.pop(LABELS_KEY, None) if LABELS_KEY not in {s.name for s in specs} else None
            return arrays, labels
        if path.suffix == ".npy":
            if len(specs) != 1:
                names = ", ".join(s.name for s in specs)
                raise CalibrationError(
                    f"{path}: a .npy file holds one array but the model has inputs {names}; "
                    "save an .npz keyed by input name (np.savez(path, name=array, ...))"
                )
            return {specs[0].name: np.load(path, allow_pickle=False)}, None
    except (OSError, ValueError) as exc:
        raise CalibrationError(f"cannot read {path} ({exc}); save it with numpy (np.savez / np.save)") from exc
    raise CalibrationError(f"{path}: unknown data file type; use .npz, .npy or a folder of images")
