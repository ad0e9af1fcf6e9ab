"""Clock and temperature trace during a generative run: throttling over long generations shows up here.

A daemon thread reads the CPU clocks (cpufreq ``scaling_cur_freq`` of every CPU: the highest and the lowest)
and the thermal zones (the hottest) every ``1 / rate_hz`` seconds, plus once at start and once at stop, each
point stamped with ``perf_counter_ns`` (the clock generations are timed with). It shares nothing with the timed
loop; a read is a few small sysfs files (tens of microseconds) and the thread sleeps in between, like the power
sampler. ``sysfs_root`` is where ``/sys`` is (tests point it at an emulated tree, as for the power readers).
Where a machine exposes neither (containers, macOS), the points carry nulls and ``available`` says so.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Dict, List, Optional

_MAX_NAP_S = 0.1


def _read_int(path: str) -> Optional[int]:
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.lstrip("-").isdigit() else None


class ClockTrace(object):
    """Samples CPU clocks (MHz) and the hottest thermal zone (degC) in a thread between :meth:`start`/:meth:`stop`."""

    def __init__(self, sysfs_root: str = "/", rate_hz: float = 2.0) -> None:
        self.root = sysfs_root or "/"
        self.interval_s = 1.0 / rate_hz if rate_hz > 0 else 0.0
        self.points: List[List[Any]] = []  # [perf_counter_ns, max MHz, min MHz, max degC]
        self._freq = self._files("sys/devices/system/cpu", "cpu", "cpufreq/scaling_cur_freq")
        self._temp = self._files("sys/class/thermal", "thermal_zone", "temp")
        self._running = False
        self._thread: Optional[threading.Thread] = None

    def _files(self, base: str, prefix: str, leaf: str) -> List[str]:
        folder = os.path.join(self.root, base)
        try:
            names = sorted(n for n in os.listdir(folder) if n.startswith(prefix) and n[len(prefix):].isdigit())
        except OSError:
            return []
        return [p for p in (os.path.join(folder, n, leaf) for n in names) if os.path.exists(p)]

    @property
    def available(self) -> bool:
        return bool(self._freq or self._temp)

    def sample(self) -> None:
        """One point now (the thread calls this; so do start and stop)."""
        khz = [v for v in (_read_int(p) for p in self._freq) if v is not None]
        milli = [v for v in (_read_int(p) for p in self._temp) if v is not None]
        self.points.append([time.perf_counter_ns(), max(khz) / 1000.0 if khz else None,
                            min(khz) / 1000.0 if khz else None, max(milli) / 1000.0 if milli else None])

    def _loop(self) -> None:
        while self._running:
            deadline = time.monotonic() + self.interval_s
            while self._running and time.monotonic() < deadline:
                time.sleep(min(_MAX_NAP_S, max(0.0, deadline - time.monotonic())))
            if self._running:
                self.sample()

    def start(self) -> None:
        self.sample()
        if self.available and self.interval_s > 0:
            self._running = True
            self._thread = threading.Thread(target=self._loop, name="edgeopt-trace", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._running = False
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.sample()

    def report(self, origin_ns: int) -> Dict[str, Any]:
        """``available`` and ``points``: ``[seconds since origin_ns, max MHz, min MHz, max degC]``."""
        return {"available": self.available, "rate_hz": round(1.0 / self.interval_s, 3) if self.interval_s else 0.0,
                "points": [[round((p[0] - origin_ns) / 1e9, 4)] + p[1:] for p in self.points]}
