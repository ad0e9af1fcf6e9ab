"""The typed result of ``edgeopt sweep LLM_DIR --devices``: a row per device with its LLM sweep, and the fleet's
view of every level (``<out>/fleet-sweep.json``; docs/llm.md, "Sweeping a fleet").

Same header and exit rule as the ONNX fleet sweep's (:mod:`edgeopt.sweep.fleet.result`): ``kind`` first, one
row per selected device in inventory order, each with its :class:`LlmSweepResult` or its error.
"""

from __future__ import annotations

import statistics
from typing import Any, Literal

from pydantic import Field

from ..fleet.result import DeviceOutcome, FleetRunHeader, FleetTally, _Frozen
from .sweep_result import LlmSweepResult

LLM_FLEET_SWEEP_SCHEMA_VERSION = "1.0"


class LlmFleetSweepRow(DeviceOutcome):
    """One device of an LLM fleet sweep."""

    result: LlmSweepResult | None = Field(default=None, description="The device's LLM sweep (null on error).")
    recommendation: str | None = Field(default=None, description="name@runtime this device would ship (null: none "
                                                                 "passes, or the device could not run).")
    history_run_ids: list[int] = Field(default_factory=list, description="Its levels' runs in the history (kind "
                                       "sweep, grouped by fleet_id; result.history_run_ids).")
    measured: list[Any] = Field(default_factory=list, exclude=True,
                                description="(LlmSweepLevel, LlmBenchResult) of each level the device measured, "
                                            "before the host ranks and records them (not JSON).")
    device_warnings: list[str] = Field(default_factory=list, exclude=True,
                                       description="Levels the device skipped (not JSON; in result.warnings).")


class LlmLevelSpread(_Frozen):
    """One level (name@runtime) across the devices that measured it."""

    name: str
    runtime: str
    devices: int = Field(description="Devices that measured this level.")
    tokens_per_s_median: float = Field(description="Median of the devices' rank_tokens_per_s (1000 / TPOT p50).")
    tokens_per_s_min: float = Field(description="Slowest device's decode rate, tokens/s.")
    min_device: str
    tokens_per_s_max: float = Field(description="Fastest device's decode rate, tokens/s.")
    max_device: str
    retention_min: float = Field(description="Lowest retention any device measured.")
    passed_on: list[str] = Field(description="Devices where the level kept --min-retention.")


class LlmFleetSweepSummary(FleetTally):
    """The fleet's view (``ok``: devices that returned a sweep)."""

    levels: list[LlmLevelSpread] = Field(description="Per level, in first-measured order.")
    recommendations: dict[str, str | None] = Field(
        description="Per device that ran: the name@runtime it would ship (null: none passes there).")
    agree: bool = Field(description="Every device that ran recommends the same level (and has one).")
    recommendation: str | None = Field(description="That common recommendation; null when they disagree.")


class LlmFleetSweepResult(FleetRunHeader):
    """Everything an LLM fleet sweep produced."""

    kind: Literal["llm_fleet_sweep"] = "llm_fleet_sweep"
    schema_version: str = LLM_FLEET_SWEEP_SCHEMA_VERSION
    host_seconds: float = Field(description="Wall time of the host side (checks, every level built), s.")
    out_dir: str = Field(description="Output directory: host/ (levels, eval text), devices/<name>/ (sweep.json, "
                                     "pareto.svg, recommended/).")
    rows: list[LlmFleetSweepRow]
    summary: LlmFleetSweepSummary
    warnings: list[str] = Field(default_factory=list, description="Levels not built, devices' skipped levels.")
    exit_code: int = Field(description="0 every device has a recommendation; 1 a device has none or could not run; "
                                       "3 every device failed to run (4: every one refused its host key).")


def summarize_llm(rows: list[LlmFleetSweepRow]) -> LlmFleetSweepSummary:
    """Per level the devices' decode-rate spread, each device's recommendation, and whether they agree."""
    ran = [r for r in rows if r.result is not None]
    by_level: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for row in ran:
        for lv in row.result.levels if row.result is not None else []:
            if lv.rank_tokens_per_s:
                by_level.setdefault((lv.name, lv.runtime), []).append((row.device, lv))
    levels = []
    for (name, runtime), seen in by_level.items():
        lo = min(seen, key=lambda s: s[1].rank_tokens_per_s)
        hi = max(seen, key=lambda s: s[1].rank_tokens_per_s)
        levels.append(LlmLevelSpread(
            name=name, runtime=runtime, devices=len(seen),
            tokens_per_s_median=round(statistics.median(lv.rank_tokens_per_s for _, lv in seen), 3),
            tokens_per_s_min=lo[1].rank_tokens_per_s, min_device=lo[0], tokens_per_s_max=hi[1].rank_tokens_per_s,
            max_device=hi[0], retention_min=min(lv.retention.retention for _, lv in seen),
            passed_on=[d for d, lv in seen if lv.passed]))
    recs = {r.device: r.recommendation for r in ran}
    distinct = set(recs.values())
    agree = bool(recs) and len(distinct) == 1 and None not in distinct
    return LlmFleetSweepSummary(devices=len(rows), ok=len(ran), failed=[r.device for r in rows if r.status == "error"],
                                levels=levels, recommendations=recs, agree=agree,
                                recommendation=next(iter(distinct)) if agree else None)
