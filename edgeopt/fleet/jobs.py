"""One job per device: plain, picklable callables that run the same under every executor.

A job carries only data (the device's address, the model's :class:`ModelRef`, the benchmark options) and builds
the device's own runner where it runs. It never raises for a device problem: whatever happens comes back as
one row (``status="error"`` with a kind and a one-line message), so a dead board costs only its own row. Its
deadline is enforced from inside, by a watchdog that aborts the runner's SSH session; the agent on the device
sees its session go away, ends itself and releases the device lock.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar

from ..devices.dependency import name_device_in_hint
from ..errors import EdgeoptError, InputError, RunnerError, RuntimeUnavailableError, TrustError
from ..metrics.result import BenchResult
from ..runners import Runner
from ..settings import MeasureSettings
from .artifacts import ModelRef
from .devices import AbortableSshRunner, FleetDevice
from .result import DeviceOutcome, ErrorKind, FleetRow

EventSink = Callable[[dict[str, Any]], None]
RowT = TypeVar("RowT", bound=DeviceOutcome)
RowT_co = TypeVar("RowT_co", bound=DeviceOutcome, covariant=True)
ResultT = TypeVar("ResultT")


class CancelToken(Protocol):
    """Anything with ``is_set()`` (a ``threading.Event``): set it to stop a running job early."""

    def is_set(self) -> bool: ...


class DeviceSlot(Protocol):
    """What an executor needs of a job's device: its name (progress, rows) and its Ray resource.

    A :class:`FleetDevice`; or a qualify placement's slot (any runner the spec placed).
    """

    @property
    def name(self) -> str: ...

    @property
    def resource(self) -> str: ...


class DeviceJob(Protocol):
    """What an executor runs: one device's work, returning its row."""

    @property
    def device(self) -> DeviceSlot: ...

    @property
    def deadline_s(self) -> float: ...

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> DeviceOutcome: ...

    def model_ref(self) -> ModelRef | None: ...

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> DeviceOutcome: ...


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class Watchdog:
    """Aborts ``runner`` when ``deadline_s`` passes or ``cancel`` is set; ``fired`` says which happened."""

    def __init__(self, runner: AbortableSshRunner, deadline_s: float, cancel: CancelToken | None) -> None:
        self.runner, self.deadline_s, self.cancel = runner, deadline_s, cancel
        self.fired: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="edgeopt-fleet-watchdog", daemon=True)

    def _watch(self) -> None:
        deadline = time.monotonic() + self.deadline_s
        while not self._done.wait(0.2):
            if self.cancel is not None and self.cancel.is_set():
                self.fired = "cancel"
            elif time.monotonic() >= deadline:
                self.fired = "deadline"
            if self.fired:
                self.runner.abort()
                return

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=2)


def classify(exc: BaseException, device: str, *, connected: bool, fired: str | None = None,
             deadline_s: float = 0.0) -> tuple[ErrorKind, str]:
    """An exception from a device's job as (kind, one-line message).

    Args:
        exc: what the job raised.
        device: the inventory name (put into a "run edgeopt devices setup" hint).
        connected: whether the job ever got an SSH connection (else a runner error means "unreachable").
        fired: ``deadline`` or ``cancel`` when the job's watchdog stopped it.
        deadline_s: the job's deadline, for the message.
    """
    text = " ".join(str(exc).split()) or type(exc).__name__
    if fired == "deadline":
        return "deadline", f"stopped at the device deadline of {deadline_s:g} s ({text}); raise --deadline"
    if fired == "cancel":
        return "device", f"cancelled ({text})"
    if isinstance(exc, TrustError):  # the user's trust decision (host key), not a device fault
        return "trust", text
    if isinstance(exc, RuntimeUnavailableError):
        return "dependency", name_device_in_hint(text, device)
    if isinstance(exc, RunnerError):
        return ("device" if connected else "unreachable"), text
    if isinstance(exc, InputError):
        return "input", text
    if isinstance(exc, EdgeoptError):
        return "device", text
    return "internal", f"{type(exc).__name__}: {text}"


