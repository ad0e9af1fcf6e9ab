"""The unit-to-unit view of a fleet: medians, spread, outliers and what the agent saw on each device.

Conditions come from the environment the agent records before each run (``edgeopt_agent/environment.py``):
cpufreq governor, thermal zones, 1-minute load average, current vs maximum clock, and the kernel's throttling
reports (Raspberry Pi firmware flags, x86 thermal throttle counters). An outlier's likely causes are its
conditions that most other devices do not share: a governor every board has explains nothing.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from ...fleet.result import FleetAggregate, FleetRow, Outlier, Spread
from ...fleet.verdict import device_warnings, verdict_text

DEFAULT_OUTLIER_PCT = 15.0
# Below this absolute difference from the median a device is never an outlier: timer and scheduler noise.
NOISE_FLOOR_MS = 0.05
HOT_C = 75.0  # most boards start throttling at 80-85 degC
_RPI_NOW = {0: "under-voltage now", 1: "ARM clock capped now", 2: "throttled now", 3: "soft temperature limit now"}
_RPI_PAST = {16: "under-voltage", 17: "clock capping", 18: "throttling", 19: "soft temperature limit"}


def conditions(env: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, text)`` for each condition in an agent environment that can skew latency."""
    out: list[tuple[str, str]] = []
    governor = env.get("governor")
    if governor and governor != "performance":
        out.append(("governor", f"cpufreq governor '{governor}', not performance"))
    temps = {k: v for k, v in (env.get("temperature_c") or {}).items() if isinstance(v, (int, float))}
    if temps:
        zone, hottest = max(temps.items(), key=lambda kv: kv[1])
        if hottest >= HOT_C:
            out.append(("temperature", f"temperature {hottest:.0f} degC ({zone}) before the run"))
    load, cores = env.get("load_avg_1m"), env.get("cores") or 1
    if isinstance(load, (int, float)) and load >= max(1.0, 0.5 * cores):
        out.append(("load", f"load average {load:.2f} on {cores} cores before the run: another process was using "
                            "the CPU"))
    cur, top = env.get("cpu_cur_mhz"), env.get("cpu_mhz")
    if governor == "performance" and isinstance(cur, (int, float)) and isinstance(top, (int, float)) and top > 0 \
            and cur < 0.85 * top:
        out.append(("clock", f"CPU clock {cur:.0f} of {top:.0f} MHz under the performance governor: capped"))
    out.extend(_throttling(env.get("throttling") or {}))
    return out


def _throttling(report: dict[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    flags = report.get("rpi_flags")
    if isinstance(flags, int) and flags:
        now = [text for bit, text in _RPI_NOW.items() if flags >> bit & 1]
        past = [text for bit, text in _RPI_PAST.items() if flags >> bit & 1]
        text = "; ".join(now) if now else f"{', '.join(past)} since boot"
        out.append(("throttling", f"firmware reports {text} (get_throttled 0x{flags:x})"))
    events = sum(v for k, v in report.items() if k.endswith("_thermal_events") and isinstance(v, int))
    if events:
        out.append(("throttling", f"{events} thermal throttling events on cpu0 since boot"))
    return out


def _spread(rows: Sequence[FleetRow], metric: str) -> Spread | None:
    values = [(r.device, float(getattr(r.result.latency_ms, metric))) for r in rows if r.result is not None]
    if not values:
        return None
    nums = [v for _, v in values]
    mean = statistics.fmean(nums)
    cv = statistics.stdev(nums) / mean if len(nums) >= 2 and mean > 0 else None
    low, high = min(values, key=lambda dv: dv[1]), max(values, key=lambda dv: dv[1])
    return Spread(devices=len(nums), median_ms=round(statistics.median(nums), 4), min_ms=round(low[1], 4),
                  max_ms=round(high[1], 4), cv=round(cv, 4) if cv is not None else None, min_device=low[0],
                  max_device=high[0])


def _outliers(rows: Sequence[FleetRow], spreads: dict[str, Spread | None], threshold_pct: float,
              seen: dict[str, list[tuple[str, str]]]) -> list[Outlier]:
    ok = [r for r in rows if r.result is not None]
    if len(ok) < 3:  # with two devices neither is "the odd one"
        return []
    kinds_count: dict[str, int] = {}
    for r in ok:
        for kind in {k for k, _ in seen[r.device]}:
            kinds_count[kind] = kinds_count.get(kind, 0) + 1
    out = []
    for r in ok:
        assert r.result is not None
        for metric in ("p50", "p99"):
            spread = spreads[metric]
            if spread is None or spread.median_ms <= 0:
                continue
            value = float(getattr(r.result.latency_ms, metric))
            deviation = (value - spread.median_ms) / spread.median_ms * 100
            if abs(deviation) <= threshold_pct or abs(value - spread.median_ms) < NOISE_FLOOR_MS:
                continue
            causes = [text for kind, text in seen[r.device] if kinds_count.get(kind, 0) * 2 <= len(ok)]
            out.append(Outlier(device=r.device, metric=metric, value_ms=round(value, 4),
                               fleet_median_ms=spread.median_ms, deviation_pct=round(deviation, 1),
                               likely_causes=causes or ["none seen by the agent (same governor, temperature, load "
                                                        "and throttling state as most devices)"]))
    return out


def aggregate(rows: Sequence[FleetRow], *, outlier_pct: float = DEFAULT_OUTLIER_PCT) -> tuple[list[FleetRow],
                                                                                             FleetAggregate]:
    """Rows with their ``conditions`` filled in, and the fleet's aggregate."""
    seen = {r.device: conditions(r.result.environment) if r.result is not None else [] for r in rows}
    rows = [r.model_copy(update={"conditions": [text for _, text in seen[r.device]],
                                 "verdict": verdict_text(r.result) if r.result is not None else None,
                                 "warnings": device_warnings(r.result)}) for r in rows]
    spreads = {m: _spread(rows, m) for m in ("p50", "p99")}
    throughputs = [r.result.throughput_ips for r in rows if r.result is not None]
    agg = FleetAggregate(
        devices=len(rows), ok=sum(r.status == "ok" for r in rows),
        failed=[r.device for r in rows if r.status == "error"],
        not_passed=[r.device for r in rows if r.status == "ok" and not r.passed],
        p50=spreads["p50"], p99=spreads["p99"],
        throughput_ips_median=round(statistics.median(throughputs), 3) if throughputs else None,
        outlier_threshold_pct=outlier_pct, outliers=_outliers(rows, spreads, outlier_pct, seen),
    )
    return rows, agg
