"""One fleet-sweep driver for every model kind: the host side once, one measuring job per device, the host's finish.

A kind brings a :class:`FleetSweepPlan`: its result types (:class:`~.result.FleetSweepKind`), its host side (the
bundle every device job reads, by content hash), how one device measures (a picklable step the generic
:class:`FleetSweepJob` runs on the device's runner), how the host finishes a device's row, and its result's own
header fields. The driver does the rest, the same for every kind: the selection, each device's deadline, the
executor session, the jobs (a failure costs only its own row), the timing and the fleet's result. The one-pass
sweep's plan is in :mod:`.api`, the LLM sweep's in :mod:`edgeopt.llm.sweep_fleet`.

The host side and the device jobs run in one executor session that offers every selected device's resource
(:meth:`Executor.session`): under Ray the cluster is joined, or started with an ``edgeopt-device:NAME`` resource
per device, before the host side runs, so a missing Ray or a cluster that cannot be joined fails the run before
minutes of building; the host side's CPU tasks (the ONNX sweep's recipes) run on it; and each device job then
holds its device's resource for as long as it measures (:class:`~edgeopt.fleet.executors.ray_exec.RayExecutor`),
so two jobs never measure one device at once. The local executor has nothing to keep up.
"""

from __future__ import annotations

import datetime as _dt
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..._version import __version__
from ...errors import InputError
from ...fleet.artifacts import ModelRef
from ...fleet.devices import FleetDevice, fleet_selection, resolve_devices
from ...fleet.executors import DeviceEvents, Executor
from ...fleet.jobs import CancelToken, DeviceJob, EventSink, OnFleetDevice, _now, guarded, watched
from ...fleet.result import DeviceOutcome, ErrorKind
from ...fleet.runner import FleetRunner
from ...runners import Runner
from ...settings import RemoteSpec
from .result import FleetSweepKind, KindFleetSweepResult, KindFleetSweepRow

B = TypeVar("B", bound="HostSide")
R = TypeVar("R", bound=DeviceOutcome)
Row = KindFleetSweepRow[Any]

# Where a worker that does not share the host's paths keeps a device's sweep output: <tmp>/<this>/<key>/<device>
WORKER_OUT_DIRNAME = "edgeopt-fleet-sweeps"


class HostSide(Protocol):
    """What a kind's host side returns: at least the bundle (by content hash) and how long it took."""

    @property
    def ref(self) -> ModelRef: ...

    @property
    def seconds(self) -> float: ...


@dataclass(frozen=True)
class OnDevice:
    """Where a kind's measuring step runs, as it sees it.

    Attributes:
        device: the inventory name (the deployment's ``measured.device``).
        target: the device's target.
        runner_name: the row's runner (``ssh:user@host:port``).
        root: the bundle on this worker.
        out: the device's output directory on this worker (the host's own where the paths are shared).
        shared: whether this worker shares the host's paths.
        progress: the fleet's progress sink for this device (None: none).
    """

    device: str
    target: str
    runner_name: str
    root: Path
    out: Path
    shared: bool
    progress: EventSink | None = None

    def phase(self, text: str) -> None:
        """One progress line for this device (80 characters at most)."""
        if self.progress is not None:
            self.progress({"event": "phase", "phase": text[:80]})


# A kind's measuring step on one device: (where it runs, the device's runner) -> the ok row's fields (``result``,
# ``recommendation``, ``level_runs``, ...). A picklable object: it travels to the worker with the job.
DeviceMeasure = Callable[[OnDevice, Runner], dict[str, Any]]


@dataclass(frozen=True)
class FleetSweepJob(OnFleetDevice):
    """One device's part of a fleet sweep, for every kind: the kind's measuring step on the device's own runner,
    under its deadline (the watchdog aborts its SSH session); whatever goes wrong comes back as its row.

    Attributes:
        device: the device (its runner is built where the job runs).
        model: the host side's bundle, by content hash.
        target: the device's target.
        out_dir: the device's output directory on the host.
        measure: the kind's measuring step.
        row: the kind's row type.
        deadline_s: the device's deadline from the moment the job starts.
    """

    device: FleetDevice
    model: ModelRef
    target: str | None
    out_dir: Path
    measure: DeviceMeasure
    row: type[Row]
    deadline_s: float = 3600.0

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> Row:
        return self.row(**self.row_fields(), status="error", error=message, error_kind=kind, seconds=round(seconds, 3))

    def _on(self, blobs: Mapping[str, bytes] | None, progress: EventSink | None) -> OnDevice:
        shared = blobs is None
        out = self.out_dir if shared else (Path(tempfile.gettempdir()) / WORKER_OUT_DIRNAME / self.model.key[:16]
                                           / self.device.name)
        fields = self.row_fields()
        return OnDevice(self.device.name, fields["target"], fields["runner"], self.model.locate(blobs), out, shared,
                        progress)

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> Row:
        started_at = _now()
        on = self._on(blobs, progress)
        row = guarded(self, self.device.name, watched(self.device.runner(), self.deadline_s, cancel),
                      lambda runner: self.measure(on, runner),
                      lambda fields, seconds: self.row(**self.row_fields(), status="ok", seconds=seconds, **fields))
        return row.model_copy(update={"started_at": started_at})


