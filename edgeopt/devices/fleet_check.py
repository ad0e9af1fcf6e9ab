"""``devices check`` on many devices at once: one :class:`CheckJob` per device, on any executor."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..fleet.devices import FleetDevice, resolve_devices
from ..fleet.executors import DeviceEvents, Executor
from ..fleet.jobs import CancelToken, EventSink, Watchdog, classify
from ..fleet.result import DeviceOutcome, ErrorKind
from ..fleet.runner import FleetRunner
from ..settings import RemoteSpec
from ..targets import load_registry
from .check import DeviceReport, check_device


class CheckRow(DeviceOutcome):
    """One device of a fleet check."""

    report: DeviceReport | None = Field(default=None, description="What the probe found (null on error).")

    @property
    def ready(self) -> bool:
        return self.report is not None and self.report.ready


@dataclass(frozen=True)
class CheckJob:
    """``check_device`` for one device, against its target (or ``target``)."""

    device: FleetDevice
    deadline_s: float = 300.0
    target: str | None = None
    targets_dirs: Sequence[Path] = ()

    def model_ref(self) -> None:
        return None

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> CheckRow:
        d = self.device
        return CheckRow(device=d.name, target=self.target or d.target, runner=f"ssh:{d.address.label()}",
                        tags=list(d.tags), status="error", error=message, error_kind=kind, seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> CheckRow:
        started = time.perf_counter()
        runner = self.device.runner()
        with Watchdog(runner, self.deadline_s, cancel) as dog:
            try:
                tgt = load_registry(extra_dirs=self.targets_dirs).get(self.target or self.device.target)
                report = check_device(runner, device=self.device.name, target=tgt)
            except Exception as exc:  # this device's problem is this device's row
                kind, message = classify(exc, self.device.name, connected=runner.connected, fired=dog.fired,
                                         deadline_s=self.deadline_s)
                return self.error_row(kind, message, time.perf_counter() - started)
        d = self.device
        return CheckRow(device=d.name, target=tgt.name, runner=runner.name, tags=list(d.tags), status="ok",
                        seconds=round(time.perf_counter() - started, 3), report=report)


def fleet_check(
    devices: str | Sequence[str],
    *,
    remote: RemoteSpec | None = None,
    target: str | None = None,
    targets_dirs: Sequence[Path] = (),
    jobs: int | None = None,
    executor: str | Executor = "local",
    deadline_s: float = 300.0,
    progress: DeviceEvents | None = None,
    **options: object,
) -> list[CheckRow]:
    """Probe every selected device in parallel (what ``devices check --devices`` runs); rows in inventory order.

    ``remote`` (and RemoteSpec keywords in ``options``: ``inventory``, ``key``, ``known_hosts``, ``timeouts``, ...)
    say how every device is reached.

    Raises:
        InputError: bad inventory or a selection that matches nothing.
    """
    selected = resolve_devices(devices, remote, **options)
    fleet = FleetRunner(selected, jobs=jobs, executor=executor, progress=progress)
    rows = fleet.map(lambda d: CheckJob(d, deadline_s, target, tuple(targets_dirs)))
    return [r for r in rows if isinstance(r, CheckRow)]
