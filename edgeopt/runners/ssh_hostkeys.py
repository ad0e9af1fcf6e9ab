"""Host key checking: known_hosts, trust on first use only when asked, a changed key always refused.

The user's known_hosts file is the only source of trust (not the system file, so behaviour is the same on
every machine). An unknown host is refused with its fingerprint unless ``accept_new_host_key``; then the key
is appended to known_hosts through a temp file and rename. A key that differs from the recorded one is refused
whatever the options: that is what a man in the middle looks like.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import paramiko

from ..devices.schema import DEFAULT_KNOWN_HOSTS
from ..errors import InputError, RunnerError, TrustError
from ..fsutil import atomic_write_text

__all__ = ["DEFAULT_KNOWN_HOSTS", "HostKeyError", "TrustOnFirstUse", "changed_key_error", "fingerprint",
           "load_known_hosts", "record_host_key"]


class HostKeyError(TrustError):
    """The device's host key is unknown (and not accepted) or differs from the recorded one."""


def fingerprint(key: paramiko.PKey) -> str:
    """OpenSSH-style fingerprint: ``ssh-ed25519 SHA256:<base64>``, as ``ssh-keygen -lf`` prints it."""
    digest = base64.b64encode(hashlib.sha256(key.asbytes()).digest()).decode().rstrip("=")
    return f"{key.get_name()} SHA256:{digest}"


def host_entry(host: str, port: int) -> str:
    """The name known_hosts uses: ``host`` on port 22, else ``[host]:port``."""
    return host if port == 22 else f"[{host}]:{port}"


def load_known_hosts(client: paramiko.SSHClient, known_hosts: Path) -> None:
    """Load ``known_hosts`` into ``client`` (a missing file is simply empty).

    Raises:
        InputError: the file exists but cannot be read or parsed.
    """
    if not known_hosts.exists():
        return
    try:
        client.load_host_keys(str(known_hosts))
    except (OSError, paramiko.SSHException, ValueError) as exc:
        raise InputError(
            f"known_hosts file {known_hosts} is unreadable ({exc}): fix it or pass --known-hosts"
        ) from None


@contextlib.contextmanager
def _known_hosts_lock(known_hosts: Path) -> Iterator[None]:
    """An exclusive lock beside ``known_hosts``, across threads and processes of this host.

    Recording is read + rename: two devices seen for the first time at once (a fleet run) would otherwise
    each write the file they read, and one entry would be lost.
    """
    known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(known_hosts.with_name(f".{known_hosts.name}.edgeopt-lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released by close, also when this process dies
        yield
    finally:
        os.close(fd)


def record_host_key(known_hosts: Path, hostname: str, key: paramiko.PKey) -> None:
    """Append ``hostname key`` to ``known_hosts`` atomically (temp file + rename, under a lock file).

    An identical line already there (another connection recorded it first) is not added twice.
    """
    line = f"{hostname} {key.get_name()} {key.get_base64()}"
    try:
        with _known_hosts_lock(known_hosts):
            old = known_hosts.read_text(encoding="utf-8") if known_hosts.exists() else ""
            if line in old.splitlines():
                return
            if old and not old.endswith("\n"):
                old += "\n"
            atomic_write_text(known_hosts, f"{old}{line}\n")
    except OSError as exc:
        raise RunnerError(
            f"cannot record the host key in {known_hosts} ({exc}): pass a writable --known-hosts"
        ) from None


class TrustOnFirstUse(paramiko.MissingHostKeyPolicy):
    """paramiko's policy for a host not in known_hosts: refuse, or record when the user accepted new keys."""

    def __init__(self, known_hosts: Path, accept_new: bool) -> None:
        self.known_hosts = known_hosts
        self.accept_new = accept_new

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        if not self.accept_new:
            raise HostKeyError(
                f"unknown host key for {hostname}: {fingerprint(key)}; check this fingerprint on the device "
                f"(ssh-keygen -lf /etc/ssh/ssh_host_{_short(key)}_key.pub) and, if it matches, run again with "
                f"--accept-new-host-key to record it in {self.known_hosts}"
            )
        record_host_key(self.known_hosts, hostname, key)


def changed_key_error(hostname: str, port: int, got: paramiko.PKey, expected: paramiko.PKey,
                      known_hosts: Path) -> HostKeyError:
    """The loud refusal for a host whose key changed (never accepted, whatever the options)."""
    entry = host_entry(hostname, port)
    return HostKeyError(
        f"HOST KEY CHANGED for {entry}: {known_hosts} records {fingerprint(expected)} but the device presented "
        f"{fingerprint(got)}; REFUSED: someone may be intercepting the connection (man in the middle). If the "
        f"device was really reinstalled, remove the old key with: ssh-keygen -R '{entry}' -f {known_hosts}, "
        "then connect again with --accept-new-host-key"
    )


def _short(key: paramiko.PKey) -> str:
    name = key.get_name()
    if "ed25519" in name:
        return "ed25519"
    if "ecdsa" in name:
        return "ecdsa"
    return "rsa"
