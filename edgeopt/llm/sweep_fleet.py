"""``edgeopt sweep LLM_DIR --eval TEXT --devices SELECTION``: the LLM sweep on every device of a fleet.

The LLM kind's part of the fleet-sweep driver (:mod:`edgeopt.sweep.fleet.drive`, the one-pass sweep's too: the
selection, deadlines, executor session, jobs and the fleet's result are its):

1. Host side, once (:func:`~.sweep_build.prepare_llm_sweep`): inputs checked, every level built into
   ``<out>/host/levels`` (the exporters need torch), the eval text copied beside them; that folder is the bundle
   every device job reads, by content hash (:class:`ModelRef`: a shared path, or its bytes under Ray).
2. On each device (:class:`LlmMeasure`, in the driver's job): each level scored against that device's own FP32
   reference and benched there, then the ranking, ``sweep.json``, ``pareto.svg`` and the recommendation as a
   deployment in ``devices/<name>/recommended/`` (``measured.device`` = the inventory name), re-scored from its
   files alone through the same runner against the same reference scores: the single sweep's own steps
   (:func:`edgeopt.sweep.flow.measure_on` of :class:`~.sweep.LlmSweep`, as it runs over ``--host``; the shipped
   check of :mod:`.sweep_check`).
3. Here, per device: its levels in the history (grouped by the fleet run), its ``sweep.json`` with them; where the
   worker did not share this machine's paths, the chart redrawn and the recommendation re-shipped from the host's
   own level folders with the device's check (the same files, by hash). The fleet's result in
   ``<out>/fleet-sweep.json``.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from pydantic import Field

from ..fleet.artifacts import ModelRef
from ..fleet.devices import FleetDevice
from ..fleet.executors import DeviceEvents, Executor
from ..fleet.runner import FleetRunner
from ..runners import Runner
from ..settings import RemoteSpec
from ..sweep.fleet.drive import DeviceMeasure, FleetSweepPlan, OnDevice, Row, run_fleet_sweep
from ..sweep.fleet.result import (
    FleetSweepKind,
    KindFleetSweepResult,
    KindFleetSweepRow,
    KindFleetSweepSummary,
    LevelPoint,
    LevelSpreadBase,
    SpreadNames,
)
from ..sweep.flow import measure_on, record_history, save_sweep
from ..sweep.ship.deployment import discard
from .sweep import LlmLevelRun, LlmSweep, dump_llm_sweep, llm_swept_levels
from .sweep_build import LlmBuild, Say, prepare_llm_sweep
from .sweep_options import LlmSweepOptions
from .sweep_rank import write_llm_plot
from .sweep_result import LlmSweepLevel, LlmSweepResult
from .sweep_ship import ship_llm

EVAL_FILE = "eval.txt"
LEVELS_DIR = "levels"
# Beyond the levels' own time: connect, upload every level folder, lock waits.
LLM_SWEEP_DEADLINE_S = 3600.0


class LlmLevelSpread(LevelSpreadBase):
    """One level (name@runtime) across the devices that measured it: the spread of its decode rate."""

    names: ClassVar[SpreadNames] = SpreadNames("name", "tokens_per_s_median", "tokens_per_s_min", "tokens_per_s_max",
                                               3)

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

    @classmethod
    def point(cls, level: Any) -> LevelPoint | None:
        """A level without a decode time (not benched) is left out of the spread."""
        if not level.rank_tokens_per_s:
            return None
        return LevelPoint(level.name, level.runtime, level.rank_tokens_per_s, level.retention.retention,
                          level.passed)


# The fleet sweep result (edgeopt.sweep.fleet.result) with an LLM sweep per device and the decode-rate spread.
LlmFleetSweepRow = KindFleetSweepRow[LlmSweepResult]
LlmFleetSweepSummary = KindFleetSweepSummary[LlmLevelSpread]
LlmFleetSweepResult = KindFleetSweepResult[LlmSweepResult, LlmLevelSpread]
LLM_FLEET_SWEEP: FleetSweepKind[LlmSweepResult, LlmLevelSpread] = FleetSweepKind(
    LlmFleetSweepRow, LlmFleetSweepSummary, LlmFleetSweepResult, LlmLevelSpread, kind="llm_fleet_sweep")


@dataclass(frozen=True)
class LlmMeasure:
    """The LLM sweep on one device (the driver's job runs it there): every built level scored and benched, ranked,
    shipped and the shipped folder re-scored through the device's runner; the ok row's fields.

    Attributes:
        build: the host side's checked inputs and built levels (host paths).
        options: the sweep's options (its history is recorded on the host).
    """

    build: LlmBuild
    options: LlmSweepOptions

    def __call__(self, on: OnDevice, runner: Runner) -> dict[str, Any]:
        # the one sweep's steps 3-4 on this device (the shipped folder re-scored through its runner, against its
        # reference scores); the history is the host's
        plan = LlmSweep(self.build.src, self.options, on.out, on.phase, build=self.build, root=on.root / LEVELS_DIR,
                        eval_text=on.root / EVAL_FILE, runner_name=on.runner_name)
        swept = measure_on(plan, runner, on.target, on.device)
        result, runs = swept.result, swept.measured.runs
        save_sweep(plan.dump(result), on.out)
        if not on.shared:  # the host re-ships from its own level folders: this worker's copy is not kept
            shutil.rmtree(on.out, ignore_errors=True)
        rec = result.recommendation
        return {"result": result, "recommendation": f"{rec.name}@{rec.runtime}" if rec is not None else None,
                "level_runs": runs}


def _rehome(result: LlmSweepResult, runs: list[LlmLevelRun], build: LlmBuild, out: Path,
            device: str) -> tuple[LlmSweepResult, list[LlmLevelRun]]:
    """A device's sweep from a worker that did not share this machine's paths, as the host keeps it: the host's
    level folders (the result's and the history's), the chart redrawn in ``out``, the recommendation re-shipped
    from the host's folder with the device's shipped check (kept where the files are the same, by hash)."""
    def here(row: LlmSweepLevel) -> LlmSweepLevel:
        return row.model_copy(update={"folder": str(build.levels_dir / row.runtime / row.name)})

    levels = [here(lv) for lv in result.levels]
    runs = [(here(row), bench.model_copy(update={"model_path": here(row).folder})) for row, bench in runs]
    out.mkdir(parents=True, exist_ok=True)
    plot = write_llm_plot(levels, out / "pareto.svg", result.min_retention, result.recommendation)
    result = result.model_copy(update={"levels": levels, "plot": str(plot), "out_dir": str(out)})
    rec = result.recommendation
    return ship_llm(result, out, device=device, check=rec.shipped_check if rec is not None else None), runs


class LlmHost(NamedTuple):
    """What the host side hands the device jobs: the built levels and the bundle, and how long that took."""

    build: LlmBuild
    ref: ModelRef
    seconds: float


@dataclass(frozen=True)
class LlmPlan(FleetSweepPlan[LlmHost]):
    """The LLM sweep's part of the fleet sweep (see the module's docstring)."""

    kind: ClassVar[FleetSweepKind[Any, Any]] = LLM_FLEET_SWEEP
    default_deadline_s: ClassVar[float] = LLM_SWEEP_DEADLINE_S

    model: Path
    options: LlmSweepOptions
    out: Path
    say: Say

    def host_side(self, fleet: FleetRunner, targets: list[str]) -> LlmHost:
        """Build the levels into ``host/levels`` and copy the eval text beside them: the bundle."""
        started, host = time.perf_counter(), self.out / "host"
        host.mkdir(parents=True, exist_ok=True)
        build = prepare_llm_sweep(self.model, self.options, host / LEVELS_DIR, self.say)
        keep = {(lv.runtime, lv.name) for lv in build.levels}
        for folder in sorted((host / LEVELS_DIR).glob("*/*")):  # levels not swept this time must not travel
            if (folder.parent.name, folder.name) not in keep:
                shutil.rmtree(folder, ignore_errors=True)
        shutil.copyfile(self.options.eval_text, host / EVAL_FILE)
        return LlmHost(build, ModelRef.of(host), round(time.perf_counter() - started, 3))

    def measure(self, host: LlmHost) -> DeviceMeasure:
        return LlmMeasure(host.build, self.options)

    def finish(self, host: LlmHost, row: Row, fleet_id: str) -> Row:
        """A device's levels in the history grouped by ``fleet_id``, its ``sweep.json`` with them (and, from a
        worker that did not share our paths, its chart and deployment here); an error row leaves no stale answer
        of an earlier run behind."""
        dev_out = self.out / "devices" / row.device
        if row.status != "ok" or not isinstance(row.result, LlmSweepResult):
            discard(dev_out)
            (dev_out / "sweep.json").unlink(missing_ok=True)
            return row
        result, runs = row.result, row.level_runs
        if Path(result.out_dir) != dev_out:
            result, runs = _rehome(result, runs, host.build, dev_out, row.device)
        # the history's warning, if any, is added to its warnings
        result = record_history(result, llm_swept_levels(runs), self.options.history_db, device=row.device,
                                group_id=fleet_id)
        save_sweep(dump_llm_sweep(result), dev_out)
        return row.model_copy(update={"result": result, "level_runs": [], "history_run_ids": result.history_run_ids,
                                      "device_warnings": result.warnings[len(host.build.warnings):]})

    def fields(self, host: LlmHost, rows: list[Row]) -> dict[str, Any]:
        return {"model": str(self.model), "model_sha256": host.build.digest, "warnings": [
            *host.build.warnings, *(f"{r.device}: {w}" for r in rows for w in r.device_warnings)]}


def fleet_llm_sweep(model: str | Path, opts: LlmSweepOptions, *, devices: str | Sequence[str | FleetDevice],
                    jobs: int | None = None, executor: str | Executor = "local", deadline_s: float | None = None,
                    remote: RemoteSpec | None = None, target: str | None = None,
                    progress: DeviceEvents | None = None, say: Say | None = None,
                    **remote_options: Any) -> LlmFleetSweepResult:
    """Sweep the Hugging Face folder ``model`` on every selected device: the levels built here once, then each
    device's retention, bench and shipped check in parallel, one recommendation per device.

    Args:
        opts: as for :func:`~.sweep.run_llm_sweep` (``out_dir``: the fleet's output directory).
        devices, jobs, executor, deadline_s, remote, target, progress, remote_options: as for
            :func:`edgeopt.sweep.fleet.fleet_sweep`. say: the host side's progress lines.

    Raises:
        InputError: bad folder, text, calibration text, level, selection or option (exit 2).
        LlmExportError: a runtime's FP32 reference could not be built here.
    """
    src = Path(model)
    out = Path(opts.out_dir) if opts.out_dir is not None else Path("out") / f"{src.name}.llm-sweep"
    plan = LlmPlan(src, opts, out, say or (lambda _text: None))
    result: LlmFleetSweepResult = run_fleet_sweep(plan, devices=devices, jobs=jobs, executor=executor,
                                                  deadline_s=deadline_s, remote=remote, target=target,
                                                  progress=progress, **remote_options)
    return result
