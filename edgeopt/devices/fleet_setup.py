"""``devices setup`` on many devices at once: one :class:`SetupJob` per device on the local executor.

Setup writes the inventory's sidecar on this host, so it always runs here (threads), never on Ray.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from ..fleet.devices import FleetDevice
from ..fleet.executors import DeviceEvents
from ..fleet.jobs import CancelToken, EventSink, classify
from ..fleet.result import DeviceOutcome, ErrorKind
from ..fleet.runner import FleetRunner
from ..names import RuntimeName
from ..runners.ssh_session import SshTimeouts
from ..settings import RemoteSpec
from . import load_inventory
from .schema import Device
from .select import select_devices
from .setup import SetupReport, setup_device


class SetupRow(DeviceOutcome):
    """One device of a fleet setup."""

    report: SetupReport | None = Field(default=None, description="What setup found and did (null on error).")


@dataclass(frozen=True)
class SetupJob:
    """``setup_device`` for one device.

    Attributes:
        inv_device: the inventory device as written (its ``python`` is the venv's base interpreter).
        inventory: the inventory file (its sidecar records the venv).
        options: ``setup_device``'s provisioning keywords (runtimes, offline, wheels, targets_dirs).
        remote: known_hosts, host-key policy, SSH step deadlines and device cache size.
        deadline_s: how long the executor waits for it.
    """

    inv_device: Device
    inventory: Path
    options: Mapping[str, object]
    remote: RemoteSpec = field(default_factory=RemoteSpec)
    deadline_s: float = 3600.0

    @property
    def device(self) -> FleetDevice:
        d, r = self.inv_device, self.remote
        return FleetDevice(name=d.name, target=d.target, address=d.address(), tags=tuple(d.tags),
                           known_hosts=r.known_hosts.expanduser() if r.known_hosts is not None else None,
                           accept_new_host_key=r.accept_new_host_key, timeouts=r.timeouts,
                           cache_limit_bytes=int(r.device_cache_mb * 1024 * 1024))

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
        dev = self.device
        try:
            report = setup_device(self.inv_device, inventory=self.inventory, known_hosts=dev.known_hosts,
                                  accept_new_host_key=dev.accept_new_host_key, timeouts=dev.timeouts,
                                  cache_limit_bytes=dev.cache_limit_bytes, log=say,
                                  **self.options)  # type: ignore[arg-type]
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
    remote: RemoteSpec | None = None,
) -> list[SetupRow]:
    """Set up every selected device in parallel; one row per device in inventory order.

    Args:
        remote: inventory, known_hosts, host-key policy, SSH step deadlines (``--ssh-timeout``) and device cache
            size (``--device-cache-mb``) for every device; when given it replaces ``inventory``, ``known_hosts``,
            ``accept_new_host_key`` and ``timeouts`` (``host``, ``device``, ``key`` and ``python`` are not used:
            setup reaches inventory devices with their own key and base interpreter).

    Raises:
        InputError: bad inventory or a selection that matches nothing.
    """
    spec = remote or RemoteSpec(inventory=Path(inventory) if inventory is not None else None, known_hosts=known_hosts,
                                accept_new_host_key=accept_new_host_key, timeouts=timeouts)
    inv = load_inventory(spec.inventory, setup_state=False)
    assert inv.source is not None
    options = {"runtimes": runtimes, "offline": offline, "wheels": wheels, "targets_dirs": tuple(targets_dirs)}
    by_name = {d.name: d for d in select_devices(inv, selection)}
    jobs_list = {name: SetupJob(d, inv.source, options, spec) for name, d in by_name.items()}
    fleet = FleetRunner([j.device for j in jobs_list.values()], jobs=jobs, executor="local", progress=progress)
    rows = fleet.map(lambda dev: jobs_list[dev.name])
    return [r for r in rows if isinstance(r, SetupRow)]
