"""Where each spec target runs: the local runner, an inventory device, or an SSH host, resolved before any work so
a typo in a device or target name is a spec error (exit 2) naming the file and key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..runners import Runner
from ..runners.select import choose_runner
from ..settings import RemoteSpec
from ..targets import load_registry
from .loader import LoadedSpec


@dataclass(frozen=True)
class Placement:
    """One spec target, resolved."""

    index: int
    label: str
    target: str
    runner: Runner
    note: str | None = None


def place(loaded: LoadedSpec, targets_dirs: Sequence[Path] = ()) -> list[Placement]:
    """Resolve every ``targets:`` entry (nothing connects yet).

    Raises:
        QualifySpecError: unknown target or device, malformed host, bad inventory (file:line: key).
    """
    spec = loaded.spec
    registry = load_registry(extra_dirs=targets_dirs)
    inventory = loaded.resolve(spec.inventory) if spec.inventory else None
    placements = []
    for i, entry in enumerate(spec.targets):
        key = ("targets", i, "device" if entry.device else "host" if entry.host else "target")
        try:
            choice = choose_runner(RemoteSpec(
                host=entry.host, device=entry.device, inventory=inventory,
                key=loaded.resolve(entry.key) if entry.key else None, python=entry.python,
                known_hosts=loaded.resolve(entry.known_hosts) if entry.known_hosts else None,
                accept_new_host_key=entry.accept_new_host_key,
            ))
        except InputError as exc:
            raise loaded.error(key, str(exc)) from None
        target = entry.target or choice.target or "local"
        try:
            registry.get(target)
        except InputError as exc:
            raise loaded.error(("targets", i, "target"), str(exc)) from None
        note = None
        if entry.host and not entry.target:
            note = f"{entry.host}: no 'target' given, so the 'local' target's numbers (TDP, peaks) were used"
        placements.append(Placement(index=i, label=entry.label(), target=target, runner=choice.runner, note=note))
    return placements
