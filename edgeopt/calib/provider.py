"""One object that hands out calibration or evaluation samples for whichever model a pass is working on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from .arrays import load_arrays
from .base import CalibrationError, InputSpec, model_inputs, split_samples
from .images import ImagePreprocessing, load_images
from .random_data import RANDOM_WARNING, random_samples

RANDOM_SAMPLE_COUNT = 32


class Sink(Protocol):
    """The part of a pass ``Reporter`` this module uses (structural, so calib does not import passes)."""

    def warn(self, message: str) -> None: ...

    def progress(self, task: str, done: int, total: int | None) -> None: ...


class _NullSink:
    def warn(self, message: str) -> None:
        return None

    def progress(self, task: str, done: int, total: int | None) -> None:
        return None


class DataSource:
    """Samples from a file or folder, or random ones (with a loud warning) when ``path`` is None.

    Implements :class:`edgeopt.passes.base.CalibrationProvider`. Samples are cached per input signature, so
    several passes of a recipe read the data once.
    """

    def __init__(
        self,
        path: Path | None,
        *,
        preprocessing: ImagePreprocessing | None = None,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        reporter: Sink | None = None,
        seed: int = 0,
        purpose: str = "calibration",
    ) -> None:
        """Check the data exists now, so a typo fails before any work.

        Args:
            path: an ``.npz``, an ``.npy``, a folder of images, or None for random inputs.
            preprocessing: how images are turned into inputs (folders only).
            input_shapes: concrete shapes of dynamic inputs (random data only).
            reporter: a pass Reporter receiving warnings and progress.
            seed: seed of random inputs.
            purpose: "calibration" or "evaluation", used in messages.

        Raises:
            CalibrationError: the path does not exist or is not a supported kind.
        """
        self.path = Path(path) if path is not None else None
        self.preprocessing = preprocessing or ImagePreprocessing()
        self.input_shapes = {k: list(v) for k, v in (input_shapes or {}).items()}
        self.reporter: Sink = reporter if reporter is not None else _NullSink()
        self.seed = seed
        self.purpose = purpose
        self.labels: np.ndarray | None = None
        self._cache: dict[tuple[object, ...], list[dict[str, np.ndarray]]] = {}
        self._warned = False
        if self.path is not None:
            if not self.path.exists():
                raise CalibrationError(
                    f"{purpose} data {self.path} not found: pass an .npz keyed by input name, "
                    "an .npy, or a folder of images"
                )
            if not self.path.is_dir() and self.path.suffix not in (".npz", ".npy"):
                raise CalibrationError(
                    f"{purpose} data {self.path}: unknown kind '{self.path.suffix}'; use .npz, "
                    ".npy or a folder of images (docs/calibration.md)"
                )

    @property
    def is_random(self) -> bool:
        return self.path is None

    def samples(self, model_path: Path, limit: int | None = None) -> list[dict[str, np.ndarray]]:
        """Feeds for ``model_path``'s inputs (at most ``limit``).

        Raises:
            CalibrationError, ShapeError: the data does not fit the model.
        """
        specs = model_inputs(model_path)
        key = (limit, *((s.name, s.dtype.str, s.dims) for s in specs))
        if key not in self._cache:
            self._cache[key] = self._load(specs, limit)
        return self._cache[key][:limit] if limit else self._cache[key]

    def _load(self, specs: list[InputSpec], limit: int | None) -> list[dict[str, np.ndarray]]:
        if self.path is None:
            if not self._warned and self.purpose == "calibration":
                self.reporter.warn(RANDOM_WARNING)
                self._warned = True
            return random_samples(specs, self.input_shapes, limit or RANDOM_SAMPLE_COUNT, self.seed)
        if self.path.is_dir():
            if len(specs) != 1:
                raise CalibrationError(
                    f"{self.path}: a folder of images feeds one input but the model has "
                    f"{len(specs)}; pass an .npz keyed by input name"
                )

            def progress(done: int, total: int) -> None:
                self.reporter.progress(f"reading {self.purpose} images", done, total)

            arrays = {specs[0].name: load_images(self.path, specs[0], self.preprocessing, limit, progress)}
            labels = None
        else:
            arrays, labels = load_arrays(self.path, specs)
        samples = split_samples(arrays, specs, str(self.path))
        if labels is not None:
            if len(labels) < len(samples):
                raise CalibrationError(
                    f"{self.path}: 'labels' has {len(labels)} entries for {len(samples)} "
                    "samples; give one label per sample"
                )
            self.labels = np.asarray(labels)[: len(samples)]
        return samples
