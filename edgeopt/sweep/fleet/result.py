"""The typed result of a fleet sweep: a row per device with its sweep, plus the fleet's view of every level.

Schema (``--json``), documented in docs/fleet.md (*Sweeping a fleet*): ``FleetSweepResult`` -> ``rows`` (one
:class:`FleetSweepRow` per selected device, in inventory order, each with its ``SweepResult`` or its error),
``summary`` (per level the devices' latency spread, each device's recommendation, whether they agree).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from ...errors import ExitCode
from ...fleet.result import DeviceOutcome, FleetRunHeader, FleetTally, _Frozen, all_failed_code
from ..result import SweepResult

FLEET_SWEEP_SCHEMA_VERSION = "1.0"


class FleetSweepRow(DeviceOutcome):
    """One device of a fleet sweep."""

    result: SweepResult | None = Field(default=None, description="The device's sweep result (null on error).")
    recommendation: str | None = Field(default=None, description="recipe/runtime this device would ship (null: none "
                                                                 "passes, or the device could not run).")
    history_run_ids: list[int] = Field(default_factory=list, description="Its levels' runs in the history.")
    level_runs: list[Any] = Field(default_factory=list, exclude=True,
                                  description="(Level, BenchResult) of each fresh level, for the history (not JSON).")


class LevelSpread(_Frozen):
    """One (recipe, runtime) level across the devices that measured it."""

    recipe: str
    runtime: str
    devices: int = Field(description="Devices that measured this level.")
    median_ms: float = Field(description="Median of the devices' p50 latency, ms.")
    min_ms: float = Field(description="Fastest device's p50, ms.")
    min_device: str
    max_ms: float = Field(description="Slowest device's p50, ms.")
    max_device: str
    retention_min: float = Field(description="Lowest retention any device measured.")
    passed_on: list[str] = Field(description="Devices where the level passed (retention and budget).")


class FleetSweepSummary(FleetTally):
    """The fleet's view (``ok``: devices that returned a sweep)."""

    levels: list[LevelSpread] = Field(description="Per level, in first-measured order.")
    recommendations: dict[str, str | None] = Field(
        description="Per device that ran: the recipe/runtime it would ship (null: none passes there).")
    agree: bool = Field(description="Every device that ran recommends the same recipe/runtime (and has one).")
    recommendation: str | None = Field(description="That common recommendation; null when they disagree.")


class FleetSweepResult(FleetRunHeader):
    """Everything a fleet sweep produced."""

    schema_version: str = FLEET_SWEEP_SCHEMA_VERSION
    host_seconds: float = Field(description="Wall time of the host side (eval data, every recipe's artifacts), s.")
    targets: list[str] = Field(description="Targets the artifacts were built for (the devices' distinct targets).")
    out_dir: str = Field(description="Output directory: host/ (the shared inputs), devices/<name>/sweep.json.")
    rows: list[FleetSweepRow]
    summary: FleetSweepSummary
    warnings: list[str] = Field(default_factory=list, description="Host-side problems that did not stop the run.")
    exit_code: int = Field(description="0 every device has a recommendation; 1 a device has none or could not run; "
                                       "3 every device failed to run.")


def summarize(rows: list[FleetSweepRow]) -> FleetSweepSummary:
    """Per level the devices' p50 spread, each device's recommendation, and whether they agree."""
    ran = [r for r in rows if r.result is not None]
    by_level: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for row in ran:
        for lv in row.result.levels if row.result is not None else []:
            by_level.setdefault((lv.recipe, lv.runtime), []).append((row.device, lv))
    levels = []
    for (recipe, runtime), seen in by_level.items():
        lo = min(seen, key=lambda s: s[1].latency_ms)
        hi = max(seen, key=lambda s: s[1].latency_ms)
        levels.append(LevelSpread(
            recipe=recipe, runtime=runtime, devices=len(seen),
            median_ms=round(statistics.median(lv.latency_ms for _, lv in seen), 4),
            min_ms=lo[1].latency_ms, min_device=lo[0], max_ms=hi[1].latency_ms, max_device=hi[0],
            retention_min=min(lv.retention for _, lv in seen), passed_on=[d for d, lv in seen if lv.passed]))
    recs = {r.device: r.recommendation for r in ran}
    distinct = set(recs.values())
    agree = bool(recs) and len(distinct) == 1 and None not in distinct
    return FleetSweepSummary(devices=len(rows), ok=len(ran), failed=[r.device for r in rows if r.status == "error"],
                             levels=levels, recommendations=recs, agree=agree,
                             recommendation=next(iter(distinct)) if agree else None)


def fleet_sweep_exit_code(rows: Sequence[DeviceOutcome]) -> int:
    """3 when every device failed to run (4: every one refused its host key), else 1 when any device could not
    run or has no recommendation, else 0. ``rows``: an ONNX or an LLM fleet sweep's (each has ``recommendation``)."""
    failed = all_failed_code(rows)
    if failed is not None:
        return failed
    if any(getattr(r, "recommendation", None) is None for r in rows):
        return int(ExitCode.GATE_FAILED)
    return int(ExitCode.OK)
