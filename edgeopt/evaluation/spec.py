"""What a retention metric is asked for: its name and its parameters, as one typed value.

A :class:`MetricSpec` is what the user wrote (``--metric agreement --axis 1 --score-threshold 0.25``, a qualify
spec's ``eval`` block, a Python call). :func:`edgeopt.evaluation.resolve_metric` turns it, in one place, into a
:class:`~edgeopt.evaluation.metrics.Metric` with every default filled in and every parameter checked against the
metric that takes it; the sweep, optimize's fidelity table and qualify's retention gate all go through it, and the
resolved spec is part of the sweep's cache key.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

PARAMETERS = ("axis", "score_threshold", "mask_threshold", "iou_threshold")
FLAGS = {"axis": "--axis", "score_threshold": "--score-threshold", "mask_threshold": "--mask-threshold",
         "iou_threshold": "--iou-threshold"}


class MetricSpec(BaseModel):
    """A metric by name plus its parameters; ``None`` leaves a parameter at the metric's default.

    Arrays the metric reads are ``[samples, ...]``: the selected output of every eval sample stacked on axis 0
    (a model output ``[1, 84, 8400]`` becomes ``[samples, 84, 8400]``), so axis numbers are the model's own.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(
        default=None,
        description="top1, top5, agreement, cosine, snr_db, max_abs_err, mask_iou, detection, or "
        "package.module:function; None: top1 when the eval data has labels, else agreement.")
    axis: int | None = Field(
        default=None,
        description="top1/top5/agreement: the class axis argmax runs over (default -1); detection: the axis of "
        "the 4+C box rows (default 1, the YOLOv8 [1, 4+C, N] layout).")
    score_threshold: float | None = Field(
        default=None,
        description="agreement: only positions where the reference's best score over the class axis is above it "
        "count (default: every position); detection: boxes whose best class score is above it are kept "
        "(default 0.25).")
    mask_threshold: float | None = Field(
        default=None, description="mask_iou: values above it are foreground, in both outputs (default 0.5).")
    iou_threshold: float | None = Field(
        default=None, gt=0, le=1,
        description="detection: a candidate box matches a reference box of the same class at IoU >= this "
        "(default 0.5).")

    def given(self) -> dict[str, Any]:
        """The parameters set explicitly (not None), in a fixed order."""
        return {k: getattr(self, k) for k in PARAMETERS if getattr(self, k) is not None}

    def label(self) -> str:
        """``agreement(axis=1, score_threshold=0.25)``: the name and the parameters in effect."""
        params = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.given().items())
        return f"{self.name or 'auto'}({params})" if params else str(self.name or "auto")


def as_spec(metric: MetricSpec | str | None) -> MetricSpec:
    """A :class:`MetricSpec` from a spec, a bare name, or None (the default metric)."""
    if isinstance(metric, MetricSpec):
        return metric
    return MetricSpec(name=metric or None)
