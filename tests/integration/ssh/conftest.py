"""Fixtures: a real OpenSSH server on 127.0.0.1 as the "device", and runners pointed at it.

The device's Python is this venv's interpreter (it has numpy and onnxruntime), called by absolute path in an
empty environment exactly as on a board; the device's work dir is a temp dir, so the tests can look at the
"device side" (cache, job dirs, lock files) directly.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from edgeopt.devices import SshAddress, parse_host
from edgeopt.runners.ssh import SshRunner
from edgeopt.runners.ssh_session import SshTimeouts
from tests.integration.ssh.sshd import Sshd, unavailable_reason

DEVICE_PYTHON = sys.executable


@dataclass
class Device:
    """A running sshd plus where its "device" keeps edgeopt's files."""

    sshd: Sshd
    workdir: Path
    known_hosts: Path

    def address(self, **overrides: object) -> SshAddress:
        addr = parse_host(self.sshd.spec, key=self.sshd.client_key, python=DEVICE_PYTHON, workdir=str(self.workdir))
        return addr.model_copy(update=overrides) if overrides else addr

    def runner(self, *, accept: bool = True, timeouts: SshTimeouts | None = None, **overrides: object) -> SshRunner:
        return SshRunner(self.address(**overrides), known_hosts=self.known_hosts, accept_new_host_key=accept,
                         timeouts=timeouts)

    @property
    def lock_file(self) -> Path:
        return self.workdir / "locks" / "device.lock"

    def job_dirs(self) -> list[Path]:
        jobs = self.workdir / "jobs"
        return sorted(jobs.iterdir()) if jobs.is_dir() else []


def _require_sshd() -> None:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def shared_device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Device]:
    """One sshd for a whole test module (tests that do not stop or change it)."""
    _require_sshd()
    root = tmp_path_factory.mktemp("sshd")
    with Sshd(root / "server") as sshd:
        yield Device(sshd, root / "device", root / "known_hosts")


@pytest.fixture()
def device(tmp_path: Path) -> Iterator[Device]:
    """A fresh sshd for one test (which may restart, re-key or kill it)."""
    _require_sshd()
    sshd = Sshd(tmp_path / "server")
    sshd.start()
    try:
        yield Device(sshd, tmp_path / "device", tmp_path / "known_hosts")
    finally:
        sshd.stop()
