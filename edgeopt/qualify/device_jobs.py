"""Qualify's devices as fleet jobs: each placement's runs, gates and history record, in parallel.

The spec's host-side work (build, optimize, retention) is done before; then one :class:`QualifyJob` per placement
runs on the fleet's executor (:func:`edgeopt.fleet.runner.run_jobs`) with bounded concurrency (``--jobs``) and a
deadline per device. A device that cannot run (unreachable, killed, past its deadline) becomes one error
:class:`~edgeopt.qualify.result.DeviceResult` whose gates are all errors; the others keep their verdicts.

The jobs hold the placements' runners and the history store, so they run on the local executor (threads in this
process) only; ``--executor ray`` is for ``fleet bench`` / ``fleet check`` (docs/fleet.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from ..errors import InputError
from ..fleet.jobs import CancelToken, EventSink, classify
from ..fleet.result import DeviceOutcome, ErrorKind
from .placement import Placement
from .result import DeviceResult

# One device's qualification: its placement and a progress sink -> its result (raises for a device problem).
RunDevice = Callable[[Placement, EventSink | None], DeviceResult]
# Beyond a timed run's watchdog (max_duration_s, twice with a deadline_miss run): connect, upload, lock wait, load.
DEADLINE_MARGIN_S = 300.0
EXECUTORS = ("local",)


class QualifyRow(DeviceOutcome):
    """One device's qualification as a fleet row."""

    result: DeviceResult | None = Field(default=None, description="The device's qualification (null on error).")


@dataclass(frozen=True)
class QualifyJob:
    """Qualify on one placement (a fleet job; see the module docstring).

    Attributes:
        placement: the device (its runner, label and target).
        run_device: measures, judges and records it.
        deadline_s: how long it may take; beyond it (plus the executor's grace) its row is a deadline error.
    """

    placement: Placement
    run_device: RunDevice
    deadline_s: float

    @property
    def device(self) -> Placement:
        return self.placement

    def model_ref(self) -> None:
        return None

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> QualifyRow:
        p = self.placement
        return QualifyRow(device=p.label, target=p.target, runner=p.runner.name, status="error", error=message,
                          error_kind=kind, seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> QualifyRow:
        started = time.perf_counter()
        p = self.placement
        try:
            result = self.run_device(p, progress)
        except Exception as exc:  # this device's problem is this device's row, never another's
            kind, message = classify(exc, p.label, connected=True)
            return self.error_row(kind, message, time.perf_counter() - started)
        return QualifyRow(device=p.label, target=p.target, runner=p.runner.name, status="ok",
                          seconds=round(time.perf_counter() - started, 3), result=result)


def check_executor(executor: str) -> str:
    """``local``; anything else is a usage error naming where Ray applies.

    Raises:
        InputError: not ``local``.
    """
    if executor not in EXECUTORS:
        raise InputError(f"--executor {executor}: qualify runs its devices on the local executor (threads here); "
                         "Ray runs fleet bench/check (edgeopt fleet bench --executor ray)")
    return executor


def device_events(progress: Callable[[dict[str, Any]], None] | None) -> Callable[[str, dict[str, Any]], None] | None:
    """A fleet's ``(device, event)`` sink feeding qualify's one-argument progress (the device named in the event)."""
    if progress is None:
        return None
    sink = progress
    return lambda device, event: sink({**event, "device": device})
