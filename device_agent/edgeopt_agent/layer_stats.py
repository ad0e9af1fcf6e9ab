"""Per-layer statistics over the profiled inferences: median and p90 per layer, share of the total, and the
trace of one inference. Standard library only (percentiles by nearest rank: every value was observed)."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

_STATIC_KEYS = ("name", "op_type", "impl", "provider", "precision", "original_names", "node_index")


def nearest_rank(sorted_values: List[float], q: float) -> float:
    """The ``q`` quantile (0 < q <= 1) of already sorted values by nearest rank."""
    if not sorted_values:
        return 0.0
    return sorted_values[max(0, min(len(sorted_values) - 1, int(math.ceil(q * len(sorted_values))) - 1))]


def aggregate(runs: List[List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """One record per layer name, in first-execution order, over every run.

    A layer that runs several times in one inference (a loop body) has its times summed per inference and its
    ``calls`` counted. ``share`` is the layer's median over the sum of all medians.
    """
    first = {}  # type: Dict[str, Dict[str, Any]]
    per_run = {}  # type: Dict[str, List[float]]
    calls = {}  # type: Dict[str, int]
    executed = {}  # type: Dict[str, bool]
    for run in runs:
        sums = {}  # type: Dict[str, float]
        counts = {}  # type: Dict[str, int]
        for event in run:
            key = str(event["name"])
            first.setdefault(key, event)
            sums[key] = sums.get(key, 0.0) + float(event["duration_us"])
            counts[key] = counts.get(key, 0) + 1
            executed[key] = executed.get(key, False) or bool(event.get("executed", True))
        for key, total in sums.items():
            per_run.setdefault(key, []).append(total)
            calls[key] = max(calls.get(key, 0), counts[key])
    records = []
    for order, (key, event) in enumerate(first.items()):
        values = sorted(per_run.get(key, [0.0]))
        record = {k: event.get(k) for k in _STATIC_KEYS}
        record.update({
            "order": order, "executed": executed.get(key, True), "calls": calls.get(key, 1), "runs": len(values),
            "median_us": nearest_rank(values, 0.5), "p90_us": nearest_rank(values, 0.9),
            "mean_us": sum(values) / len(values), "min_us": values[0], "max_us": values[-1],
        })
        records.append(record)
    total = sum(r["median_us"] for r in records)
    for r in records:
        r["share"] = r["median_us"] / total if total > 0 else 0.0
    return records


def median_run_index(walls_ns: List[int]) -> Optional[int]:
    """Index of the inference whose wall time is the median (the one a trace shows)."""
    if not walls_ns:
        return None
    order = sorted(range(len(walls_ns)), key=lambda i: walls_ns[i])
    return order[(len(order) - 1) // 2]


def trace(run: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One inference's events, trimmed to what a timeline needs."""
    return [{"name": e["name"], "op_type": e.get("op_type", ""), "start_us": e.get("start_us"),
             "duration_us": e["duration_us"]} for e in run if e.get("executed", True)]
