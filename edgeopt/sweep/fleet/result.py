"""The typed result of a fleet sweep, for every model kind: a row per device with its sweep, plus the fleet's view
of every level.

Schema (``--json``, ``<out>/fleet-sweep.json``), documented in docs/fleet.md (*Sweeping a fleet*) and docs/llm.md
(*Sweeping a fleet*): :class:`KindFleetSweepResult` -> ``rows`` (one :class:`KindFleetSweepRow` per selected
device, in inventory order, each with its kind's sweep result or its error), ``summary`` (per level the devices'
spread of the kind's rank number, each device's recommendation, whether they agree).

What differs between kinds is given by the kind, never asked here: its sweep result type (the rows' ``result``), its
level spread (:class:`LevelSpreadBase` subclass: the JSON names of the spread, its rounding, and how one level
reads as a :class:`LevelPoint`), and the name its result carries as ``kind`` (a :class:`FleetSweepKind`). The
one-pass sweep's are here (:data:`ONE_PASS`); the LLM sweep's in :mod:`edgeopt.llm.sweep_fleet`.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from pydantic import BaseModel, Field

from ...errors import ExitCode
from ...fleet.result import DeviceOutcome, FleetRunHeader, FleetTally, _Frozen, all_failed_code
from ...fsutil import atomic_write_text
from ...untrusted import for_json
from ..result import SweepResult

FLEET_SWEEP_SCHEMA_VERSION = "1.0"
S = TypeVar("S", bound="LevelSpreadBase")


class LevelPoint(NamedTuple):
    """One device's level as the fleet summary reads it."""

    name: str
    runtime: str
    value: float
    retention: float
    passed: bool


class SpreadNames(NamedTuple):
    """The JSON names a kind gives its level spread: the level's name, the median, the lowest and highest value,
    and the digits the median is rounded to."""

    level: str
    median: str
    low: str
    high: str
    digits: int


class LevelSpreadBase(_Frozen):
    """A level (name, runtime) across the devices that measured it; a kind's subclass declares the fields in its
    JSON order, names them in ``names`` and reads a level in :meth:`point`."""

    names: ClassVar[SpreadNames]

    @classmethod
    def point(cls, level: Any) -> LevelPoint | None:
        """One level of a device's sweep as a point of the spread (None: not measured, left out)."""
        raise NotImplementedError

    @classmethod
    def of(cls: type[S], name: str, runtime: str, seen: Sequence[tuple[str, LevelPoint]]) -> S:
        """The spread of ``seen`` ((device, point) of every device that measured the level)."""
        n = cls.names
        lo = min(seen, key=lambda s: s[1].value)
        hi = max(seen, key=lambda s: s[1].value)
        return cls(**{n.level: name, "runtime": runtime, "devices": len(seen),
                      n.median: round(statistics.median(p.value for _, p in seen), n.digits),
                      n.low: lo[1].value, "min_device": lo[0], n.high: hi[1].value, "max_device": hi[0],
                      "retention_min": min(p.retention for _, p in seen),
                      "passed_on": [d for d, p in seen if p.passed]})


class LevelSpread(LevelSpreadBase):
    """One (recipe, runtime) level of a one-pass sweep across the devices that measured it."""

    names: ClassVar[SpreadNames] = SpreadNames("recipe", "median_ms", "min_ms", "max_ms", 4)

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

    @classmethod
    def point(cls, level: Any) -> LevelPoint | None:
        return LevelPoint(level.recipe, level.runtime, level.latency_ms, level.retention, level.passed)


ResultT = TypeVar("ResultT", bound=BaseModel)
SpreadT = TypeVar("SpreadT", bound=LevelSpreadBase)


class KindFleetSweepRow(DeviceOutcome, Generic[ResultT]):
    """One device of a fleet sweep."""

    result: ResultT | None = Field(default=None, description="The device's sweep result (null on error).")
    recommendation: str | None = Field(default=None, description="The level this device would ship, as its sweep "
                                       "names it (recipe/runtime, name@runtime; null: none passes, or the device "
                                       "could not run).")
    history_run_ids: list[int] = Field(default_factory=list, description="Its levels' runs in the history (kind "
                                       "sweep, grouped by fleet_id).")
    level_runs: list[Any] = Field(default_factory=list, exclude=True,
                                  description="(level, bench result) of each level the device measured, before the "
                                              "host ranks or records them (not JSON).")
    device_warnings: list[str] = Field(default_factory=list, exclude=True,
                                       description="Levels the device skipped (not JSON; in result.warnings).")
    from_worker: Any = Field(default=None, exclude=True,
                             description="What a worker that does not share the host's paths sends back beside the "
                                         "result for the host to keep (the kind's; not JSON).")


