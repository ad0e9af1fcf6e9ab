"""Qualify's devices as fleet jobs: each placement's measurements, self-contained, on any executor.

The spec's host-side work (build, optimize, retention) is done before; then one :class:`QualifyJob` per placement
runs on the fleet's executor (:func:`edgeopt.fleet.runner.run_jobs`: threads here, or Ray tasks holding the
device's ``edgeopt-device:LABEL`` resource) with bounded concurrency (``--jobs``) and a deadline per device. A job
is plain picklable data in (the placement, the qualified model by content hash, the timed and frame-paced
settings) and the device's measured runs out (:class:`QualifyRow`); the gates, the baseline comparison, the
history record and the reports are the driver's (:mod:`.engine`), so the result is the same under every executor.

Past its deadline a job's watchdog aborts the device's SSH session (as ``fleet bench``'s jobs do): the agent on
the device sees its session go, releases the device lock and exits, and the row is a ``deadline`` error. A device
that cannot run (unreachable, killed, past its deadline) becomes one error row; the others keep their verdicts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

from pydantic import Field

from ..fleet.artifacts import ModelRef
from ..fleet.jobs import CancelToken, EventSink, ResultT, RowT, Session, guarded, watched
from ..fleet.result import DeviceOutcome, ErrorKind
from ..metrics.result import BenchResult
from ..runners import Runner
from ..settings import MeasureSettings
from .placement import Placement

# Beyond a timed run's watchdog (max_duration_s, twice with a deadline_miss run): connect, upload, lock wait, load.
DEADLINE_MARGIN_S = 300.0
# A job's log line travels as this event (so it reaches the driver from a Ray worker too).
LOG_EVENT = "log"


class QualifyRow(DeviceOutcome):
    """One device's measured runs as a fleet row (gates and history are the driver's)."""

    bench: BenchResult | None = Field(default=None, description="The timed run, raw samples kept (null on error).")
    paced: BenchResult | None = Field(default=None, description="The frame-paced run (deadline_miss gate).")


class OnPlacement(Generic[RowT]):
    """What qualify's jobs (this module's and the LLM one's) share: the placement as the executor's device slot,
    the model they carry, and the fields their rows start with."""

    placement: Placement
    model: ModelRef
    deadline_s: float

    @property
    def device(self) -> Placement:
        return self.placement

    def model_ref(self) -> ModelRef:
        return self.model

    def row_fields(self) -> dict[str, Any]:
        """The row's device (the placement's label), target and runner."""
        p = self.placement
        return {"device": p.label, "target": p.target, "runner": p.runner_name}

    def guarded(self, blobs: Mapping[str, bytes] | None, progress: EventSink | None, cancel: CancelToken | None,
                work: Callable[[Runner, Path], ResultT], ok: Callable[[ResultT, float], RowT]) -> RowT:
        """``work(runner, model)`` on the placement's runner under its deadline, as the device's row (any failure:
        an error row, logged)."""
        return guarded(self, self.placement.label, _runner(self.placement, self.deadline_s, cancel),
                       lambda runner: work(runner, self.model.locate(blobs)), ok,
                       log=lambda message: _log(progress, message))

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> RowT:
        """The device's row when it could not run (each job's own row type)."""
        raise NotImplementedError


@dataclass(frozen=True)
class QualifyJob(OnPlacement[QualifyRow]):
    """The timed (and frame-paced) runs of the qualified model on one placement (a fleet job).

    Attributes:
        placement: the device (its runner is built where the job runs).
        model: the qualified model, by content hash (a shared path, or bytes through Ray's object store).
        timed: the timed run's settings (raw samples kept).
        paced: the frame-paced run's settings (None without a deadline_miss gate).
        deadline_s: how long it may take; past it the device's SSH session is aborted (a ``deadline`` row).
        model_label: the model's path as the host names it (reported whatever the transport).
        targets_dirs: extra target directories.
    """

    placement: Placement
    model: ModelRef
    timed: MeasureSettings
    paced: MeasureSettings | None
    deadline_s: float
    model_label: str = ""
    targets_dirs: Sequence[Path] = ()

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> QualifyRow:
        return QualifyRow(**self.row_fields(), status="error", error=message, error_kind=kind,
                          seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> QualifyRow:
        def ok(runs: tuple[BenchResult, BenchResult | None], seconds: float) -> QualifyRow:
            return QualifyRow(**self.row_fields(), status="ok", seconds=seconds, bench=self._host_path(runs[0]),
                              paced=self._host_path(runs[1]))

        return self.guarded(blobs, progress, cancel, lambda runner, model: self._measure(runner, model, progress), ok)

    def _measure(self, runner: Runner, model: Path, progress: EventSink | None,
                 ) -> tuple[BenchResult, BenchResult | None]:
        from ..bench import run_benchmark  # the heavy stack loads on the worker, once

        p = self.placement
        _log(progress, f"{p.label}: timed run of {model.name} on {p.target} ({p.runner_name})")
        bench = run_benchmark(model, self.timed, target=p.target, runner=runner, progress=progress,
                              targets_dirs=self.targets_dirs)
        if self.paced is None:
            return bench, None
        _log(progress, f"{p.label}: frame-paced run, {self.paced.iterations} frames at "
                       f"{self.paced.pacing_fps or 0:g} FPS")
        paced = run_benchmark(model, self.paced, target=p.target, runner=runner, progress=progress,
                              targets_dirs=self.targets_dirs)
        return bench, paced

    def _host_path(self, result: BenchResult | None) -> BenchResult | None:
        """The result with the model under its host path (a worker may have run a copy from the object store)."""
        if result is None or not self.model_label:
            return result
        return result.model_copy(update={"model": result.model.model_copy(update={"path": self.model_label})})


@contextlib.contextmanager
def _runner(p: Placement, deadline_s: float, cancel: CancelToken | None) -> Iterator[Session]:
    """The placement's fresh runner, closed afterwards; an SSH device's under a watchdog that aborts its session
    at the deadline (a local run is bounded by the agent's own watchdog and the executor's grace)."""
    if p.device is None:
        runner = p.local_runner()
        try:
            yield Session(runner, None, lambda: True)
        finally:
            runner.close()
        return
    with watched(p.device.runner(), deadline_s, cancel) as session:
        yield session


def _log(progress: EventSink | None, message: str) -> None:
    if progress is not None:
        progress({"event": LOG_EVENT, "message": message})


def device_events(progress: Callable[[dict[str, Any]], None] | None,
                  log: Callable[[str], None]) -> Callable[[str, dict[str, Any]], None]:
    """A fleet's ``(device, event)`` sink: a job's log lines to ``log``, the rest to qualify's one-argument progress
    (the device named in the event)."""
    sink = progress

    def events(device: str, event: dict[str, Any]) -> None:
        if event.get("event") == LOG_EVENT:
            log(str(event.get("message", "")))
        elif sink is not None:
            sink({**event, "device": device})

    return events
