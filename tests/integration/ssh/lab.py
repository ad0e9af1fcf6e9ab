"""A lab of loopback "devices": N real sshd processes, each with its own host key, port, client key and work dir,
plus the ``devices.yaml`` inventory (with tags) and a known_hosts file that lists them.

Used by the fleet tests and by ``benchmarks/fleet.py``. A device may also be declared unreachable (an inventory
entry on a port where nothing listens) to stand for a board that is switched off.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.integration.ssh.sshd import Sshd, free_port, processes_mentioning

DEVICE_PYTHON = sys.executable


@dataclass
class LabDevice:
    """One device of the lab: its sshd (None when unreachable) and its work dir."""

    name: str
    workdir: Path
    tags: list[str]
    sshd: Sshd | None = None
    port: int = 0
    python: str | None = DEVICE_PYTHON

    @property
    def lock_file(self) -> Path:
        return self.workdir / "locks" / "device.lock"

    def job_dirs(self) -> list[Path]:
        jobs = self.workdir / "jobs"
        return sorted(jobs.iterdir()) if jobs.is_dir() else []

    def agent_processes(self) -> list[int]:
        """Processes still running for this device (their command line names its work dir)."""
        return processes_mentioning(str(self.workdir))


@dataclass
class Lab:
    """``n`` loopback devices under ``root``; ``tags(i)`` gives device i's tags."""

    root: Path
    n: int
    target: str = "local"
    python: str | None = DEVICE_PYTHON
    unreachable: Sequence[str] = ()
    devices: list[LabDevice] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for i in range(self.n):
            name = f"lab-{i:02d}"
            sshd = Sshd(self.root / name / "server")
            self.devices.append(LabDevice(name, self.root / name / "device", self.tags(i), sshd, sshd.port,
                                          self.python))
        for name in self.unreachable:
            self.devices.append(LabDevice(name, self.root / name / "device", ["lab", "off"], None, free_port(),
                                          self.python))
        self.write_known_hosts()
        self.write_inventory()

    @staticmethod
    def tags(i: int) -> list[str]:
        return ["lab", "even" if i % 2 == 0 else "odd"]

    @property
    def inventory(self) -> Path:
        return self.root / "devices.yaml"

    @property
    def known_hosts(self) -> Path:
        return self.root / "known_hosts"

    def __getitem__(self, name: str) -> LabDevice:
        return next(d for d in self.devices if d.name == name)

    def write_known_hosts(self) -> None:
        """Every sshd's host key, as ``ssh-keyscan`` would have recorded them."""
        lines = []
        for d in self.devices:
            if d.sshd is not None:
                kind, key = Path(f"{d.sshd.host_key}.pub").read_text().split()[:2]
                lines.append(f"[127.0.0.1]:{d.port} {kind} {key}")
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def write_inventory(self) -> None:
        entries = []
        for d in self.devices:
            entry = {"name": d.name, "host": "127.0.0.1", "port": d.port, "user": "root", "target": self.target,
                     "workdir": str(d.workdir), "tags": d.tags}
            key = d.sshd.client_key if d.sshd is not None else self.devices[0].sshd.client_key  # type: ignore[union-attr]
            entry["key"] = str(key)
            if d.python:
                entry["python"] = d.python
            entries.append(entry)
        self.inventory.write_text(yaml.safe_dump({"devices": entries}, sort_keys=False))

    def start(self) -> Lab:
        for d in self.devices:
            if d.sshd is not None:
                d.sshd.start()
        return self

    def stop(self) -> None:
        for d in self.devices:
            if d.sshd is not None:
                d.sshd.stop()

    def __enter__(self) -> Lab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
