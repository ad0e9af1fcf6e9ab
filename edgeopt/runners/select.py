"""Pick the runner from the user's options: local, ``--host user@addr[:port]``, or ``--device NAME``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..devices import load_inventory, parse_host
from ..errors import InputError
from .base import Runner
from .local import LocalRunner

if TYPE_CHECKING:
    from .ssh_session import SshTimeouts


@dataclass(frozen=True)
class RunnerChoice:
    """The runner, and the target named by the inventory for ``--device`` (None otherwise)."""

    runner: Runner
    target: str | None = None


def choose_runner(
    *,
    host: str | None = None,
    device: str | None = None,
    key: str | Path | None = None,
    python: str | None = None,
    inventory: str | Path | None = None,
    known_hosts: str | Path | None = None,
    accept_new_host_key: bool = False,
    timeouts: SshTimeouts | None = None,
) -> RunnerChoice:
    """Build the runner the options ask for (nothing connects yet).

    Args:
        host: ``user@addr[:port]`` of a device not in the inventory.
        device: name of a device in the inventory.
        key: private key file (overrides the inventory's).
        python: interpreter where the agent runs (overrides the inventory's; locally: the agent's Python).
        inventory: the inventory file (default ``EDGEOPT_INVENTORY`` or ``./devices.yaml``).
        known_hosts: trusted host keys (default ``~/.ssh/known_hosts``).
        accept_new_host_key: trust and record a host key seen for the first time.
        timeouts: SSH step deadlines.

    Raises:
        InputError: conflicting options, a malformed ``--host``, or a bad / missing inventory or device name.
    """
    if host and device:
        raise InputError(f"--host {host} and --device {device} both given: pick one device")
    key_path = Path(key).expanduser() if key is not None else None
    if not host and not device:
        if key_path is not None or accept_new_host_key:
            raise InputError("--key and --accept-new-host-key apply to a remote device: add --host or --device")
        return RunnerChoice(LocalRunner(python=python))
    kh = Path(known_hosts).expanduser() if known_hosts is not None else None
    if host:
        address = parse_host(host, key=key_path, python=python)
        target = None
    else:
        assert device is not None
        dev = load_inventory(Path(inventory) if inventory is not None else None).get(device)
        address, target = dev.address(key=key_path, python=python), dev.target
    from .ssh import SshRunner  # paramiko is imported only when a remote device is used

    runner = SshRunner(address, known_hosts=kh, accept_new_host_key=accept_new_host_key, timeouts=timeouts)
    return RunnerChoice(runner, target)
