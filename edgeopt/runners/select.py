"""Pick the runner from the user's options: local, ``--host user@addr[:port]``, or ``--device NAME``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..devices import load_inventory, parse_host
from ..devices.schema import SshAddress
from ..errors import InputError
from ..settings import RemoteSpec
from .base import Runner
from .local import LocalRunner


@dataclass(frozen=True)
class RunnerChoice:
    """The runner, and the target named by the inventory for ``--device`` (None otherwise)."""

    runner: Runner
    target: str | None = None


def choose_runner(remote: RemoteSpec | None = None) -> RunnerChoice:
    """Build the runner ``remote`` asks for (nothing connects yet): local when it names no host or device.

    Raises:
        InputError: conflicting options, a malformed ``--host``, or a bad / missing inventory or device name.
    """
    spec = remote or RemoteSpec()
    where = remote_address(spec)
    if where is None:
        return RunnerChoice(LocalRunner(python=spec.python))
    address, target = where
    from .ssh import SshRunner  # paramiko is imported only when a remote device is used

    kh = spec.known_hosts.expanduser() if spec.known_hosts is not None else None
    runner = SshRunner(address, known_hosts=kh, accept_new_host_key=spec.accept_new_host_key, timeouts=spec.timeouts,
                       cache_limit_bytes=int(spec.device_cache_mb * 1024 * 1024))
    return RunnerChoice(runner, target)


def remote_address(spec: RemoteSpec) -> tuple[SshAddress, str | None] | None:
    """The SSH address ``spec`` names and the inventory's target for ``--device`` (None: this machine).

    Raises:
        InputError: as :func:`choose_runner`.
    """
    host, device = spec.host, spec.device
    if host and device:
        raise InputError(f"--host {host} and --device {device} both given: pick one device")
    key_path = spec.key.expanduser() if spec.key is not None else None
    if not host and not device:
        if key_path is not None or spec.accept_new_host_key:
            raise InputError("--key and --accept-new-host-key apply to a remote device: add --host or --device")
        return None
    if host:
        return parse_host(host, key=key_path, python=spec.python), None
    dev = load_inventory(spec.inventory).get(str(device))
    return dev.address(key=key_path, python=spec.python), dev.target


@contextmanager
def use_runner(runner: Runner | None, remote: RemoteSpec | None = None,
               target: str | None = None) -> Iterator[RunnerChoice]:
    """The caller's ``runner`` as is, or the one ``remote`` names, closed on exit; with ``target`` or the device's.

    Raises:
        InputError: as :func:`choose_runner`.
    """
    if runner is not None:
        yield RunnerChoice(runner, target)
        return
    choice = choose_runner(remote)
    try:
        yield RunnerChoice(choice.runner, target or choice.target)
    finally:
        choice.runner.close()
