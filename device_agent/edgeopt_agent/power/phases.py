"""Energy of arbitrary time intervals from one window of power readings (the generate command's phases).

A generation's prefill and decode phases are milliseconds to seconds long, shorter than or comparable to the
interval between power readings, so a phase's energy cannot come from readings taken inside it alone. Instead
the window's readings become a cumulative energy curve ``C(t)`` (energy counters: the summed counters
themselves; power sensors: the trapezoid integral of the summed power), and an interval ``[a, b]`` gets
``C(b) - C(a)`` with ``C`` interpolated linearly between readings: the power the sensor saw around the interval,
spread over it in proportion to its length. Summed over many intervals (every repetition's prefill, every
repetition's decode) this splits the window's energy between the phases by their time and by how the power
moved between readings; the phases' own difference in draw is resolved only when readings are dense enough
(e.g. a prefill of 0.5 s on a board read at 20 Hz).
"""

from __future__ import annotations

import bisect
from typing import Dict, List, Sequence, Tuple

from .base import KIND_ENERGY, PowerReader

Sample = Tuple[int, List[float]]
Interval = Tuple[int, int]  # (start_ns, end_ns) on perf_counter_ns


def cumulative(samples: Sequence[Sample], reader: PowerReader) -> Tuple[List[int], List[float]]:
    """``(times_ns, joules)``: the summed rails' cumulative energy at each reading, 0 at the first."""
    times = [t for t, _ in samples]
    totals = [sum(v[i] for i in reader.summed) for _, v in samples]
    if reader.kind == KIND_ENERGY:
        return times, [x - totals[0] for x in totals] if totals else []
    joules = [0.0]
    for k in range(1, len(samples)):
        joules.append(joules[-1] + (times[k] - times[k - 1]) / 1e9 * (totals[k] + totals[k - 1]) / 2.0)
    return times, joules


def _at(times: List[int], joules: List[float], t: int) -> float:
    """C(t), linear between readings, held at the ends (an interval outside the window gets no energy there)."""
    if t <= times[0]:
        return joules[0]
    if t >= times[-1]:
        return joules[-1]
    k = bisect.bisect_right(times, t)
    t0, t1 = times[k - 1], times[k]
    return joules[k - 1] + (joules[k] - joules[k - 1]) * (t - t0) / float(t1 - t0)


def interval_energy(samples: Sequence[Sample], reader: PowerReader,
                    intervals: Dict[str, List[Interval]]) -> Dict[str, Dict[str, float]]:
    """Per named group of intervals: ``energy_j`` (summed over its intervals) and ``seconds`` (their length).

    Needs at least two readings spanning the intervals; returns ``{}`` otherwise (the caller estimates instead).
    """
    if len(samples) < 2:
        return {}
    times, joules = cumulative(samples, reader)
    if times[-1] <= times[0]:
        return {}
    out: Dict[str, Dict[str, float]] = {}
    for name, spans in intervals.items():
        energy = sum(_at(times, joules, b) - _at(times, joules, a) for a, b in spans)
        out[name] = {"energy_j": energy, "seconds": sum(b - a for a, b in spans) / 1e9}
    return out
