"""The metric-parameter flags shared by ``sweep`` and ``optimize``: ``--axis``, ``--score-threshold``,
``--mask-threshold``, ``--iou-threshold``; the command receives them as ``metric_params: MetricParams`` and turns
them, with its ``--metric``, into a :class:`~edgeopt.evaluation.MetricSpec` (docs/sweep.md, Metrics)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ..evaluation.spec import MetricSpec

F = TypeVar("F", bound=Callable[..., Any])
_NAMES = ("axis", "score_threshold", "mask_threshold", "iou_threshold")


@dataclass(frozen=True)
class MetricParams:
    """The parameter flags as given (None: the metric's default)."""

    axis: int | None = None
    score_threshold: float | None = None
    mask_threshold: float | None = None
    iou_threshold: float | None = None

    def spec(self, metric: str | None) -> MetricSpec:
        """``--metric`` plus these flags; checked against the metric when it is resolved."""
        return MetricSpec(name=metric or None, axis=self.axis, score_threshold=self.score_threshold,
                          mask_threshold=self.mask_threshold, iou_threshold=self.iou_threshold)


def metric_param_options(f: F) -> F:
    """Add the metric-parameter flags to a command."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        params = MetricParams(**{name: kwargs.pop(name, None) for name in _NAMES})
        return f(*args, metric_params=params, **kwargs)

    options = [
        click.option("--axis", type=int, default=None,
                     help="Class axis of the selected output for top1/top5/agreement (default -1); the 4+C axis "
                          "for detection (default 1). Axis 0 is the sample."),
        click.option("--score-threshold", type=float, default=None,
                     help="agreement: count only positions whose reference best score is above it; detection: "
                          "box score threshold (default 0.25)."),
        click.option("--mask-threshold", type=float, default=None,
                     help="mask_iou: foreground is above it (default 0.5)."),
        click.option("--iou-threshold", type=click.FloatRange(0, 1, min_open=True), default=None,
                     help="detection: IoU for a box to match the reference's (default 0.5)."),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated
