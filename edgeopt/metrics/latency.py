"""Latency statistics and the rule that says which percentiles a run can support.

Percentiles use the nearest-rank method (``numpy.percentile(..., method="inverted_cdf")``), so every
reported percentile is a latency that was really observed.

Support rule: percentile *q* is supported by *n* samples when at least ``MIN_TAIL_SAMPLES`` samples lie at
or beyond it, i.e. ``n * (1 - q) >= MIN_TAIL_SAMPLES``. With one tail sample this gives p50 >= 2, p90 >= 10,
p95 >= 20, p99 >= 100 and p99.9 >= 1000 samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

MIN_TAIL_SAMPLES = 1

# Reported percentile keys and their quantiles.
PERCENTILES: dict[str, float] = {"p50": 0.50, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}


class LatencyStats(BaseModel):
    """Latency distribution of the timed phase in milliseconds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    p50: float
    p90: float
    p95: float
    p99: float
    p999: float
    mean: float
    std: float
    min: float
    max: float


def required_samples(quantile: float, min_tail: int = MIN_TAIL_SAMPLES) -> int:
    """Fewest samples that support ``quantile`` (e.g. 0.99 -> 100)."""
    if not 0.0 < quantile < 1.0:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    return math.ceil(round(min_tail / (1.0 - quantile), 9))


def supported(n_samples: int) -> dict[str, bool]:
    """Which of the reported percentiles ``n_samples`` supports."""
    return {key: n_samples >= required_samples(q) for key, q in PERCENTILES.items()}


class SampleCountError(ValueError):
    """No samples at all: no statistic can be computed."""


def latency_stats(samples_ns: Sequence[int]) -> LatencyStats:
    """Percentiles, mean, std (sample std, ddof=1), min and max in ms from nanosecond samples."""
    if len(samples_ns) == 0:
        raise SampleCountError("no latency samples")
    ms = np.asarray(samples_ns, dtype=np.float64) / 1e6
    values = np.percentile(ms, [q * 100 for q in PERCENTILES.values()], method="inverted_cdf")
    pct = {key: float(v) for key, v in zip(PERCENTILES, values, strict=True)}
    return LatencyStats(
        **pct,
        mean=float(ms.mean()),
        std=float(ms.std(ddof=1)) if ms.size > 1 else 0.0,
        min=float(ms.min()),
        max=float(ms.max()),
    )


def percentile_key(text: str) -> str:
    """Normalise a user's percentile (``p99``, ``99``, ``p99.9``, ``99.9``, ``p50``) to a reported key."""
    raw = text.strip().lower().removeprefix("p")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"percentile {text!r}: use one of {', '.join(PERCENTILES)}") from None
    for key, q in PERCENTILES.items():
        if abs(q * 100 - value) < 1e-9:
            return key
    raise ValueError(f"percentile {text!r} is not reported: use one of {', '.join(PERCENTILES)}")


class PercentileSupport(BaseModel):
    """Support verdict of one percentile, echoed in results so a reader can check the rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    supported: bool
    samples: int = Field(description="Samples in the timed phase.")
    required: int = Field(description="Samples the support rule requires.")
