"""When an axis goes logarithmic (values spanning more than 10x) and its ticks there."""

from __future__ import annotations

import math
from collections.abc import Iterable

LOG_SPAN = 10.0  # a positive range wider than this ratio is drawn on a log axis


def wants_log(values: Iterable[float]) -> bool:
    """True when every value is positive and the largest is more than :data:`LOG_SPAN` times the smallest."""
    vals = [v for v in values if math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) > LOG_SPAN


def log_range(low: float, high: float, pad: float = 1.15) -> tuple[float, float]:
    """``[low, high]`` widened by the factor ``pad`` at each end (a log axis cannot reach 0)."""
    return low / pad, high * pad


def log_ticks(low: float, high: float) -> list[float]:
    """1, 2, 5 x 10^k inside ``[low, high]``; only the powers of ten when the range spans more than 3 decades, and
    at least the two ends' round values when it spans less than one."""
    if low <= 0 or high <= low:
        return []
    decades = math.log10(high) - math.log10(low)
    steps = (1.0,) if decades > 3 else (1.0, 2.0, 5.0)
    ticks = [m * 10.0 ** k for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
             for m in steps]
    inside = [round(t, 12) for t in ticks if low <= t <= high]
    if len(inside) < 2:
        inside = sorted({float(f"{low * 1.0001:.2g}"), float(f"{high / 1.0001:.2g}")} | set(inside))
    return inside
