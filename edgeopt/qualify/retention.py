"""Retention: how much of the reference model's quality the qualified model keeps.

``retention = metric(candidate) / metric(reference)``: top-1 accuracy against labels when the eval data has them,
else top-1 agreement with the reference (the reference agrees with itself, so retention = agreement). A spec's
``eval`` block may instead name any sweep metric with its parameters and output (a
:class:`~edgeopt.evaluation.MetricSpec`, resolved by :func:`edgeopt.evaluation.resolve_metric` as in the sweep
and optimize's fidelity table).

Where the outputs are computed is a seam: :class:`RetentionEvaluator`. Today :class:`HostOnnxEvaluator` runs both
models with onnxruntime on the host CPU; a device-side evaluator (the sweep, issue 6) can replace it by passing
``evaluator=`` to :func:`edgeopt.qualify.qualify` without touching the gates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..analysis.loader import load_model
from ..analysis.precision import model_precision
from ..calib import DataSource
from ..errors import InputError
from ..evaluation import MetricSpec, parse_output, resolve_metric
from ..optimize.fidelity import FidelityRow, measure_fidelity
from ..passes.base import Artifact, ArtifactFormat
from .result import RetentionResult


class RetentionEvaluator(Protocol):
    """Computes retention of ``candidate`` against ``reference`` on eval data."""

    name: str

    def evaluate(
        self,
        reference: Path,
        candidate: Path,
        *,
        data: Path | None,
        samples: int,
        metric: str | MetricSpec,
        shapes: Mapping[str, Sequence[int]],
        seed: int,
        output: str | None = None,
    ) -> RetentionResult:
        """``metric``: auto, accuracy, top1_agreement, or a :class:`MetricSpec` read on ``output``.

        Raises: InputError for data that does not fit the model."""
        ...


class HostOnnxEvaluator:
    """Both models on the host with onnxruntime (CPU), through :func:`edgeopt.optimize.fidelity.measure_fidelity`."""

    name = "host-onnxruntime"

    def evaluate(
        self,
        reference: Path,
        candidate: Path,
        *,
        data: Path | None,
        samples: int,
        metric: str | MetricSpec,
        shapes: Mapping[str, Sequence[int]],
        seed: int,
        output: str | None = None,
    ) -> RetentionResult:
        source = DataSource(data, input_shapes=shapes, seed=seed, purpose="evaluation")
        feeds = source.samples(reference, samples)
        labels = source.labels
        notes: list[str] = []
        if data is None:
            notes.append("random inputs (no eval.data): the metric on random data is only indicative")
        if isinstance(metric, MetricSpec):
            return self._task_metric(reference, candidate, feeds, labels, metric, output, data, notes)
        chosen = metric
        if metric == "auto":
            chosen = "accuracy" if labels is not None else "top1_agreement"
        if chosen == "accuracy" and labels is None:
            raise InputError(f"eval.metric accuracy needs labels: add a 'labels' array to {data or 'eval.data'}")
        untested: list[str] = []
        rows = measure_fidelity(_artifact(reference), [_artifact(candidate)], feeds, data=str(data or "random"),
                                labels=labels if chosen == "accuracy" else None, bench=None, warn=untested.append)
        ref_row = rows[0]
        cand_row = rows[1] if len(rows) > 1 else rows[0]  # same file: compared with itself
        notes.extend(cand_row.notes)
        if chosen == "accuracy":
            ref_value, cand_value = ref_row.accuracy, cand_row.accuracy
        else:
            ref_value, cand_value = 1.0, cand_row.top1_agreement
        ratio = None
        if ref_value is None or cand_value is None:
            notes.append("the first output is not classifier-like ([N, classes]): no top-1 metric")
        elif ref_value <= 0:
            notes.append("the reference scores 0 on the eval data: a ratio is undefined")
        else:
            ratio = cand_value / ref_value
        return RetentionResult(
            metric="accuracy" if chosen == "accuracy" else "top1_agreement",
            reference_value=ref_value, candidate_value=cand_value, retention=ratio, samples=len(feeds),
            data=str(data) if data is not None else "random", evaluated_on=self.name,
            reference_path=str(reference), candidate_path=str(candidate), notes=notes,
            cannot_tell=untested[0] if untested else None,
        )

    def _task_metric(self, reference: Path, candidate: Path, feeds: list[dict[str, Any]], labels: Any,
                     spec: MetricSpec, output: str | None, data: Path | None, notes: list[str]) -> RetentionResult:
        """Retention by a sweep metric: the same numbers as the sweep and optimize's fidelity table."""
        metric = resolve_metric(spec, has_labels=labels is not None)
        if metric.needs_labels and labels is None:
            raise InputError(f"eval.metric {metric.name} needs labels: add a 'labels' array to "
                             f"{data or 'eval.data'}, or use metric: agreement")
        untested: list[str] = []
        rows = measure_fidelity(_artifact(reference), [_artifact(candidate)], feeds, data=str(data or "random"),
                                labels=labels, bench=None, metric=metric, selection=parse_output(output),
                                warn=untested.append)
        ref_row, cand_row = rows[0], rows[1] if len(rows) > 1 else rows[0]
        notes.extend(_notes(ref_row, cand_row))
        return RetentionResult(
            metric=metric.label, reference_value=ref_row.metric_value, candidate_value=cand_row.metric_value,
            retention=cand_row.retention, samples=len(feeds), data=str(data) if data is not None else "random",
            evaluated_on=self.name, reference_path=str(reference), candidate_path=str(candidate), notes=notes,
            cannot_tell=untested[0] if untested else None,
        )


def _notes(ref_row: FidelityRow, cand_row: FidelityRow) -> list[str]:
    return list(dict.fromkeys([*ref_row.notes, *cand_row.notes]))


def _artifact(path: Path) -> Artifact:
    precision = model_precision(load_model(path))
    return Artifact.from_file(path, name=path.stem, format=ArtifactFormat.ONNX, precision=precision)