class Session(NamedTuple):
    """A job's runner while it works: its watchdog (None for a local run) and whether it ever connected."""

    runner: Runner
    dog: Watchdog | None
    connected: Callable[[], bool]


@contextlib.contextmanager
def watched(runner: AbortableSshRunner, deadline_s: float, cancel: CancelToken | None) -> Iterator[Session]:
    """``runner`` under a watchdog that aborts its SSH session at the deadline (or on cancel), closed afterwards."""
    try:
        with Watchdog(runner, deadline_s, cancel) as dog:
            yield Session(runner, dog, lambda: runner.connected)
    finally:
        runner.close()


class ErrorRows(Protocol[RowT_co]):
    """What :func:`guarded` needs of a job: its deadline and how it writes an error row."""

    @property
    def deadline_s(self) -> float: ...

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> RowT_co: ...


def guarded(job: ErrorRows[RowT], device: str, session: AbstractContextManager[Session],
            work: Callable[[Runner], ResultT], ok: Callable[[ResultT, float], RowT],
            log: Callable[[str], None] | None = None) -> RowT:
    """``work`` on the session's runner as the device's row: ``ok(result, seconds)``, or, whatever it raised, the
    job's error row of :func:`classify`'s kind (a device's problem is its own row, never another device's).

    Why one place: every fleet job (bench, LLM bench, qualify of any kind) must time, classify and report a
    failing device alike, so a dead board reads the same in every command.
    """
    started = time.perf_counter()
    with session as s:
        try:
            result = work(s.runner)
        except Exception as exc:  # every failure of this device becomes its row, never another device's
            kind, message = classify(exc, device, connected=s.connected(), fired=s.dog.fired if s.dog else None,
                                     deadline_s=job.deadline_s)
            if log is not None:
                log(f"{device}: {kind} error: {message}")
            return job.error_row(kind, message, time.perf_counter() - started)
    return ok(result, round(time.perf_counter() - started, 3))


class OnFleetDevice:
    """What the jobs on an inventory device (:class:`BenchJob`, the LLM bench's) share: the model they carry and
    the fields their rows start with."""

    device: FleetDevice
    model: ModelRef
    target: str | None

    def model_ref(self) -> ModelRef:
        return self.model

    def row_fields(self) -> dict[str, Any]:
        """The row's device, target, runner and tags."""
        return {"device": self.device.name, "target": self.target or self.device.target,
                "runner": f"ssh:{self.device.address.label()}", "tags": list(self.device.tags)}


@dataclass(frozen=True)
class BenchJob(OnFleetDevice):
    """``edgeopt.benchmark`` of one model on one device.

    Attributes:
        device: the device (its runner is built where the job runs).
        model: the model, by content hash.
        settings: how to measure and judge (the same for every device).
        deadline_s: the device's deadline, from the moment the job starts.
        target: target override (None: the device's own).
        targets_dirs: extra target directories (as for ``benchmark``).
    """

    device: FleetDevice
    model: ModelRef
    settings: MeasureSettings = field(default_factory=MeasureSettings)
    deadline_s: float = 900.0
    target: str | None = None
    targets_dirs: Sequence[Path] = ()

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> FleetRow:
        return FleetRow(**self.row_fields(), status="error", error=message, error_kind=kind, seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> FleetRow:
        from ..bench import run_benchmark  # the heavy stack loads on the worker, once

        started_at = _now()

        def ok(result: BenchResult, seconds: float) -> FleetRow:
            if blobs is not None:  # a copy from the object store: report the model under its host path
                result = result.model_copy(update={"model": result.model.model_copy(
                    update={"path": str(self.model.path)})})
            return FleetRow(**self.row_fields(), status="ok", seconds=seconds, result=result)

        row = guarded(self, self.device.name, watched(self.device.runner(), self.deadline_s, cancel),
                      lambda runner: run_benchmark(self.model.locate(blobs), self.settings, runner=runner,
                                                   progress=progress, target=self.target or self.device.target,
                                                   targets_dirs=self.targets_dirs), ok)
        return row.model_copy(update={"started_at": started_at})
