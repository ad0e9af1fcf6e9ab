"""Dense outputs (segmentation masks, probability maps such as DBNet's ``[1, 1, H, W]``): mask IoU."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .spec import MetricSpec


def mask_iou(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """IoU of the candidate's foreground with the reference's, both binarized at ``spec.mask_threshold``.

    Pooled over samples: ``sum(intersection) / sum(union)`` over every pixel of every sample, so a sample with a
    large mask weighs more than one with a speck (the mean of per-sample IoUs would let an empty sample count 1).

    Raises:
        InputError: the reference has no foreground at all (the IoU is undefined: the threshold or the output is
            wrong).
    """
    threshold = float(spec.mask_threshold if spec.mask_threshold is not None else 0.5)
    a = np.asarray(ref) > threshold
    b = np.asarray(out) > threshold
    if not a.any():
        top = float(np.max(ref)) if np.size(ref) else float("nan")
        raise InputError(f"metric mask_iou: no value of the reference is above --mask-threshold {threshold:g} "
                         f"(its largest is {top:.4g}): lower the threshold, or check --output selects the map")
    return float(np.logical_and(a, b).sum() / np.logical_or(a, b).sum())
