"""The devices of a fleet run: what a worker needs to build a device's own runner, as plain picklable data.

A :class:`FleetDevice` travels to whichever worker runs its job (a thread here, a Ray worker elsewhere) and
builds the device's SSH runner there; runners themselves (open sockets) never travel. The runner it builds can
be stopped from another thread (:meth:`AbortableSshRunner.abort`): that is how a device's deadline ends a run
that hangs, and the agent on the device then ends itself (it exits when its SSH session goes away) and
releases the device lock.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..devices import load_inventory
from ..devices.schema import SshAddress
from ..devices.select import select_devices
from ..errors import InputError, RunnerError
from ..runners.ssh import SshRunner
from ..runners.ssh_cache import DEFAULT_LIMIT_BYTES
from ..runners.ssh_session import SshSession
from ..settings import RemoteSpec, SshTimeouts, build

RESOURCE_PREFIX = "edgeopt-device:"


@dataclass(frozen=True)
class FleetDevice:
    """One selected inventory device and how to reach it.

    Attributes:
        name: inventory name (rows, progress lines, history, the Ray resource).
        target: the device's target (edgeopt targets).
        address: SSH address with key, interpreter and work dir (``--key`` / ``--python`` applied).
        tags: the device's inventory tags.
        known_hosts: trusted host keys (None: ~/.ssh/known_hosts).
        accept_new_host_key: trust and record a host key seen for the first time.
        timeouts: SSH step deadlines (None: the defaults).
        cache_limit_bytes: size limit of the device's cache (``RemoteSpec.device_cache_mb``).
    """

    name: str
    target: str
    address: SshAddress
    tags: tuple[str, ...] = ()
    known_hosts: Path | None = None
    accept_new_host_key: bool = False
    timeouts: SshTimeouts | None = field(default=None, compare=False)
    cache_limit_bytes: int = DEFAULT_LIMIT_BYTES

    @property
    def resource(self) -> str:
        """The Ray custom resource naming this device (capacity 1 on the node that reaches it)."""
        return f"{RESOURCE_PREFIX}{self.name}"

    def runner(self) -> AbortableSshRunner:
        """A fresh runner for this device (call it on the worker that runs the job)."""
        return AbortableSshRunner(self.address, known_hosts=self.known_hosts,
                                  accept_new_host_key=self.accept_new_host_key, timeouts=self.timeouts,
                                  cache_limit_bytes=self.cache_limit_bytes)


def remote_spec(remote: RemoteSpec | None = None, **options: object) -> RemoteSpec:
    """``remote`` (or the defaults) with ``options`` (RemoteSpec field names) applied; ``host``/``device`` refused.

    Raises:
        InputError: ``host`` or ``device`` given (a fleet names its devices with ``--devices``), or a bad value.
    """
    spec = build(RemoteSpec, {k: v for k, v in options.items() if v is not None}) if options else RemoteSpec()
    if remote is not None:
        spec = remote.replace(**{k: v for k, v in options.items() if v is not None})
    if spec.host or spec.device:
        raise InputError(f"--devices with --{'host' if spec.host else 'device'} "
                         f"{spec.host or spec.device}: name every device with --devices (e.g. a name, tag:TAG)")
    return spec


def fleet_devices(selection: str | Sequence[str], remote: RemoteSpec | None = None,
                  **options: object) -> list[FleetDevice]:
    """Resolve ``--devices`` against the inventory (nothing connects yet).

    Args:
        selection: names, ``tag:TAG`` and globs (a comma-separated string or a list of terms).
        remote: inventory, key, interpreter, known_hosts, host-key policy, SSH deadlines and device cache size
            applied to every device (``host``/``device`` must be unset).
        **options: RemoteSpec fields overriding ``remote`` (``inventory=``, ``known_hosts=``, ``timeouts=``, ...).

    Raises:
        InputError: a bad inventory, or a selection term that matches no device (names the known tags).
    """
    spec = remote_spec(remote, **options)
    inv = load_inventory(spec.inventory)
    key_path = spec.key.expanduser() if spec.key is not None else None
    kh = spec.known_hosts.expanduser() if spec.known_hosts is not None else None
    return [
        FleetDevice(name=d.name, target=d.target, address=d.address(key=key_path, python=spec.python),
                    tags=tuple(d.tags), known_hosts=kh, accept_new_host_key=spec.accept_new_host_key,
                    timeouts=spec.timeouts, cache_limit_bytes=int(spec.device_cache_mb * 1024 * 1024))
        for d in select_devices(inv, selection)
    ]


def resolve_devices(devices: str | Sequence[str | FleetDevice], remote: RemoteSpec | None = None,
                    **options: Any) -> list[FleetDevice]:
    """Device objects as they are; a selection (string or terms) resolved against the inventory.

    Args:
        devices: ``FleetDevice`` objects, or selection terms.
        remote: how every device is reached (:func:`fleet_devices`).
        **options: RemoteSpec fields overriding ``remote`` (``inventory``, ``key``, ``known_hosts``, ...).

    Raises:
        InputError: a mix of both kinds, or a selection that matches nothing.
    """
    if isinstance(devices, str):
        return fleet_devices(devices, remote, **options)
    items = list(devices)
    objects = [d for d in items if isinstance(d, FleetDevice)]
    if objects and len(objects) != len(items):
        raise InputError("devices: give either FleetDevice objects or selection strings, not both")
    return objects or fleet_devices([str(d) for d in items], remote, **options)


def fleet_selection(devices: str | Sequence[str | FleetDevice]) -> list[str]:
    """The selection as a list of terms (device names for device objects)."""
    if isinstance(devices, str):
        return [w.strip() for w in devices.split(",") if w.strip()]
    return [d.name if isinstance(d, FleetDevice) else str(d) for d in devices]


class _TrackedSession(SshSession):
    """A session that tells its runner it connected, and gives up at once when the runner was aborted."""

    def __init__(self, owner: AbortableSshRunner) -> None:
        super().__init__(owner.address, known_hosts=owner.known_hosts, accept_new_host_key=owner.accept_new_host_key,
                         timeouts=owner.timeouts)
        self._owner = owner

    def connect(self) -> None:
        super().connect()  # a new host key is recorded under known_hosts' lock file (runners/ssh_hostkeys.py)
        if self._owner.aborted:  # the abort came while the handshake was under way: nothing was closed then
            self.close()
            raise RunnerError(f"{self.where}: stopped while connecting (deadline or cancel)")
        self._owner.connected = True


class AbortableSshRunner(SshRunner):
    """The SSH runner, plus :meth:`abort` from any thread and whether a connection was ever made.

    ``abort`` tears down every session the runner opened (which wakes any paramiko call blocked on it) and
    refuses new ones, so a run past its deadline ends within a second with a ``RunnerError``.
    """

    def __init__(self, address: SshAddress, **kwargs: object) -> None:
        super().__init__(address, **kwargs)  # type: ignore[arg-type]
        self._sessions: list[SshSession] = []
        self._guard = threading.Lock()
        self._aborted = threading.Event()
        self.connected = False

    def _session(self) -> SshSession:
        if self._aborted.is_set():
            raise RunnerError(f"{self.name}: stopped before connecting (deadline or cancel)")
        session = _TrackedSession(self)
        with self._guard:
            self._sessions.append(session)
        return session

    def abort(self) -> None:
        """Stop whatever this runner is doing (idempotent, never raises)."""
        self._aborted.set()
        with self._guard:
            sessions = list(self._sessions)
        for session in sessions:
            with contextlib.suppress(Exception):  # a half-open session may fail to close in any way
                session.abort()

    @property
    def aborted(self) -> bool:
        return self._aborted.is_set()
