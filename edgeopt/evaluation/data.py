"""Evaluation data: an ``.npz`` (inputs by input name, optional ``labels``) or a class-per-subfolder image folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..calib import DataSource, ImagePreprocessing
from ..calib.images import image_files
from ..errors import EdgeoptError, InputError
from ..fsutil import sha256_file


@dataclass(frozen=True)
class EvalData:
    """Stacked evaluation inputs (samples on axis 0) and labels (one per sample) when known."""

    inputs: dict[str, np.ndarray]
    labels: np.ndarray | None
    source: str

    @property
    def count(self) -> int:
        return len(next(iter(self.inputs.values())))

    def save(self, path: Path) -> Path:
        """Write the inputs as the ``.npz`` pushed to the agent; returns ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **self.inputs)  # type: ignore[arg-type]
        tmp.replace(path)
        return path

    def digest(self) -> str:
        """A content hash of inputs and labels (part of every cache key)."""
        import hashlib

        h = hashlib.sha256()
        for name in sorted(self.inputs):
            h.update(name.encode())
            h.update(np.ascontiguousarray(self.inputs[name]).tobytes())
        if self.labels is not None:
            h.update(np.ascontiguousarray(self.labels).tobytes())
        return h.hexdigest()


def _folder_labels(folder: Path, count: int) -> np.ndarray | None:
    """Class index per image (sorted sub-folder names), in the order the image loader reads them."""
    files = image_files(folder)[:count]
    parents = [p.parent for p in files]
    if any(p == folder for p in parents):
        return None  # images directly in the folder: no classes
    classes = sorted({p.relative_to(folder).parts[0] for p in files})
    index = {c: i for i, c in enumerate(classes)}
    return np.asarray([index[p.relative_to(folder).parts[0]] for p in files], dtype=np.int64)


def load_eval_data(path: str | Path, model_path: Path, *, preprocessing: ImagePreprocessing | None = None,
                   limit: int | None = None) -> EvalData:
    """Read evaluation samples for ``model_path``'s inputs.

    Args:
        path: ``.npz`` keyed by input name (plus optional ``labels``), or a folder of images with one
            sub-folder per class (labels are the sorted sub-folder index).
        model_path: the reference model (its input names and shapes).
        preprocessing: how images become tensors (folders only; docs/calibration.md).
        limit: at most this many samples.

    Raises:
        InputError: missing or unreadable data, or data that does not fit the model.
    """
    src_path = Path(path)
    if not src_path.exists():
        raise InputError(f"--eval {src_path} not found: pass an .npz keyed by input name or a folder of images")
    try:
        src = DataSource(src_path, preprocessing=preprocessing, purpose="evaluation")
        samples = src.samples(model_path, limit)
    except EdgeoptError as exc:
        raise InputError(f"--eval: {exc}") from None
    if not samples:
        raise InputError(f"--eval {src_path}: no samples; give at least one")
    inputs = {k: np.concatenate([s[k] for s in samples], axis=0) for k in samples[0]}
    labels = src.labels if not src_path.is_dir() else _folder_labels(src_path, len(samples))
    tag = sha256_file(src_path)[:12] if src_path.is_file() else "folder"
    return EvalData(inputs=inputs, labels=labels, source=f"{src_path} ({tag})")
