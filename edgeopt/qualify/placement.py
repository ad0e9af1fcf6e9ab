"""Where each spec target runs: the local runner, an inventory device, an SSH host, or each device of a ``devices:``
selection (tags, globs), resolved before any work so a typo in a device, selection or target name is a spec error
(exit 2) naming the file and key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..devices import load_inventory
from ..devices.select import select_devices
from ..errors import InputError
from ..fleet.devices import FleetDevice
from ..runners import Runner
from ..runners.local import LocalRunner
from ..runners.select import remote_address
from ..settings import RemoteSpec
from ..targets import load_registry
from ..targets.registry import TargetRegistry
from .loader import LoadedSpec
from .spec import TargetSpec


@dataclass(frozen=True)
class Placement:
    """One device to qualify on, resolved, as plain picklable data (its runner is built where its job runs).

    Attributes:
        index: position among all placements (a ``devices:`` entry gives several).
        label: the device's label in reports, history and progress.
        target: its target.
        device: the SSH device (address, key, known_hosts); None: this machine (the local runner).
        python: the local runner's interpreter (None: the one running the job).
        note: a warning for the report.
        entry: index of its ``targets:`` entry in the spec.
    """

    index: int
    label: str
    target: str
    device: FleetDevice | None = None
    python: str | None = None
    note: str | None = None
    entry: int = 0

    @property
    def name(self) -> str:
        """The label (a fleet job's device name: progress lines and rows)."""
        return self.label

    @property
    def resource(self) -> str:
        """The device's Ray custom resource, ``edgeopt-device:LABEL`` (docs/fleet.md)."""
        return f"edgeopt-device:{self.label}"

    @property
    def runner_name(self) -> str:
        """The result's ``runner``: ``ssh:user@host:port`` or ``local``."""
        return f"ssh:{self.device.address.label()}" if self.device is not None else LocalRunner.name

    def local_runner(self) -> Runner:
        """A fresh local runner (for a placement without ``device``)."""
        return LocalRunner(python=self.python)


def place(loaded: LoadedSpec, targets_dirs: Sequence[Path] = ()) -> list[Placement]:
    """Resolve every ``targets:`` entry (nothing connects yet).

    Raises:
        QualifySpecError: unknown target or device, malformed host, bad inventory (file:line: key).
    """
    spec = loaded.spec
    registry = load_registry(extra_dirs=targets_dirs)
    inventory = loaded.resolve(spec.inventory) if spec.inventory else None
    placements: list[Placement] = []
    for i, entry in enumerate(spec.targets):
        for one in _expand(loaded, i, entry, inventory):
            placement = _place_one(loaded, i, one, inventory, registry, len(placements))
            if any(p.label == placement.label for p in placements):
                raise loaded.error(("targets", i), f"device '{placement.label}' is selected twice: drop it from "
                                                   "one entry (or give the single entry a distinct 'name')")
            placements.append(placement)
    return placements


def _expand(loaded: LoadedSpec, i: int, entry: TargetSpec, inventory: Path | None) -> list[TargetSpec]:
    """A ``devices:`` entry as one ``device:`` entry per selected inventory device; any other entry as itself.

    Raises:
        QualifySpecError: a selection that matches nothing (names the inventory and its tags), a bad inventory.
    """
    if not entry.devices:
        return [entry]
    try:
        selected = select_devices(load_inventory(inventory), entry.devices)
    except InputError as exc:
        raise loaded.error(("targets", i, "devices"), str(exc)) from None
    return [entry.model_copy(update={"devices": None, "device": d.name}) for d in selected]


def _place_one(loaded: LoadedSpec, i: int, entry: TargetSpec, inventory: Path | None, registry: TargetRegistry,
               index: int) -> Placement:
    key = ("targets", i, "device" if entry.device else "host" if entry.host else "target")
    try:
        remote = RemoteSpec(
            host=entry.host, device=entry.device, inventory=inventory,
            key=loaded.resolve(entry.key) if entry.key else None, python=entry.python,
            known_hosts=loaded.resolve(entry.known_hosts) if entry.known_hosts else None,
            accept_new_host_key=entry.accept_new_host_key,
        )
        where = remote_address(remote)
    except InputError as exc:
        raise loaded.error(key, str(exc)) from None
    target = entry.target or (where[1] if where else None) or "local"
    try:
        registry.get(target)
    except InputError as exc:
        raise loaded.error(("targets", i, "target"), str(exc)) from None
    note = None
    if entry.host and not entry.target:
        note = f"{entry.host}: no 'target' given, so the 'local' target's numbers (TDP, peaks) were used"
    label = entry.label()
    device = None
    if where is not None:
        kh = remote.known_hosts.expanduser() if remote.known_hosts is not None else None
        device = FleetDevice(name=label, target=target, address=where[0], known_hosts=kh,
                             accept_new_host_key=remote.accept_new_host_key)
    return Placement(index=index, label=label, target=target, device=device,
                     python=entry.python if where is None else None, note=note, entry=i)
