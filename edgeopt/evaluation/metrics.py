"""Metrics registry and retention.

Every metric scores ``ref``, the reference (original) model's selected output, against ``out``, the optimized
one's, both ``[samples, ...]``. Retention is ``score(ref, out) / score(ref, ref)`` for "higher is better" metrics
(top1, top5, agreement, cosine, mask_iou, detection, custom), so it is 1.0 when nothing changed. Error metrics
(snr_db, max_abs_err) have a perfect reference, so they define retention on their own: ``snr_db`` ->
``1 - 10 ** (-snr / 10)`` (the share of signal power that is not error: 20 dB -> 0.99) and ``max_abs_err`` ->
``1 - max|out - ref| / max|ref|`` (clipped at 0).

A registered metric takes ``(ref, out, labels, spec)``; :func:`resolve_metric` binds the spec (the user's
parameters with the metric's defaults filled in) so a resolved :class:`Metric` scores ``(ref, out, labels)``,
the signature custom metrics have.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from .dense import mask_iou
from .detection import detection_f1
from .spec import FLAGS, MetricSpec, as_spec

ScoreFn = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], float]
SpecFn = Callable[[np.ndarray, np.ndarray, "np.ndarray | None", MetricSpec], float]


def class_axis(arr: np.ndarray, axis: int, name: str) -> int:
    """``axis`` as a non-negative index of ``arr`` (``[samples, ...]``), refusing the sample axis.

    Raises:
        InputError: the axis does not exist or is the sample axis.
    """
    nd = arr.ndim
    if nd < 2 or not -nd <= axis < nd or axis % nd == 0:
        raise InputError(f"metric {name}: --axis {axis} does not fit the selected output {list(arr.shape)} "
                         f"(axis 0 is the sample): use 1..{max(nd - 1, 1)} or -1")
    return axis % nd


def _need_labels(labels: np.ndarray | None, pred: np.ndarray, name: str) -> np.ndarray:
    if labels is None:
        raise InputError(f"metric {name} needs labels: add 'labels' to the --eval .npz, or use --metric agreement")
    lab = np.asarray(labels).reshape(len(labels), -1)
    if lab.shape[1] != 1 or pred.ndim != 2:
        raise InputError(
            f"metric {name}: output shape {list(pred.shape)} does not fit one label per sample; pick a "
            "[samples, classes] output with --output (and its class axis with --axis)"
        )
    return lab[:, 0]


def _scores_last(out: np.ndarray, spec: MetricSpec, name: str) -> np.ndarray:
    """Class axis last; size-1 axes between sample and class dropped (a conv head's ``[N, C, 1, 1]``)."""
    moved = np.moveaxis(out, class_axis(out, int(spec.axis if spec.axis is not None else -1), name), -1)
    return moved.reshape(len(moved), moved.shape[-1]) if int(np.prod(moved.shape[1:-1])) == 1 else moved


def top1(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Share of samples whose argmax over the class axis equals the label."""
    pred = _scores_last(out, spec, "top1")
    lab = _need_labels(labels, pred, "top1")
    return float(np.mean(pred.argmax(axis=-1) == lab))


def top5(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Share of samples whose label is among the 5 highest scores on the class axis."""
    pred = _scores_last(out, spec, "top5")
    lab = _need_labels(labels, pred, "top5")
    k = min(5, pred.shape[-1])
    best = np.argsort(-pred, axis=-1)[:, :k]
    return float(np.mean((best == lab[:, None]).any(axis=1)))


def agreement(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Share of argmax decisions over the class axis equal to the reference model's (no labels needed).

    With ``score_threshold`` only positions (sample, anchor, pixel...) where the reference's best score is above
    it count, as a detector's user looks only at confident anchors.

    Raises:
        InputError: a bad axis, or no position of the reference above the threshold.
    """
    axis = class_axis(ref, int(spec.axis if spec.axis is not None else -1), "agreement")
    same = np.asarray(out).argmax(axis=axis) == np.asarray(ref).argmax(axis=axis)
    if spec.score_threshold is None:
        return float(np.mean(same))
    keep = np.asarray(ref).max(axis=axis) > spec.score_threshold
    if not keep.any():
        best = float(np.max(ref)) if ref.size else float("nan")
        raise InputError(f"metric agreement: no position of the reference scores above --score-threshold "
                         f"{spec.score_threshold:g} (its best score is {best:.4g}): lower the threshold, or check "
                         "--output and --axis select class scores")
    return float(np.mean(same[keep]))


def cosine(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Mean per-sample cosine similarity with the reference output."""
    a = ref.reshape(len(ref), -1).astype(np.float64)
    b = out.reshape(len(out), -1).astype(np.float64)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    num = (a * b).sum(axis=1)
    sims = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(np.abs(a - b).max(axis=1) == 0, 1.0, 0.0))
    return float(np.mean(sims))


def snr_db(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Signal-to-noise ratio of the output vs the reference, dB (inf when identical)."""
    a = ref.astype(np.float64)
    noise = float(np.sum((out.astype(np.float64) - a) ** 2))
    signal = float(np.sum(a**2))
    if noise == 0:
        return float("inf")
    return float(10 * np.log10(signal / noise)) if signal > 0 else float("-inf")


def max_abs_err(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """Largest absolute difference from the reference output."""
    return float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64)))) if ref.size else 0.0


def _snr_retention(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    snr = snr_db(ref, out, labels, spec)
    return 1.0 if snr == float("inf") else max(0.0, 1.0 - 10 ** (-snr / 10))


def _mae_retention(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = max_abs_err(ref, out, labels, spec)
    if scale == 0:
        return 1.0 if err == 0 else 0.0
    return max(0.0, 1.0 - err / scale)


@dataclass(frozen=True)
class MetricDef:
    """A registered metric: its score, the parameters it takes (with defaults), labels, retention rule."""

    name: str
    score: SpecFn
    params: Mapping[str, Any] = field(default_factory=dict)
    needs_labels: bool = False
    retention_fn: SpecFn | None = None


@dataclass(frozen=True)
class Metric:
    """A resolved metric: ``score(ref, out, labels)``, its spec with every default filled in, its retention rule
    (None: the ratio to the reference's own score)."""

    name: str
    score: ScoreFn
    needs_labels: bool = False
    retention_fn: ScoreFn | None = None
    spec: MetricSpec = field(default_factory=MetricSpec)

    @property
    def label(self) -> str:
        """Name and parameters, e.g. ``agreement(axis=1, score_threshold=0.25)``."""
        return self.spec.label()

    def key(self) -> dict[str, Any]:
        """What identifies this metric in a cache key: name and every parameter in effect."""
        return {"name": self.name, **self.spec.given()}


METRICS: dict[str, MetricDef] = {
    "top1": MetricDef("top1", top1, {"axis": -1}, needs_labels=True),
    "top5": MetricDef("top5", top5, {"axis": -1}, needs_labels=True),
    "agreement": MetricDef("agreement", agreement, {"axis": -1, "score_threshold": None}),
    "cosine": MetricDef("cosine", cosine),
    "snr_db": MetricDef("snr_db", snr_db, retention_fn=_snr_retention),
    "max_abs_err": MetricDef("max_abs_err", max_abs_err, retention_fn=_mae_retention),
    "mask_iou": MetricDef("mask_iou", mask_iou, {"mask_threshold": 0.5}),
    "detection": MetricDef("detection", detection_f1, {"axis": 1, "score_threshold": 0.25, "iou_threshold": 0.5}),
}


def _custom(name: str) -> Callable[..., float]:
    module, _, attr = name.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"custom metric {name!r} cannot be imported ({exc}); check PYTHONPATH and the name") from None
    if not callable(fn):
        raise InputError(f"custom metric {name!r} is not a function(ref_outputs, outputs, labels) -> float")
    return fn


def _bind(fn: SpecFn, spec: MetricSpec) -> ScoreFn:
    def bound(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
        return fn(ref, out, labels, spec)

    return bound


def _refuse(spec: MetricSpec, allowed: Mapping[str, Any], name: str) -> None:
    extra = [k for k in spec.given() if k not in allowed]
    if extra:
        takes = ", ".join(FLAGS[k] for k in allowed) or "no parameters"
        raise InputError(f"{', '.join(f'{FLAGS[k]} {getattr(spec, k)}' for k in extra)} does not apply to metric "
                         f"{name} (it takes {takes}): drop it or pick the metric it belongs to (docs/sweep.md)")


def resolve_metric(metric: MetricSpec | str | None, *, has_labels: bool = False) -> Metric:
    """The one place a metric request becomes a :class:`Metric`: name, parameters checked, defaults filled.

    Args:
        metric: a :class:`MetricSpec`, a registered name, ``package.module:function(ref_outputs, outputs,
            labels) -> float``, or None (the default metric).
        has_labels: the eval data has labels (picks the default: top1 with labels, else agreement).

    Raises:
        InputError: an unknown name, an unimportable custom function, or a parameter the metric does not take.
    """
    spec = as_spec(metric)
    name = spec.name or ("top1" if has_labels else "agreement")
    if name in METRICS:
        d = METRICS[name]
        _refuse(spec, d.params, name)
        filled = spec.model_copy(update={"name": name, **{k: v for k, v in d.params.items() if v is not None and
                                                          getattr(spec, k) is None}})
        ret = _bind(d.retention_fn, filled) if d.retention_fn is not None else None
        return Metric(name, _bind(d.score, filled), d.needs_labels, ret, filled)
    if ":" not in name:
        raise InputError(f"unknown metric {name!r}; known: {', '.join(METRICS)}, or package.module:function")
    _refuse(spec, {}, name)
    return Metric(name, _custom(name), spec=spec.model_copy(update={"name": name}))


def retention(metric: Metric, ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> tuple[float, float]:
    """``(score of out, retention of out vs ref)``; see the module docstring for each metric's rule."""
    if ref.shape != out.shape:
        raise InputError(f"optimized output shape {list(out.shape)} differs from the reference {list(ref.shape)}")
    value = float(metric.score(ref, out, labels))
    if metric.retention_fn is not None:
        return value, float(metric.retention_fn(ref, out, labels))
    base = float(metric.score(ref, ref, labels))
    if base == 0:
        return value, 1.0 if value == 0 else 0.0
    return value, value / base
