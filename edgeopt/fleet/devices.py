"""The devices of a fleet run: what a worker needs to build a device's own runner, as plain picklable data.

A :class:`FleetDevice` travels to whichever worker runs its job (a thread here, a Ray worker elsewhere) and
builds the device's SSH runner there; runners themselves (open sockets) never travel. The runner it builds can
be stopped from another thread (:meth:`AbortableSshRunner.abort`): that is how a device's deadline ends a run
that hangs, and the agent on the device then ends itself (it exits when its SSH session goes away) and
releases the device lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import paramiko

from ..devices import load_inventory
from ..devices.schema import SshAddress
from ..devices.select import select_devices
from ..errors import RunnerError
from ..runners.ssh import SshRunner
from ..runners.ssh_hostkeys import host_entry
from ..runners.ssh_session import SshSession, SshTimeouts

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
    """

    name: str
    target: str
    address: SshAddress
    tags: tuple[str, ...] = ()
    known_hosts: Path | None = None
    accept_new_host_key: bool = False
    timeouts: SshTimeouts | None = field(default=None, compare=False)

    @property
    def resource(self) -> str:
        """The Ray custom resource naming this device (capacity 1 on the node that reaches it)."""
        return f"{RESOURCE_PREFIX}{self.name}"

    def runner(self) -> AbortableSshRunner:
        """A fresh runner for this device (call it on the worker that runs the job)."""
        return AbortableSshRunner(self.address, known_hosts=self.known_hosts,
                                  accept_new_host_key=self.accept_new_host_key, timeouts=self.timeouts)


def fleet_devices(
    selection: str | Sequence[str],
    *,
    inventory: str | Path | None = None,
    key: str | Path | None = None,
    python: str | None = None,
    known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False,
    timeouts: SshTimeouts | None = None,
) -> list[FleetDevice]:
    """Resolve ``--devices`` against the inventory (nothing connects yet).

    Raises:
        InputError: a bad inventory, or a selection term that matches no device (names the known tags).
    """
    inv = load_inventory(Path(inventory) if inventory is not None else None)
    key_path = Path(key).expanduser() if key is not None else None
    kh = Path(known_hosts).expanduser() if known_hosts is not None else None
    return [
        FleetDevice(name=d.name, target=d.target, address=d.address(key=key_path, python=python), tags=tuple(d.tags),
                    known_hosts=kh, accept_new_host_key=accept_new_host_key, timeouts=timeouts)
        for d in select_devices(inv, selection)
    ]


@contextlib.contextmanager
def _first_use_guard(session: SshSession) -> Iterator[None]:
    """Serialize connections that will record a new host key, across threads and processes on this host.

    Recording appends to known_hosts by read + rename; two devices seen for the first time at once would lose
    one entry. A lock file beside known_hosts orders them (only while a key is really new).
    """
    kh = session.known_hosts
    if not session.accept_new_host_key or _is_known(kh, session.address.host, session.address.port):
        yield
        return
    kh.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(kh.with_name(f".{kh.name}.edgeopt-lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _is_known(known_hosts: Path, host: str, port: int) -> bool:
    entry = host_entry(host, port)
    try:
        keys = paramiko.HostKeys(str(known_hosts)) if known_hosts.exists() else None
    except (OSError, paramiko.SSHException, ValueError):
        return False
    return keys is not None and keys.lookup(entry) is not None


class _TrackedSession(SshSession):
    """A session that tells its runner it connected, and gives up at once when the runner was aborted."""

    def __init__(self, owner: AbortableSshRunner) -> None:
        super().__init__(owner.address, known_hosts=owner.known_hosts, accept_new_host_key=owner.accept_new_host_key,
                         timeouts=owner.timeouts)
        self._owner = owner

    def connect(self) -> None:
        with _first_use_guard(self):
            super().connect()
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
