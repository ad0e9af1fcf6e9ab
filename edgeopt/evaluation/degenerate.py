"""Evaluation data that cannot tell levels apart: the reference decides the same thing for every sample.

A fleet sweep whose eval data made the reference predict one class for every sample scored every level 1.0 and
recommended INT8 with no warning: any model that also predicts that class "retains" everything, so the data
tested nothing. This module looks at the reference's own decisions (the argmax over the class axis for top1,
top5 and agreement, the binarized map for mask_iou, the values for the error and custom metrics) and returns one
line saying why they cannot separate levels, or None. The sweep, optimize's fidelity table and qualify's
retention gate print it, and a sweep's recommendation is marked "untested by this data".
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .metrics import Metric, class_axis
from .spec import MetricSpec

_DECISIONS = ("top1", "top5", "agreement")
UNTESTED = "untested by this data"


def _decisions(ref: np.ndarray, spec: MetricSpec, name: str) -> str | None:
    axis = class_axis(ref, int(spec.axis if spec.axis is not None else -1), name)
    if ref.shape[axis] < 2:  # one score per position: nothing to argmax over
        return None
    decided = ref.argmax(axis=axis)
    if spec.score_threshold is not None:
        decided = decided[ref.max(axis=axis) > spec.score_threshold]
    values = np.unique(decided)
    if decided.size < 2 or values.size != 1:
        return None
    if decided.ndim == 1 and spec.score_threshold is None:
        return f"the reference predicts class {int(values[0])} for every one of the {len(ref)} samples"
    return (f"the reference decides class {int(values[0])} at every position of every sample (a constant map, "
            f"{decided.size} positions)")


def cannot_tell(metric: Metric | None, ref: np.ndarray) -> str | None:
    """Why ``ref`` (the reference's selected output, ``[samples, ...]``) cannot tell levels apart, or None.

    Args:
        metric: the metric that reads it (None: the decisions an agreement metric would read).
        ref: the reference model's outputs on the evaluation samples.

    Returns:
        One line ending in what to do, or None when the data can separate levels (or it cannot be told).
    """
    ref = np.asarray(ref)
    if ref.size == 0 or len(ref) < 2:
        return None
    name = metric.name if metric is not None else "agreement"
    spec = metric.spec if metric is not None else MetricSpec(axis=-1)
    try:
        if name in _DECISIONS:
            why = _decisions(ref, spec, name)
        elif name == "mask_iou":
            threshold = float(spec.mask_threshold if spec.mask_threshold is not None else 0.5)
            mask = ref > threshold
            why = "the reference's mask is foreground everywhere on every sample (a constant map)" if mask.all() \
                else None
        elif name == "detection":  # no box at all is already an error of the metric itself
            why = None
        else:
            why = None if np.ptp(ref) > 0 else f"the reference's output is the constant {float(ref.flat[0]):g}"
    except (InputError, ValueError):  # a layout the metric itself will reject, with its own message
        return None
    if why is None:
        return None
    return (f"evaluation data cannot tell levels apart: {why}, so every level scores alike; retention is "
            f"{UNTESTED} (use samples on which the reference decides differently)")
