"""``edgeopt sweep LLM_DIR --eval TEXT --devices SELECTION``: the LLM sweep on every device of a fleet.

1. Host side, once (:func:`~.sweep_build.prepare_llm_sweep`): inputs checked, every level built into
   ``<out>/host/levels`` (the exporters need torch), the eval text copied beside them; that folder is the bundle
   every device job reads, by content hash (:class:`ModelRef`: a shared path, or its bytes under Ray).
2. One :class:`LlmSweepJob` per device on the fleet's executor (:class:`FleetRunner`: bounded concurrency, a
   deadline per device, a failure costs only its own row): each level scored against that device's own FP32
   reference and benched there (:func:`~.sweep.measure_levels`, as the single sweep does over ``--host``).
3. Per device, here: the ranking, ``<out>/devices/<name>/sweep.json``, ``pareto.svg`` and the recommendation as a
   deployment in ``<out>/devices/<name>/recommended/`` (``measured.device`` = the inventory name)
   (:func:`~.sweep.finish_llm_sweep`); the fleet's result in ``<out>/fleet-sweep.json``.
"""

from __future__ import annotations

import datetime as _dt
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from pydantic import Field

from .._version import __version__
from ..fleet.artifacts import ModelRef
from ..fleet.devices import FleetDevice, fleet_selection, resolve_devices
from ..fleet.executors import DeviceEvents, Executor
from ..fleet.jobs import CancelToken, EventSink, Watchdog, _now, classify
from ..fleet.result import ErrorKind
from ..fleet.runner import FleetRunner
from ..settings import RemoteSpec
from ..sweep.fleet.drive import device_deadline, sweep_devices
from ..sweep.fleet.result import (
    FleetSweepKind,
    KindFleetSweepResult,
    KindFleetSweepRow,
    KindFleetSweepSummary,
    LevelPoint,
    LevelSpreadBase,
    SpreadNames,
)
from ..sweep.ship.deployment import discard
from .sweep import LlmLevelRun, finish_llm_sweep, measure_levels
from .sweep_build import LlmBuild, Say, prepare_llm_sweep
from .sweep_options import LlmSweepOptions
from .sweep_result import LlmSweepLevel, LlmSweepResult

