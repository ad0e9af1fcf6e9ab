"""How close each optimized artifact stays to the original: size ratio, output error, cosine similarity, top-1
agreement for classifier-like outputs, accuracy when labels are given, the task metric and its retention when one
is asked for (the sweep's metrics, :mod:`edgeopt.evaluation`), and local latency through the agent.

Outputs are computed in-process with onnxruntime on the CPU; latency goes through :func:`edgeopt.benchmark` (the
device agent), with a short run: it ranks artifacts, it is not a full benchmark.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..errors import EdgeoptError, InputError
from ..evaluation import Metric, OutputSelection, parse_output, retention
from ..evaluation.degenerate import cannot_tell
from ..passes.base import Artifact, ArtifactFormat

BENCH_ITERATIONS = 50
BENCH_MIN_DURATION_S = 1.0


class FidelityRow(BaseModel):
    """One artifact compared with the reference model on the same samples."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    artifact: str = Field(description="Artifact name ('input' for the reference itself).")
    path: str = Field(description="Artifact file.")
    precision: str = Field(description="Artifact precision.")
    size_bytes: int = Field(description="Artifact size on disk in bytes.")
    size_ratio: float = Field(description="size_bytes / the input model's size_bytes.")
    samples: int = Field(description="Samples compared.")
    data: str = Field(description="Where the samples came from: eval, calibration or random.")
    source: str | None = Field(default=None, description="File or folder of the samples (the first `samples` of "
                               "it); None for random inputs.")
    output: str | None = Field(default=None, description="Output selection the errors, cosine and metric read "
                               "(e.g. '0,slice=[:,4:,:]'); None: errors and cosine over every output.")
    max_abs_error: float | None = Field(default=None, description="Largest |artifact - reference| over all outputs.")
    mean_abs_error: float | None = Field(default=None, description="Mean |artifact - reference| over all outputs.")
    cosine_similarity: float | None = Field(default=None, description="Lowest cosine similarity over the outputs.")
    top1_agreement: float | None = Field(
        default=None, description="Share of samples whose argmax matches the reference (classifier-like output)."
    )
    accuracy: float | None = Field(default=None, description="Top-1 accuracy against the eval labels (0..1).")
    metric: str | None = Field(default=None, description="The task metric with its parameters, e.g. "
                               "'agreement(axis=1, score_threshold=0.25)'; None when none was asked for.")
    metric_value: float | None = Field(default=None, description="The metric of this artifact vs the input model.")
    retention: float | None = Field(default=None, description="metric(artifact) / metric(input), as in the sweep.")
    latency_ms_p50: float | None = Field(default=None, description="Median latency on this machine (short run).")
    speedup: float | None = Field(default=None, description="Reference p50 latency / this p50 latency.")
    speedup_ci: list[float] | None = Field(
        default=None, description="95 % interval [low, high] of the speed-up from per-block medians of both runs; "
        "an interval that covers 1.0 means the speed-up is within noise.")
    notes: list[str] = Field(default_factory=list, description="Why a number is missing, and other caveats.")


Benchmark = Callable[[Path, dict[str, np.ndarray]], "np.ndarray"]  # per-inference latencies (ms), in run order


