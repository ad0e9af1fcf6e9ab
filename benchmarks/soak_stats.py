"""The soak's leak detector: a series of samples (run number, value) -> first/last after warm-up, fitted growth
per 100 runs, and a verdict against a bound. Pure functions, so a test can feed it a synthetic growing series.

Kinds of bound:
- ``slope``: the least-squares growth per 100 runs after the warm-up window stays <= ``limit`` (memory: some
  allocator noise is normal, a leak shows as a steady slope);
- ``flat``: a count that must not grow: post-warm-up ``last - first`` and ``max - first`` both <= ``limit``
  (file descriptors, threads: a leak of one per run grows by K every K runs);
- ``max``: every post-warm-up value <= ``limit`` (things that must be gone after each run: SSH transports,
  agent processes, lock files, job directories).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

BoundKind = Literal["slope", "flat", "max"]


@dataclass(frozen=True)
class Bound:
    """What a metric may do after the warm-up window, and why that limit."""

    metric: str
    kind: BoundKind
    limit: float
    why: str


def fit_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ``ys`` over ``xs`` (0.0 for fewer than two distinct x)."""
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def after_warmup(series: Sequence[tuple[int, float]], warmup_runs: int) -> list[tuple[int, float]]:
    """The samples taken at or after run ``warmup_runs``; at least the last two samples when there are two."""
    kept = [(r, v) for r, v in series if r >= warmup_runs]
    if len(kept) < 2:
        kept = list(series[-2:])
    return kept


def assess(series: Sequence[tuple[int, float]], bound: Bound, warmup_runs: int) -> dict[str, Any]:
    """First and last value after the warm-up, growth per 100 runs, and whether ``bound`` holds.

    Args:
        series: (run number, value) pairs in run order.
        bound: the limit to check.
        warmup_runs: samples before this run are left out (imports, caches, first uploads settle there).
    """
    kept = after_warmup(series, warmup_runs)
    if not kept:
        return {"metric": bound.metric, "samples": 0, "passed": True, "note": "no samples"}
    values = [v for _, v in kept]
    first, last = values[0], values[-1]
    slope_100 = 100.0 * fit_slope([float(r) for r, _ in kept], values)
    if bound.kind == "slope":
        passed = slope_100 <= bound.limit
    elif bound.kind == "flat":
        passed = last - first <= bound.limit and max(values) - first <= bound.limit
    else:
        passed = max(values) <= bound.limit
    return {"metric": bound.metric, "samples": len(kept), "from_run": kept[0][0], "to_run": kept[-1][0],
            "first": first, "last": last, "min": min(values), "max": max(values),
            "growth_per_100_runs": round(slope_100, 4), "bound": asdict(bound), "passed": bool(passed)}


def assess_all(samples: Sequence[dict[str, Any]], bounds: Sequence[Bound], warmup_runs: int) -> list[dict[str, Any]]:
    """:func:`assess` for every bound whose metric the samples carry (``samples``: dicts with ``run``)."""
    out = []
    for bound in bounds:
        series = [(int(s["run"]), float(s[bound.metric])) for s in samples if s.get(bound.metric) is not None]
        if series:
            out.append(assess(series, bound, warmup_runs))
    return out
