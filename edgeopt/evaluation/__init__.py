"""Accuracy retention: evaluation data, metrics, output selection, and outputs measured on the device.

docs/sweep.md explains the metrics and how retention is defined for each.
"""

from __future__ import annotations

from .data import EvalData, load_eval_data
from .device import device_outputs
from .metrics import METRICS, Metric, resolve_metric, retention
from .select import OutputSelection, parse_output
from .spec import MetricSpec

__all__ = [
    "METRICS", "EvalData", "Metric", "MetricSpec", "OutputSelection", "device_outputs", "load_eval_data",
    "parse_output", "resolve_metric", "retention",
]