def measure_fidelity(
    reference: Artifact,
    artifacts: Sequence[Artifact],
    samples: Sequence[dict[str, np.ndarray]],
    *,
    data: str,
    labels: np.ndarray | None = None,
    bench: Benchmark | None = None,
    metric: Metric | None = None,
    selection: OutputSelection | None = None,
    source: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[FidelityRow]:
    """Compare every ONNX artifact with ``reference`` on ``samples``.

    Args:
        reference: the original ONNX model (the first row, with error 0).
        artifacts: artifacts to compare; non-ONNX ones are skipped.
        samples: feeds keyed by input name.
        data: where the samples came from (shown in the table).
        labels: true classes of the samples, for accuracy.
        bench: measures p50 latency of a model file on one feed (None: no latency).
        metric: the task metric (:func:`edgeopt.evaluation.resolve_metric`); its value and retention per row.
        selection: the output (and slice) the metric, errors and cosine read; None: every output for errors and
            cosine, the first output for the metric.
        source: file or folder the samples came from (shown in the table).
        warn: receives a line when the samples cannot tell artifacts apart (:mod:`edgeopt.evaluation.degenerate`).

    Returns:
        One row per ONNX artifact, the reference first.
    """
    ref_outputs, ref_note = _run(Path(reference.path), samples)
    if ref_outputs is None:
        raise EdgeoptError(f"cannot run the input model {reference.path} on the fidelity samples: {ref_note}")
    if warn is not None:
        _warn_if_untested(ref_outputs, metric, selection, warn)
    rows = []
    ref_latency = None
    ref_timed: np.ndarray | None = None
    for art in [reference, *artifacts]:
        if art.format is not ArtifactFormat.ONNX:
            continue
        notes: list[str] = []
        values: dict[str, Any] = {}
        outputs, note = (ref_outputs, None) if art is reference else _run(Path(art.path), samples)
        if outputs is None:
            notes.append(f"not runnable on local onnxruntime: {note}")
        else:
            values.update(_compare(ref_outputs, outputs, labels, notes, selection))
            if metric is not None:
                values.update(_task_metric(ref_outputs, outputs, labels, notes, metric, selection))
        latency, timed = None, None
        if bench is not None and outputs is not None:
            try:
                timed = np.asarray(bench(Path(art.path), samples[0]), dtype=np.float64)
                latency = float(np.median(timed))
            except Exception as exc:  # a failed latency run must not sink the optimize; say why instead
                notes.append(f"latency not measured: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        if art is reference:
            ref_latency, ref_timed = latency, timed
        rows.append(
            FidelityRow(
                artifact=art.name,
                path=art.path,
                precision=art.precision.value,
                size_bytes=art.size_bytes,
                size_ratio=round(art.size_bytes / max(reference.size_bytes, 1), 4),
                samples=len(samples),
                data=data,
                source=source,
                output=selection.spec if selection is not None else None,
                metric=metric.label if metric is not None else None,
                latency_ms_p50=round(latency, 4) if latency is not None else None,
                speedup=round(ref_latency / latency, 3) if latency and ref_latency else None,
                speedup_ci=_speedup_interval(ref_timed, timed),
                notes=notes,
                **values,
            )
        )
    return rows


def _warn_if_untested(ref: Outputs, metric: Metric | None, selection: OutputSelection | None,
                      warn: Callable[[str], None]) -> None:
    try:
        why = cannot_tell(metric, ref.stacked(selection or parse_output(None)))
    except InputError:  # the metric's own check says what is wrong with the selection
        return
    if why:
        warn(why)


def _speedup_interval(ref: np.ndarray | None, art: np.ndarray | None) -> list[float] | None:
    """95 % bootstrap interval of median(ref) / median(art) over per-block medians (issue 16, item 7)."""
    from ..history.stats import block_medians, bootstrap_median_ratio

    if ref is None or art is None or ref.size < 2 or art.size < 2:
        return None
    _, low, high = bootstrap_median_ratio(block_medians(art), block_medians(ref), resamples=500)
    return [round(low, 3), round(high, 3)]


@dataclass(frozen=True)
class Outputs:
    """A model's outputs on every sample (``samples[i][k]``: sample i, output k) and the output names."""

    samples: list[list[np.ndarray]]
    names: list[str]

    def stacked(self, selection: OutputSelection) -> np.ndarray:
        """The selected output of every sample on axis 0 (as the device's eval outputs are)."""
        outs = [np.concatenate([np.asarray(s[k]) for s in self.samples], axis=0) for k in range(len(self.names))]
        return selection.pick(outs, self.names)


def _run(path: Path, samples: Sequence[dict[str, np.ndarray]]) -> tuple[Outputs | None, str | None]:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        outs = [[np.asarray(o) for o in session.run(None, feed)] for feed in samples]
        return Outputs(outs, [o.name for o in session.get_outputs()]), None
    except Exception as exc:  # onnxruntime raises its own exception types for missing kernels and bad inputs
        return None, " ".join(str(exc).split())[:200]


def _task_metric(ref: Outputs, got: Outputs, labels: np.ndarray | None, notes: list[str], metric: Metric,
                 selection: OutputSelection | None) -> dict[str, Any]:
    """``metric_value`` and ``retention`` of ``got`` vs ``ref``; a metric that cannot run says why in a note."""
    sel = selection or parse_output(None)
    try:
        a, b = ref.stacked(sel), got.stacked(sel)
        lab = None if labels is None else np.asarray(labels)[: len(a)]
        value, ret = retention(metric, a, b.astype(a.dtype, copy=False), lab)
    except InputError as exc:
        notes.append(f"metric {metric.label}: {exc}")
        return {}
    return {"metric_value": round(value, 6), "retention": round(ret, 6)}


def _pairs(ref: Outputs, got: Outputs, selection: OutputSelection | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Flattened (reference, artifact) arrays: the selected output, or each output in turn."""
    if selection is not None:
        return [(ref.stacked(selection).astype(np.float64).ravel(), got.stacked(selection).astype(np.float64).ravel())]
    return [(np.concatenate([np.asarray(s[k], dtype=np.float64).ravel() for s in ref.samples]),
             np.concatenate([np.asarray(s[k], dtype=np.float64).ravel() for s in got.samples]))
            for k in range(len(ref.names))]


def _compare(ref: Outputs, got: Outputs, labels: np.ndarray | None, notes: list[str],
             selection: OutputSelection | None = None) -> dict[str, Any]:
    max_err = 0.0
    abs_sum = 0.0
    count = 0
    cosines = []
    try:
        pairs = _pairs(ref, got, selection)
    except InputError as exc:
        notes.append(str(exc))
        return {}
    for k, (a, b) in enumerate(pairs):
        if a.shape != b.shape:
            notes.append(f"output {k} changed shape ({a.shape} vs {b.shape})")
            continue
        finite = np.isfinite(a) & np.isfinite(b)
        if not finite.all():
            notes.append(f"output {k} has {int((~finite).sum())} non-finite values")
        diff = np.abs(a[finite] - b[finite])
        if diff.size:
            max_err = max(max_err, float(diff.max()))
            abs_sum += float(diff.sum())
            count += diff.size
        denom = float(np.linalg.norm(a[finite]) * np.linalg.norm(b[finite]))
        cosines.append(
            float(a[finite] @ b[finite]) / denom if denom > 0 else (1.0 if diff.max(initial=0) == 0 else 0.0)
        )
    out: dict[str, Any] = {
        "max_abs_error": round(max_err, 6),
        "mean_abs_error": round(abs_sum / count, 6) if count else None,
        "cosine_similarity": round(min(cosines), 6) if cosines else None,
    }
    if _classifier_like(ref.samples):
        ref_top = np.array([int(np.argmax(s[0].reshape(-1))) for s in ref.samples])
        got_top = np.array([int(np.argmax(s[0].reshape(-1))) for s in got.samples])
        out["top1_agreement"] = round(float((ref_top == got_top).mean()), 4)
        if labels is not None and len(labels) == len(got_top):
            out["accuracy"] = round(float((got_top == np.asarray(labels).reshape(-1)).mean()), 4)
    return out


def _classifier_like(outputs: list[list[np.ndarray]]) -> bool:
    """First output is [1, C] (or [C]) with C > 1 per sample: a score vector whose argmax is the class."""
    first = outputs[0][0]
    return first.ndim in (1, 2) and first.shape[-1] > 1 and int(np.prod(first.shape)) == first.shape[-1]


def agent_latency(
    path: Path,
    feed: dict[str, np.ndarray],
    *,
    iterations: int = BENCH_ITERATIONS,
    min_duration_s: float = BENCH_MIN_DURATION_S,
) -> np.ndarray:
    """Per-inference latencies (ms, run order) of ``path`` on this machine through the device agent, ``feed`` as input.

    The agent gets a copy of the model whose input dims are fixed to the feed's shapes: exports often reuse one
    symbolic name ('?') for several dims or write -1, which shape flags cannot express.
    """
    from ..bench import run_benchmark
    from ..settings import MeasureSettings

    with tempfile.TemporaryDirectory(prefix="edgeopt-fidelity-") as tmp:
        inputs = Path(tmp) / "inputs.npz"
        np.savez(inputs, **feed)  # type: ignore[arg-type]
        settings = MeasureSettings.from_kwargs(use_target_fps=False, iterations=iterations,
                                               min_duration_s=min_duration_s, warmup=5, inputs=inputs,
                                               keep_samples=True)
        result = run_benchmark(static_input_copy(path, feed, Path(tmp)), settings, target="local")
    return np.asarray(result.samples_ms or [result.latency_ms.p50], dtype=np.float64)


def static_input_copy(path: Path, feed: dict[str, np.ndarray], tmp: Path) -> Path:
    """``path`` with graph input dims set to the feed's shapes (the original when it is too big to copy)."""
    import onnx

    from ..analysis.loader import load_model
    from ..passes.onnx_io import SINGLE_FILE_LIMIT_BYTES

    model = load_model(path)
    if model.ByteSize() >= SINGLE_FILE_LIMIT_BYTES:
        return path
    for value in model.graph.input:
        if value.name in feed:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, feed[value.name].shape, strict=False):
                dim.Clear()
                dim.dim_value = int(size)
    out = tmp / path.name
    onnx.save_model(model, str(out))
    return out
