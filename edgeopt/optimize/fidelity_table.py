"""The fidelity table of ``edgeopt.optimize``: each artifact against the ONNX reference, on which samples, read
with which task metric (``--metric``/``--output``, as in ``edgeopt.sweep``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..calib import DataSource
from ..evaluation import MetricSpec, OutputSelection, parse_output, resolve_metric
from ..passes.base import Artifact, ArtifactFormat
from .fidelity import FidelityRow, agent_latency, measure_fidelity
from .job import CollectReporter, OptimizeData

FIDELITY_EVAL_SAMPLES = 1000
FIDELITY_CALIB_SAMPLES = 32


def fidelity_rows(
    source: Artifact,
    artifacts: list[Artifact],
    sources: OptimizeData,
    reporter: CollectReporter,
    bench: bool,
    seed: int,
    task: tuple[MetricSpec | None, OutputSelection | None] = (None, None),
) -> list[FidelityRow] | None:
    """Each artifact vs the ONNX reference on the eval, calibration or random samples, read by ``task``."""
    reference = (
        source
        if source.format is ArtifactFormat.ONNX
        else next((a for a in artifacts if a.format is ArtifactFormat.ONNX), None)
    )
    if reference is None:
        return None
    onnx_artifacts = [a for a in artifacts if a is not reference]
    samples, data, labels = fidelity_samples(reference, sources, reporter, seed)
    spec, selection = task
    metric = resolve_metric(spec, has_labels=labels is not None) if spec is not None else None
    origin = sources.paths.get(data)
    said = f" of {origin}" if origin else ""
    with_metric = f", metric {metric.label}" if metric is not None else ""
    reporter.info(f"fidelity: comparing {len(onnx_artifacts)} artifact(s) on the first {len(samples)} {data} "
                  f"samples{said}{with_metric}")
    if metric is not None and metric.needs_labels and labels is None:
        reporter.warn(f"fidelity metric {metric.name} needs labels, and the {data} samples have none: pass --eval "
                      "with labels, or use --metric agreement")
    return measure_fidelity(
        reference, onnx_artifacts, samples, data=data, labels=labels, bench=agent_latency if bench else None,
        metric=metric, selection=selection, source=str(origin) if origin else None,
        warn=lambda line: reporter.warn(f"fidelity: {line}"),
    )


def fidelity_samples(
    reference: Artifact, sources: OptimizeData, reporter: CollectReporter, seed: int
) -> tuple[list[Any], str, Any]:
    """The fidelity samples, which data they came from (eval, calibration or random) and their labels."""
    calib_src, eval_src = sources.calib, sources.eval
    if eval_src is not None:
        samples = eval_src.samples(Path(reference.path), FIDELITY_EVAL_SAMPLES)
        return samples, "eval", eval_src.labels[: len(samples)] if eval_src.labels is not None else None
    if calib_src is not None and not calib_src.is_random:
        return calib_src.samples(Path(reference.path), FIDELITY_CALIB_SAMPLES), "calibration", None
    random_src = DataSource(None, input_shapes=sources.shapes, seed=seed + 1, purpose="evaluation")
    reporter.warn(
        "fidelity measured on random inputs (no --eval or --calib data): errors and agreement are only indicative"
    )
    return random_src.samples(Path(reference.path), 8), "random", None


def task_metric(metric: MetricSpec | str | None,
                 output: str | int | None) -> tuple[MetricSpec | None, OutputSelection | None]:
    """The fidelity table's metric spec and output selection, checked like the sweep's before any work (the
    default name, top1 or agreement, is picked once the samples show whether they have labels)."""
    selection = parse_output(output) if output is not None else None
    spec = metric if isinstance(metric, MetricSpec) else MetricSpec(name=metric or None)
    if spec == MetricSpec():
        return None, selection
    resolve_metric(spec)  # unknown names and parameters the metric does not take fail here
    return spec, selection
