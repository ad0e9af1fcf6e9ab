"""What one ``edgeopt.optimize`` call works on, shared by its steps (:mod:`.api`) and its fidelity table
(:mod:`.fidelity_table`): the resolved job, the samples it reads, and the reporter that keeps the warnings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from ..analysis.overrides import check_shape_names, real_inputs
from ..calib import DataSource, ImagePreprocessing
from ..passes.base import Artifact, ArtifactFormat, Pass, Reporter
from ..passes.convert import ConversionPlan
from ..passes.torch_input import torch_stem
from ..recipes import LoadedRecipe
from ..targets import Target


class CollectReporter:
    """Forwards to the caller's reporter and keeps every warning for the result."""

    def __init__(self, inner: Reporter) -> None:
        self.inner = inner
        self.warnings: list[str] = []

    def info(self, message: str) -> None:
        self.inner.info(message)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
        self.inner.warn(message)

    def progress(self, task: str, done: int, total: int | None) -> None:
        self.inner.progress(task, done, total)


@dataclass(frozen=True)
class OptimizeJob:
    """What ``optimize`` will do, fully resolved and checked before any work."""

    target: Target
    loaded: LoadedRecipe
    source: Artifact
    passes: list[Pass[Any]]
    conversions: ConversionPlan

    @property
    def needs_calib(self) -> bool:
        return any(p.needs_calibration for p in [*self.passes, *self.conversions.passes.values()])

    @property
    def stem(self) -> str:
        """What output files are named after (the input file's stem, or the PyTorch model's)."""
        path = self.source.path
        return Path(path).stem if self.source.format is ArtifactFormat.ONNX else torch_stem(path)


@dataclass(frozen=True)
class OptimizeData:
    """The samples ``optimize`` reads: calibration (when a pass needs it or it was given) and evaluation."""

    shapes: dict[str, list[int]]
    calib: DataSource | None
    eval: DataSource | None
    paths: dict[str, str | Path | None]  # the file or folder given for each ("eval", "calibration")

    @classmethod
    def open(
        cls, job: OptimizeJob, calib: str | Path | None, eval_data: str | Path | None,
        input_shapes: Mapping[str, Sequence[int]] | None, preprocessing: ImagePreprocessing | None,
        reporter: Reporter, seed: int,
    ) -> OptimizeData:
        """Check the data paths (step 2); the recipe's preprocessing applies unless ``preprocessing`` is given."""
        shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
        if shapes and job.source.format is ArtifactFormat.ONNX:  # PyTorch inputs are checked where they are traced
            graph = onnx.load(str(job.source.path), load_external_data=False).graph
            check_shape_names(str(job.source.path), [vi.name for vi in real_inputs(graph)], shapes)
        pp = preprocessing or job.loaded.recipe.preprocessing
        calib_src = (
            DataSource(Path(calib) if calib else None, preprocessing=pp, input_shapes=shapes, reporter=reporter,
                       seed=seed)
            if (job.needs_calib or calib)
            else None
        )
        eval_src = (
            DataSource(Path(eval_data), preprocessing=pp, input_shapes=shapes, reporter=reporter, seed=seed,
                       purpose="evaluation")
            if eval_data
            else None
        )
        return cls(shapes, calib_src, eval_src, {"eval": eval_data, "calibration": calib})