class FleetSweepPlan(ABC, Generic[B]):
    """A kind's part of a fleet sweep (see the module's docstring); ``out`` is the fleet's output directory."""

    kind: ClassVar[FleetSweepKind[Any, Any]]
    default_deadline_s: ClassVar[float]  # beyond the levels' own time: connect, upload, lock waits
    out: Path

    @abstractmethod
    def host_side(self, fleet: FleetRunner, targets: list[str]) -> B:
        """The bundle, built once for every device (``targets``: their distinct targets)."""

    @abstractmethod
    def measure(self, host: B) -> DeviceMeasure:
        """The measuring step every device job runs on the bundle."""

    @abstractmethod
    def finish(self, host: B, row: Row, fleet_id: str) -> Row:
        """A device's row as the host keeps it (its files under ``out/devices/<name>``, its history runs)."""

    @abstractmethod
    def fields(self, host: B, rows: list[Row]) -> dict[str, Any]:
        """The result's ``model``, ``model_sha256``, ``warnings`` and the kind's own header fields."""


def device_deadline(deadline_s: float | None, default_s: float) -> float:
    """Each device's deadline (``default_s`` when not given).

    Raises:
        InputError: it is not positive.
    """
    deadline = float(deadline_s) if deadline_s is not None else default_s
    if deadline <= 0:
        raise InputError(f"--deadline {deadline:g}: give each device a positive number of seconds")
    return deadline


def sweep_devices(fleet: FleetRunner, host_side: Callable[[], B], make_job: Callable[[FleetDevice, B], DeviceJob],
                  row_type: type[R]) -> tuple[B, list[R]]:
    """``host_side()`` once, then ``make_job(device, its result)`` on every device, in one executor session.

    Returns:
        The host side's result and the rows (``row_type``, in device order).

    Raises:
        InputError: every device refused the sweep's input (the same bad input everywhere is the caller's
            mistake, exit 2, not a fleet of failed devices).
    """
    with fleet.executor.session({d.resource: 1.0 for d in fleet.devices}):
        bundle = host_side()
        raw = fleet.map(lambda device: make_job(device, bundle))
    rows = [r for r in raw if isinstance(r, row_type)]
    if rows and all(r.error_kind == "input" for r in rows):
        raise InputError(str(rows[0].error))
    return bundle, rows


def run_fleet_sweep(plan: FleetSweepPlan[B], *, devices: str | Sequence[str | FleetDevice], jobs: int | None = None,
                    executor: str | Executor = "local", deadline_s: float | None = None,
                    remote: RemoteSpec | None = None, target: str | None = None,
                    progress: DeviceEvents | None = None, **remote_options: Any) -> KindFleetSweepResult[Any, Any]:
    """Sweep on every selected device: ``plan``'s host side once, then its measuring step on every device in
    parallel, each row finished here; the fleet's result, also in ``<out>/fleet-sweep.json``.

    Args: as for :func:`edgeopt.sweep.fleet.fleet_sweep`.

    Raises:
        InputError: bad selection, deadline or input (exit 2).
    """
    selected = resolve_devices(devices, remote, **remote_options)
    deadline = device_deadline(deadline_s, plan.default_deadline_s)
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    targets = list(dict.fromkeys(target or d.target for d in selected))
    fleet_id = uuid.uuid4().hex[:12]
    started, started_at = time.perf_counter(), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    host, rows = sweep_devices(
        fleet, lambda: plan.host_side(fleet, targets),
        lambda d, h: FleetSweepJob(d, h.ref, target or d.target, plan.out / "devices" / d.name, plan.measure(h),
                                   plan.kind.row, deadline), plan.kind.row)
    rows = [plan.finish(host, r, fleet_id) for r in rows]
    return plan.kind.write(
        rows, plan.out, edgeopt_version=__version__, fleet_id=fleet_id, selection=fleet_selection(devices),
        executor=fleet.executor.name, jobs=fleet.jobs, deadline_s=deadline, started_at=started_at,
        seconds=round(time.perf_counter() - started, 3), host_seconds=host.seconds, **plan.fields(host, rows))