if TYPE_CHECKING:
    from ..bench.llm.result import LlmBenchResult

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
class LlmSweepJob:
    """Every built level scored and benched on one device (a fleet job); the host ranks and ships.

    Attributes:
        device: the device (its runner is built where the job runs).
        bundle: ``<out>/host`` (``levels/``, ``eval.txt``), by content hash.
        build: the host side's checked inputs and built levels (host paths).
        options: the sweep's options.
        target: the device's target.
        deadline_s: the device's deadline from the moment the job starts.
    """

    device: FleetDevice
    bundle: ModelRef
    build: LlmBuild
    options: LlmSweepOptions
    target: str
    deadline_s: float = LLM_SWEEP_DEADLINE_S

    def model_ref(self) -> ModelRef:
        return self.bundle

    def _base(self) -> dict[str, Any]:
        return {"device": self.device.name, "target": self.target,
                "runner": f"ssh:{self.device.address.label()}", "tags": list(self.device.tags)}

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> LlmFleetSweepRow:
        return LlmFleetSweepRow(**self._base(), status="error", error=message, error_kind=kind,
                                seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> LlmFleetSweepRow:
        started, started_at = time.perf_counter(), _now()
        root = self.bundle.locate(blobs)
        warnings: list[str] = []

        def say(text: str) -> None:
            if progress is not None:
                progress({"event": "phase", "phase": text[:80]})

        runner = self.device.runner()
        with Watchdog(runner, self.deadline_s, cancel) as dog:
            try:
                runs = measure_levels(self.build, self.options, runner, say=say, warnings=warnings,
                                      root=root / LEVELS_DIR, eval_text=root / EVAL_FILE)
            except Exception as exc:  # every failure of this device becomes its row, never another device's
                kind, message = classify(exc, self.device.name, connected=runner.connected, fired=dog.fired,
                                         deadline_s=self.deadline_s)
                return self.error_row(kind, message, time.perf_counter() - started).model_copy(
                    update={"started_at": started_at})
            finally:
                runner.close()
        if blobs is not None:  # a copy from the object store: the host ships (and hashes) its own level folders
            runs = [_on_host(row, bench, str(self.build.levels_dir / row.runtime / row.name)) for row, bench in runs]
        return LlmFleetSweepRow(**self._base(), status="ok", seconds=round(time.perf_counter() - started, 3),
                                started_at=started_at, level_runs=runs, device_warnings=warnings)


def _on_host(row: LlmSweepLevel, bench: LlmBenchResult, folder: str) -> LlmLevelRun:
    """A level measured from a worker's copy, named by the host's folder (the deployment's and history's)."""
    return row.model_copy(update={"folder": folder}), bench.model_copy(update={"model_path": folder})


def _finish(row: LlmFleetSweepRow, build: LlmBuild, opts: LlmSweepOptions, out: Path,
            fleet_id: str) -> LlmFleetSweepRow:
    """A device's levels ranked here: ``devices/<name>/sweep.json``, chart, deployment, and its levels in the
    history grouped by ``fleet_id``; an error row leaves no stale answer of an earlier run behind."""
    dev_out = out / "devices" / row.device
    if row.status != "ok":
        discard(dev_out)
        (dev_out / "sweep.json").unlink(missing_ok=True)
        return row
    warnings = [*build.warnings, *row.device_warnings]  # the history's warning, if any, is added to it
    result = finish_llm_sweep(build, row.level_runs, opts, dev_out, runner_name=row.runner, target=row.target,
                              warnings=warnings, started=time.monotonic() - row.seconds, device=row.device,
                              group_id=fleet_id)
    rec = result.recommendation
    return row.model_copy(update={"result": result, "level_runs": [], "history_run_ids": result.history_run_ids,
                                  "device_warnings": warnings[len(build.warnings):],
                                  "recommendation": f"{rec.name}@{rec.runtime}" if rec is not None else None})


class HostSide(NamedTuple):
    """What the host side hands the device jobs: the built levels and the bundle, and how long that took."""

    build: LlmBuild
    bundle: ModelRef
    seconds: float


def _bundle(model: Path, opts: LlmSweepOptions, host: Path, say: Say) -> HostSide:
    """Build the levels into ``host/levels`` and copy the eval text beside them: the bundle."""
    started = time.perf_counter()
    host.mkdir(parents=True, exist_ok=True)
    build = prepare_llm_sweep(model, opts, host / LEVELS_DIR, say)
    keep = {(lv.runtime, lv.name) for lv in build.levels}
    for folder in sorted((host / LEVELS_DIR).glob("*/*")):  # levels not swept this time must not travel
        if (folder.parent.name, folder.name) not in keep:
            shutil.rmtree(folder, ignore_errors=True)
    shutil.copyfile(opts.eval_text, host / EVAL_FILE)
    return HostSide(build, ModelRef.of(host), round(time.perf_counter() - started, 3))


def fleet_llm_sweep(model: str | Path, opts: LlmSweepOptions, *, devices: str | Sequence[str | FleetDevice],
                    jobs: int | None = None, executor: str | Executor = "local", deadline_s: float | None = None,
                    remote: RemoteSpec | None = None, target: str | None = None,
                    progress: DeviceEvents | None = None, say: Say | None = None,
                    **remote_options: Any) -> LlmFleetSweepResult:
    """Sweep the Hugging Face folder ``model`` on every selected device: the levels built here once, then each
    device's retention and bench in parallel, one recommendation per device.

    Args:
        opts: as for :func:`~.sweep.run_llm_sweep` (``out_dir``: the fleet's output directory).
        devices, jobs, executor, deadline_s, remote, target, progress, remote_options: as for
            :func:`edgeopt.sweep.fleet.fleet_sweep`. say: the host side's progress lines.

    Raises:
        InputError: bad folder, text, calibration text, level, selection or option (exit 2).
        LlmExportError: a runtime's FP32 reference could not be built here.
    """
    src, say = Path(model), say or (lambda _text: None)
    selected = resolve_devices(devices, remote, **remote_options)
    deadline = device_deadline(deadline_s, LLM_SWEEP_DEADLINE_S)
    out = Path(opts.out_dir) if opts.out_dir is not None else Path("out") / f"{src.name}.llm-sweep"
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    host, rows = sweep_devices(fleet, lambda: _bundle(src, opts, out / "host", say),
                               lambda d, h: LlmSweepJob(d, h.bundle, h.build, opts, target or d.target, deadline),
                               LlmFleetSweepRow)
    build = host.build
    rows = [_finish(r, build, opts, out, fleet_id) for r in rows]
    warnings = [*build.warnings, *(f"{r.device}: {w}" for r in rows for w in r.device_warnings)]
    return LLM_FLEET_SWEEP.write(
        rows, out, edgeopt_version=__version__, fleet_id=fleet_id, model=str(src), model_sha256=build.digest,
        selection=fleet_selection(devices), executor=fleet.executor.name, jobs=fleet.jobs, deadline_s=deadline,
        started_at=started_at, seconds=round(time.perf_counter() - started, 3), host_seconds=host.seconds,
        warnings=warnings)