class KindFleetSweepSummary(FleetTally, Generic[SpreadT]):
    """The fleet's view (``ok``: devices that returned a sweep)."""

    levels: list[SpreadT] = Field(description="Per level, in first-measured order.")
    recommendations: dict[str, str | None] = Field(
        description="Per device that ran: the level it would ship (null: none passes there).")
    agree: bool = Field(description="Every device that ran recommends the same level (and has one).")
    recommendation: str | None = Field(description="That common recommendation; null when they disagree.")


def _unset(value: object) -> bool:
    return value is None


class KindFleetSweepResult(FleetRunHeader, Generic[ResultT, SpreadT]):
    """Everything a fleet sweep produced."""

    schema_version: str = FLEET_SWEEP_SCHEMA_VERSION
    kind: str | None = Field(default=None, exclude_if=_unset, description="The result's kind, for a kind that "
                             "names it (e.g. llm_fleet_sweep); absent otherwise.")
    host_seconds: float = Field(description="Wall time of the host side (checks, eval data, every level built), s.")
    targets: list[str] | None = Field(default=None, exclude_if=_unset, description="Targets the artifacts were "
                                      "built for (the devices' distinct targets); absent where levels are built "
                                      "once for every target.")
    out_dir: str = Field(description="Output directory: host/ (the shared inputs, the levels), devices/<name>/ "
                                     "(sweep.json, pareto.svg, recommended/ where the kind ships one).")
    rows: list[KindFleetSweepRow[ResultT]]
    summary: KindFleetSweepSummary[SpreadT]
    warnings: list[str] = Field(default_factory=list, description="Host-side problems that did not stop the run, "
                                "devices' skipped levels.")
    exit_code: int = Field(description="0 every device has a recommendation; 1 a device has none or could not run; "
                                       "3 every device failed to run (4: every one refused its host key).")


@dataclass(frozen=True)
class FleetSweepKind(Generic[ResultT, SpreadT]):
    """A kind's part of the fleet sweep result: its parametrized types and the ``kind`` its result names."""

    row: type[KindFleetSweepRow[ResultT]]
    summary: type[KindFleetSweepSummary[SpreadT]]
    result: type[KindFleetSweepResult[ResultT, SpreadT]]
    spread: type[SpreadT]
    kind: str | None = None

    def write(self, rows: list[KindFleetSweepRow[ResultT]], out: Path,
              **fields: Any) -> KindFleetSweepResult[ResultT, SpreadT]:
        """The fleet's result (``rows``, their summary and exit code, the kind's name, the run's ``fields``), also
        written to ``<out>/fleet-sweep.json``."""
        result = self.result(**fields, kind=self.kind, out_dir=str(out), rows=rows, summary=summarize(rows, self),
                             exit_code=fleet_sweep_exit_code(rows))
        atomic_write_text(out / "fleet-sweep.json", for_json(result.model_dump_json(indent=2)) + "\n")
        return result


FleetSweepRow = KindFleetSweepRow[SweepResult]
FleetSweepSummary = KindFleetSweepSummary[LevelSpread]
FleetSweepResult = KindFleetSweepResult[SweepResult, LevelSpread]
ONE_PASS: FleetSweepKind[SweepResult, LevelSpread] = FleetSweepKind(FleetSweepRow, FleetSweepSummary,
                                                                    FleetSweepResult, LevelSpread)


def summarize(rows: Sequence[KindFleetSweepRow[Any]],
              kind: FleetSweepKind[Any, Any] = ONE_PASS) -> KindFleetSweepSummary[Any]:
    """Per level the devices' spread (``kind.spread``), each device's recommendation, and whether they agree."""
    ran = [r for r in rows if r.result is not None]
    by_level: dict[tuple[str, str], list[tuple[str, LevelPoint]]] = {}
    for row in ran:
        for lv in getattr(row.result, "levels", []):
            point = kind.spread.point(lv)
            if point is not None:
                by_level.setdefault((point.name, point.runtime), []).append((row.device, point))
    levels = [kind.spread.of(name, runtime, seen) for (name, runtime), seen in by_level.items()]
    recs = {r.device: r.recommendation for r in ran}
    distinct = set(recs.values())
    agree = bool(recs) and len(distinct) == 1 and None not in distinct
    return kind.summary(devices=len(rows), ok=len(ran), failed=[r.device for r in rows if r.status == "error"],
                        levels=levels, recommendations=recs, agree=agree,
                        recommendation=next(iter(distinct)) if agree else None)


def fleet_sweep_exit_code(rows: Sequence[KindFleetSweepRow[Any]]) -> int:
    """3 when every device failed to run (4: every one refused its host key), else 1 when any device could not
    run or has no recommendation, else 0."""
    failed = all_failed_code(rows)
    if failed is not None:
        return failed
    if any(r.recommendation is None for r in rows):
        return int(ExitCode.GATE_FAILED)
    return int(ExitCode.OK)
