"""Qualify's devices as fleet jobs: each placement's measurements, self-contained, on any executor.

The spec's host-side work (build, optimize, retention) is done before; then one :class:`QualifyJob` per placement
runs on the fleet's executor (:func:`edgeopt.fleet.runner.run_jobs`: threads here, or Ray tasks holding the
device's ``edgeopt-device:LABEL`` resource) with bounded concurrency (``--jobs``) and a deadline per device. A job
is plain picklable data in (the placement, the qualified model by content hash, the kind's :class:`Measurement`
with its settings) and the device's measured runs out (:class:`MeasuredRow`); the gates, the baseline comparison,
the history record and the reports are the driver's (:mod:`.flow`), so the result is the same under every executor
and for every kind of model.

Past its deadline a job's watchdog aborts the device's SSH session (as ``fleet bench``'s jobs do): the agent on
the device sees its session go, releases the device lock and exits, and the row is a ``deadline`` error. A device
that cannot run (unreachable, killed, past its deadline) becomes one error row; the others keep their verdicts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..fleet.artifacts import ModelRef
from ..fleet.jobs import CancelToken, EventSink, Session, guarded, watched
from ..fleet.result import DeviceOutcome, ErrorKind
from ..runners import Runner
from .placement import Placement

# Beyond a timed run's watchdog (max_duration_s, twice with a deadline_miss run): connect, upload, lock wait, load.
DEADLINE_MARGIN_S = 300.0
# A job's log line travels as this event (so it reaches the driver from a Ray worker too).
LOG_EVENT = "log"


class MeasuredRow(DeviceOutcome):
    """One device's measured runs as a fleet row (gates and history are the driver's)."""

    runs: tuple[Any, ...] = Field(default=(), description="The kind's results, the judged one first (a one-pass "
                                  "model's timed run, raw samples kept, then its frame-paced one); empty on error.")


class Measurement:
    """How a kind measures a model on a device (plain picklable data: it travels to the executor's worker).

    A kind's plan (:class:`~.flow.KindPlan`) gives one per placement; the job runs it on the placement's runner.
    """

    def __call__(self, runner: Runner, model: Path, p: Placement, progress: EventSink | None,
                 targets_dirs: Sequence[Path]) -> tuple[Any, ...]:
        """The device's results, the judged one first (its model path as the agent saw it)."""
        raise NotImplementedError

    def labelled(self, result: Any, path: str) -> Any:
        """``result`` with the model under ``path`` (a worker may have run a copy from the object store)."""
        return result.model_copy(update={"model": result.model.model_copy(update={"path": path})})


@dataclass(frozen=True)
class QualifyJob:
    """A kind's measurement of the qualified model on one placement (a fleet job).

    Attributes:
        placement: the device (its runner is built where the job runs).
        model: the qualified model, by content hash (a shared path, or bytes through Ray's object store).
        measure: the kind's measurement (settings inside).
        deadline_s: how long it may take; past it the device's SSH session is aborted (a ``deadline`` row).
        model_label: the model's path as the host names it (reported whatever the transport).
        targets_dirs: extra target directories.
    """

    placement: Placement
    model: ModelRef
    measure: Measurement
    deadline_s: float
    model_label: str = ""
    targets_dirs: Sequence[Path] = ()

    @property
    def device(self) -> Placement:
        return self.placement

    def model_ref(self) -> ModelRef:
        return self.model

    def _fields(self) -> dict[str, Any]:
        p = self.placement
        return {"device": p.label, "target": p.target, "runner": p.runner_name}

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> MeasuredRow:
        """The device's row when it could not run."""
        return MeasuredRow(**self._fields(), status="error", error=message, error_kind=kind,
                           seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> MeasuredRow:
        def work(runner: Runner) -> tuple[Any, ...]:
            return self.measure(runner, self.model.locate(blobs), self.placement, progress, self.targets_dirs)

        def ok(runs: tuple[Any, ...], seconds: float) -> MeasuredRow:
            if self.model_label:
                runs = tuple(self.measure.labelled(r, self.model_label) if r is not None else None for r in runs)
            return MeasuredRow(**self._fields(), status="ok", seconds=seconds, runs=runs)

        return guarded(self, self.placement.label, _runner(self.placement, self.deadline_s, cancel), work, ok,
                       log=lambda message: log(progress, message))


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


def log(progress: EventSink | None, message: str) -> None:
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
