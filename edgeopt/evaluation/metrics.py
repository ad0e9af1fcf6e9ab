"""Metrics registry and retention.

Every metric is ``score(ref, out, labels) -> float`` where ``ref`` is the reference (original) model's selected
output and ``out`` the optimized one's, both ``[samples, ...]``. Retention is ``score(ref, out) / score(ref, ref)``
for "higher is better" metrics (top1, top5, agreement, cosine, custom), so it is 1.0 when nothing changed. Error
metrics (snr_db, max_abs_err) have a perfect reference, so they define retention on their own:
``snr_db`` -> ``1 - 10 ** (-snr / 10)`` (the share of signal power that is not error: 20 dB -> 0.99) and
``max_abs_err`` -> ``1 - max|out - ref| / max|ref|`` (clipped at 0).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

ScoreFn = Callable[[np.ndarray, np.ndarray, "np.ndarray | None"], float]


def _classes(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).argmax(axis=-1)


def _need_labels(labels: np.ndarray | None, pred: np.ndarray, name: str) -> np.ndarray:
    if labels is None:
        raise InputError(f"metric {name} needs labels: add 'labels' to the --eval .npz, or use --metric agreement")
    lab = np.asarray(labels).reshape(len(labels), -1)
    if lab.shape[1] != 1 or pred.ndim != 2:
        raise InputError(
            f"metric {name}: output shape {list(pred.shape)} does not fit one label per sample; pick a "
            "[samples, classes] output with --output"
        )
    return lab[:, 0]


def top1(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Share of samples whose argmax equals the label."""
    lab = _need_labels(labels, out, "top1")
    return float(np.mean(_classes(out) == lab))


def top5(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Share of samples whose label is among the 5 highest scores."""
    lab = _need_labels(labels, out, "top5")
    k = min(5, out.shape[-1])
    best = np.argsort(-out, axis=-1)[:, :k]
    return float(np.mean((best == lab[:, None]).any(axis=1)))


def agreement(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Share of argmax decisions (over the last axis) equal to the reference model's: no labels needed."""
    return float(np.mean(_classes(out) == _classes(ref)))


def cosine(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Mean per-sample cosine similarity with the reference output."""
    a = ref.reshape(len(ref), -1).astype(np.float64)
    b = out.reshape(len(out), -1).astype(np.float64)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    num = (a * b).sum(axis=1)
    sims = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.where(np.abs(a - b).max(axis=1) == 0, 1.0, 0.0))
    return float(np.mean(sims))


def snr_db(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Signal-to-noise ratio of the output vs the reference, dB (inf when identical)."""
    a = ref.astype(np.float64)
    noise = float(np.sum((out.astype(np.float64) - a) ** 2))
    signal = float(np.sum(a**2))
    if noise == 0:
        return float("inf")
    return float(10 * np.log10(signal / noise)) if signal > 0 else float("-inf")


def max_abs_err(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    """Largest absolute difference from the reference output."""
    return float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64)))) if ref.size else 0.0


def _snr_retention(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    snr = snr_db(ref, out, labels)
    return 1.0 if snr == float("inf") else max(0.0, 1.0 - 10 ** (-snr / 10))


def _mae_retention(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None) -> float:
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    err = max_abs_err(ref, out, labels)
    if scale == 0:
        return 1.0 if err == 0 else 0.0
    return max(0.0, 1.0 - err / scale)


@dataclass(frozen=True)
class Metric:
    """A registered metric: its score, whether it needs labels, and its retention rule (None: the ratio)."""

    name: str
    score: ScoreFn
    needs_labels: bool = False
    retention_fn: ScoreFn | None = None


METRICS: dict[str, Metric] = {
    "top1": Metric("top1", top1, needs_labels=True),
    "top5": Metric("top5", top5, needs_labels=True),
    "agreement": Metric("agreement", agreement),
    "cosine": Metric("cosine", cosine),
    "snr_db": Metric("snr_db", snr_db, retention_fn=_snr_retention),
    "max_abs_err": Metric("max_abs_err", max_abs_err, retention_fn=_mae_retention),
}


def resolve_metric(name: str) -> Metric:
    """A registered metric, or a custom ``package.module:function(ref_outputs, outputs, labels) -> float``.

    Raises:
        InputError: unknown name or an unimportable custom function.
    """
    if name in METRICS:
        return METRICS[name]
    if ":" not in name:
        raise InputError(f"unknown metric {name!r}; known: {', '.join(METRICS)}, or package.module:function")
    module, _, attr = name.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"custom metric {name!r} cannot be imported ({exc}); check PYTHONPATH and the name") from None
    if not callable(fn):
        raise InputError(f"custom metric {name!r} is not a function(ref_outputs, outputs, labels) -> float")
    return Metric(name, fn)


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
