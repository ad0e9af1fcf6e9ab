"""Who else used the CPUs while the agent measured: a timed phase is only as clean as the machine around it.

On a 2-core machine a runtime given every core slows down ~2x when one other process keeps one core busy (its
threads wait for each other at every parallel op), so a latency is only trustworthy together with the machine's
load during the timed phase. Linux only (``/proc/stat``); elsewhere nothing is recorded.

Sampled around the timed phase: the machine's busy time over all cores (``/proc/stat``: everything but idle and
iowait, steal included, since time the hypervisor gave to another guest is time the runtime did not get) minus this
process's own CPU time (all its threads: the runtime's). What is left is **other processes'** CPU time, reported as a
share of the machine's capacity (wall time x logical cores), so the number means the same on 2 and 64 cores. The
host's verdict (interference or not) is made on the host from these raw numbers.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Tuple

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat() -> Optional[Tuple[int, int, int]]:
    """(busy, total, steal) jiffies summed over every core, or None where /proc/stat is unreadable."""
    try:
        with open("/proc/stat") as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    vals: List[int] = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    vals += [0] * (8 - len(vals))
    total = sum(vals)  # guest time is already counted in user
    return total - vals[3] - vals[4], total, vals[7]


class CpuShare:
    """A sample taken before the timed phase; :meth:`stop` returns the shares over the phase."""

    def __init__(self) -> None:
        self._sys = _stat()
        self._own = time.process_time()
        self._wall = time.perf_counter()

    def stop(self) -> Dict[str, Any]:
        """The shares since construction (``{}`` where /proc/stat is unreadable).

        Keys: ``wall_s``, ``cores``, ``own_cpu_pct`` (this process, % of the machine), ``others_cpu_pct`` (every
        other process and the hypervisor's steal, % of the machine), ``steal_pct``, ``busy_pct`` (all together).
        """
        end_sys, own, wall = _stat(), time.process_time() - self._own, time.perf_counter() - self._wall
        if self._sys is None or end_sys is None or wall <= 0:
            return {}
        busy, total, steal = (b - a for a, b in zip(self._sys, end_sys))
        cores = os.cpu_count() or 1
        # jiffies tick at CLK_TCK per core: capacity from the counter itself (total) is exact, wall x cores a fallback
        capacity = total / _CLK_TCK if total > 0 else wall * cores
        others = max(0.0, busy / _CLK_TCK - own)
        return {
            "wall_s": round(wall, 4),
            "cores": cores,
            "own_cpu_pct": round(100.0 * min(own, capacity) / capacity, 1),
            "others_cpu_pct": round(100.0 * min(others, capacity) / capacity, 1),
            "steal_pct": round(100.0 * steal / total, 1) if total > 0 else 0.0,
            "busy_pct": round(100.0 * busy / total, 1) if total > 0 else 0.0,
        }
