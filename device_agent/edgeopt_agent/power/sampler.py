"""Power sampling around the timed phase: an idle window for the baseline, then a background thread.

The harness drives a :class:`PowerSession`: ``idle()`` (before warm-up, sampling in the calling thread while
nothing else runs), ``start()`` just before the timed phase, ``stop()`` just after it, then ``report()``.

Keeping latency unperturbed: the timed loop is not touched and shares nothing with the sampler (no lock, no
queue, no callback). The sampler thread sleeps between samples (``time.sleep``, the cheapest wake-up) and
checks a plain flag; a sysfs read (``os.pread``) or a ``vcgencmd`` run releases the GIL while it waits on the
kernel. Because the thread notices ``stop()`` only when it wakes, the window is clipped to the moment
``stop()`` was called, interpolating between the readings on either side. ``benchmarks/energy_sampling.py``
measures the sampler's CPU cost and its effect on p50.

Summaries per window (all computed from the raw readings here, so only a few numbers travel back):
power sensors give the time-weighted (trapezoid) mean of the readings over the window; energy counters give
(last - first) / duration, which misses nothing between samples.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from .base import KIND_ENERGY, PowerReader, PowerSettings, find_reader, parse_settings

Sample = Tuple[int, List[float]]  # (perf_counter_ns at the middle of the read, one value per channel)

# Longest single sleep of the sampler thread, so stop() waits at most this long even at low rates.
_MAX_NAP_S = 0.1


def clip(samples: List[Sample], end_ns: Optional[int]) -> List[Sample]:
    """Readings up to ``end_ns``, closed by a reading interpolated at ``end_ns`` from its two neighbours."""
    if end_ns is None or not samples or samples[-1][0] <= end_ns:
        return samples
    kept = [x for x in samples if x[0] <= end_ns]
    if not kept:
        return samples[:1]
    t0, v0 = kept[-1]
    t1, v1 = next(x for x in samples if x[0] > end_ns)
    f = (end_ns - t0) / float(t1 - t0)
    kept.append((end_ns, [a + (b - a) * f for a, b in zip(v0, v1)]))
    return kept


def summarize(samples: List[Sample], reader: PowerReader) -> Dict[str, Any]:
    """Average power and energy of one window of readings (see the module docstring for the method)."""
    out: Dict[str, Any] = {"samples": len(samples), "duration_s": 0.0, "avg_w": None, "energy_j": None,
                           "channels_w": {}}
    if not samples:
        return out
    n_ch = len(reader.channels)
    duration_s = (samples[-1][0] - samples[0][0]) / 1e9
    out["duration_s"] = round(duration_s, 6)
    if reader.kind == KIND_ENERGY:
        if len(samples) < 2 or duration_s <= 0:
            return out
        joules = [samples[-1][1][i] - samples[0][1][i] for i in range(n_ch)]
        per_ch = [j / duration_s for j in joules]
        out["energy_j"] = sum(joules[i] for i in reader.summed)
    elif len(samples) == 1 or duration_s <= 0:
        per_ch = list(samples[-1][1])
    else:
        area = [0.0] * n_ch
        for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
            dt = (t1 - t0) / 1e9
            for i in range(n_ch):
                area[i] += dt * (v0[i] + v1[i]) / 2.0
        per_ch = [a / duration_s for a in area]
        totals = [sum(v[i] for i in reader.summed) for _, v in samples]
        out["min_w"], out["max_w"] = min(totals), max(totals)
    out["avg_w"] = sum(per_ch[i] for i in reader.summed)
    if out["energy_j"] is None:
        out["energy_j"] = out["avg_w"] * duration_s
    out["channels_w"] = {reader.channels[i]: per_ch[i] for i in range(n_ch)}
    return out


class Sampler(object):
    """Reads ``reader`` every ``1 / rate_hz`` seconds: synchronously (idle window) or in a thread (timed phase)."""

    def __init__(self, reader: PowerReader, rate_hz: float) -> None:
        if reader.max_rate_hz is not None:
            rate_hz = min(rate_hz, reader.max_rate_hz)
        self.reader = reader
        self.rate_hz = rate_hz
        self.interval_ns = int(1e9 / rate_hz)
        self.errors = 0
        self.last_error = ""
        self.read_ns: List[int] = []
        self.stop_ns: Optional[int] = None
        self._running = False
        self._thread: Optional[threading.Thread] = None
        self._samples: List[Sample] = []

    def _sample(self, out: List[Sample]) -> None:
        clock = time.perf_counter_ns
        t0 = clock()
        try:
            values = self.reader.read()
        except Exception as exc:  # a failed read is counted and reported, never fatal to the run
            self.errors += 1
            self.last_error = "%s: %s" % (type(exc).__name__, exc)
            return
        t1 = clock()
        out.append(((t0 + t1) // 2, values))
        self.read_ns.append(t1 - t0)

    def _loop(self) -> None:
        clock = time.perf_counter_ns
        sleep = time.sleep
        deadline = clock() + self.interval_ns
        while True:
            left = deadline - clock()
            while left > 0 and self._running:
                sleep(min(left / 1e9, _MAX_NAP_S))
                left = deadline - clock()
            if not self._running:
                return
            self._sample(self._samples)
            deadline += self.interval_ns
            now = clock()
            if deadline <= now:  # a slow read: skip the missed ticks instead of reading back to back
                deadline = now + self.interval_ns

    def window(self, seconds: float) -> List[Sample]:
        """Sample in this thread for ``seconds`` (the idle baseline: nothing else is running)."""
        clock = time.perf_counter_ns
        samples: List[Sample] = []
        start = clock()
        end = start + int(seconds * 1e9)
        self._sample(samples)
        deadline = start + self.interval_ns
        while deadline < end:
            time.sleep(max(0.0, (deadline - clock()) / 1e9))
            self._sample(samples)
            deadline = max(deadline + self.interval_ns, clock() + self.interval_ns // 2)
        time.sleep(max(0.0, (end - clock()) / 1e9))
        self._sample(samples)
        return samples

    def start(self) -> None:
        """Take a first reading now, then keep reading in a daemon thread until :meth:`stop`."""
        self._samples = []
        self.stop_ns = None
        self._running = True
        self._sample(self._samples)
        self._thread = threading.Thread(target=self._loop, name="edgeopt-power", daemon=True)
        self._thread.start()

    def stop(self) -> List[Sample]:
        """Note the end of the window, stop the thread, take a last reading, and return all the readings.

        The thread may be asleep until its next tick, so the last reading can come after ``stop_ns``:
        :func:`clip` the readings to ``stop_ns``.
        """
        self.stop_ns = time.perf_counter_ns()
        self._running = False
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._sample(self._samples)
        return self._samples


class PowerSession(object):
    """Energy measurement for one run: settings, the reader found (or why none), both windows, the report."""

    def __init__(self, settings: PowerSettings, reader: Optional[PowerReader], reason: str) -> None:
        self.settings = settings
        self.reader = reader
        self.reason = reason
        self.sampler = Sampler(reader, settings.rate_hz) if reader is not None else None
        self._idle: Optional[List[Sample]] = None
        self._active: Optional[List[Sample]] = None  # clipped to the end of the timed phase
        self._active_readings = 0  # real readings in it (the clipped end point is interpolated)
        self._started = False

    @classmethod
    def open(cls, energy: Optional[Dict[str, Any]]) -> "PowerSession":
        """Parse ``Request.energy`` and open its sensor (``auto`` probes); never raises for a missing sensor.

        Raises:
            ValueError: bad settings (validate them with ``parse_settings`` first to report an input error).
        """
        settings = parse_settings(energy)
        if not settings.enabled:
            return cls(settings, None, "energy measurement disabled")
        reader, reason = find_reader(settings)
        return cls(settings, reader, reason)

    @property
    def measuring(self) -> bool:
        return self.sampler is not None

    def idle(self) -> None:
        """The idle baseline: ``idle_s`` seconds of readings with nothing running (skipped without a sensor)."""
        if self.sampler is not None and self.settings.idle_s > 0:
            self._idle = self.sampler.window(self.settings.idle_s)

    def start(self) -> None:
        if self.sampler is not None:
            self.sampler.start()
            self._started = True

    def stop(self) -> None:
        if self.sampler is not None and self._started:
            readings = self.sampler.stop()
            end_ns = self.sampler.stop_ns
            self._active = clip(readings, end_ns)
            self._active_readings = sum(1 for x in readings if end_ns is None or x[0] <= end_ns)
            self._started = False

    def close(self) -> None:
        self.stop()
        if self.reader is not None:
            self.reader.close()

    def readings(self) -> List[Sample]:
        """The timed window's readings (clipped to its end), for splitting its energy between intervals."""
        return list(self._active or [])

    def report(self) -> Dict[str, Any]:
        """What travels back in ``RawRun.power``: ``{}`` when disabled, the reason when no sensor was read."""
        if not self.settings.enabled:
            return {}
        if self.reader is None or self.sampler is None:
            return {"sensor": None, "reason": self.reason}
        s = self.sampler
        info = self.reader.describe()
        active = summarize(self._active or [], self.reader)
        active["samples"] = self._active_readings
        reads = sorted(s.read_ns)
        info.update({
            "rate_hz": self.settings.rate_hz,
            "rate_hz_used": s.rate_hz,
            "achieved_rate_hz": (round((active["samples"] - 1) / active["duration_s"], 3)
                                 if active["samples"] > 1 and active["duration_s"] > 0 else None),
            "read_cost_us": round(reads[len(reads) // 2] / 1e3, 1) if reads else None,
            "read_errors": s.errors,
            "idle": summarize(self._idle, self.reader) if self._idle is not None else None,
            "active": active,
        })
        if s.errors:
            info["last_error"] = s.last_error
        if active["avg_w"] is None:
            info["error"] = ("no usable power readings in the timed phase (%d read errors%s)"
                             % (s.errors, ": " + s.last_error if s.last_error else ""))
        return info
