"""``devices setup`` on many devices at once: one :class:`SetupJob` per device on the local executor.

Setup writes the inventory's sidecar on this host, so it always runs here (threads), never on Ray.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..devices import load_inventory
from ..devices.schema import Device
from ..devices.select import select_devices
from ..devices.setup import SetupReport, setup_device
from ..enums import RuntimeName
from ..runners.ssh_session import SshTimeouts
from .devices import FleetDevice
from .executors import DeviceEvents
from .jobs import CancelToken, EventSink, classify
from .result import DeviceOutcome, ErrorKind
from .runner import FleetRunner


class SetupRow(DeviceOutcome):
    """One device of a fleet setup."""

    report: SetupReport | None = Field(default=None, description="What setup found and did (null on error).")


@dataclass(frozen=True)
class SetupJob:
    """``setup_device`` for one device."""

    inv_device: Device
    inventory: Path
    options: Mapping[str, object]
    known_hosts: Path | None = None
    accept_new_host_key: bool = False
    timeouts: SshTimeouts | None = None
    deadline_s: float = 3600.0

    @property
    def device(self) -> FleetDevice:
        d = self.inv_device
        return FleetDevice(name=d.name, target=d.target, address=d.address(), tags=tuple(d.tags),
                           known_hosts=self.known_hosts, accept_new_host_key=self.accept_new_host_key,
                           timeouts=self.timeouts)

    def model_ref(self) -> None:
        return None

    def error_row(self, kind: ErrorKind, message: str, seconds: float) -> SetupRow:
        d = self.inv_device
        return SetupRow(device=d.name, target=d.target, runner=f"ssh:{d.label()}", tags=list(d.tags), status="error",
                        error=message, error_kind=kind, seconds=round(seconds, 3))

    def __call__(self, blobs: Mapping[str, bytes] | None = None, progress: EventSink | None = None,
                 cancel: CancelToken | None = None) -> SetupRow:
        started = time.perf_counter()
        say: Callable[[str], None] = (lambda m: progress({"event": "phase", "phase": m})) if progress else print
        try:
            report = setup_device(self.inv_device, inventory=self.inventory, known_hosts=self.known_hosts,
                                  accept_new_host_key=self.accept_new_host_key, timeouts=self.timeouts,
                                  log=say, **self.options)  # type: ignore[arg-type]
        except Exception as exc:  # this device's problem is this device's row
            # setup's first step is the connection: a failure there reads "connecting to <device> ..."
            kind, message = classify(exc, self.inv_device.name, connected=not str(exc).startswith("connecting to"))
            return self.error_row(kind, message, time.perf_counter() - started)
        d = self.inv_device
        return SetupRow(device=d.name, target=d.target, runner=f"ssh:{d.label()}", tags=list(d.tags), status="ok",
                        seconds=round(time.perf_counter() - started, 3), report=report)


def setup_fleet(
    selection: str | Sequence[str],
    *,
    inventory: str | Path | None = None,
    runtimes: Sequence[RuntimeName] | None = None,
    offline: bool = False,
    wheels: Path | None = None,
    known_hosts: Path | None = None,
    accept_new_host_key: bool = False,
    timeouts: SshTimeouts | None = None,
    targets_dirs: Sequence[Path] = (),
    jobs: int | None = None,
    progress: DeviceEvents | None = None,
) -> list[SetupRow]:
    """Set up every selected device in parallel; one row per device in inventory order.

    Raises:
        InputError: bad inventory or a selection that matches nothing.
    """
    inv = load_inventory(Path(inventory) if inventory is not None else None, setup_state=False)
    assert inv.source is not None
    options = {"runtimes": runtimes, "offline": offline, "wheels": wheels, "targets_dirs": tuple(targets_dirs)}
    by_name = {d.name: d for d in select_devices(inv, selection)}
    jobs_list = {name: SetupJob(d, inv.source, options, known_hosts, accept_new_host_key, timeouts)
                 for name, d in by_name.items()}
    fleet = FleetRunner([j.device for j in jobs_list.values()], jobs=jobs, executor="local", progress=progress)
    rows = fleet.map(lambda dev: jobs_list[dev.name])
    return [r for r in rows if isinstance(r, SetupRow)]
