"""What every fault case checks: one clean line, nothing left running or locked on the device."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.integration.ssh.conftest import DEVICE_PYTHON, Device
from tests.integration.ssh.sshd import processes_mentioning
from tests.waiting import wait_for  # noqa: F401  (the fault tests import it from here)

# Where the fault counts of one campaign run are gathered (docs/reliability.md quotes them).
COUNTS_FILE = Path(os.environ.get("EDGEOPT_FAULT_COUNTS", "out/fault-counts.json"))


def lock_is_free(device: Device) -> bool:
    """True when no process holds the device lock (the file may remain after a SIGKILL: the flock is gone)."""
    if not device.lock_file.exists():
        return True
    fd = os.open(device.lock_file, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def assert_device_clean(device: Device, timeout_s: float = 20.0) -> None:
    """No agent left running for this device, its lock free, no half-written cache entry complete-looking."""
    assert wait_for(lambda: not processes_mentioning(f"{device.workdir}/"), timeout_s), \
        processes_mentioning(f"{device.workdir}/")
    assert lock_is_free(device)
    cache = device.workdir / "cache"
    if cache.is_dir():
        for entry in cache.iterdir():
            if not entry.name.startswith("."):
                assert any(entry.iterdir()), f"empty cache entry {entry}"


def assert_one_line(stderr: str, *needles: str) -> str:
    """The error line of a failed CLI run: exactly one ``edgeopt: error:`` line, no traceback."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("edgeopt: error:")]
    assert len(errors) == 1, stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def inventory(path: Path, device: Device, name: str = "dut", **extra: object) -> Path:
    entry = {"host": "127.0.0.1", "port": device.sshd.port, "user": device.sshd.user,
             "key": str(device.sshd.client_key), "target": "local", "python": DEVICE_PYTHON,
             "workdir": str(device.workdir), **extra}
    lines = ["devices:", f"  - name: {name}"] + [f"    {k}: {v}" for k, v in entry.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def edgeopt_popen(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """``python -m edgeopt ARGS`` as its own process (so a test can signal it), stdout/stderr captured."""
    env = {k: v for k, v in os.environ.items() if k != "EDGEOPT_INVENTORY"}
    return subprocess.Popen([sys.executable, "-m", "edgeopt", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=cwd)


def record(category: str, injected: int = 1, survived: int = 1) -> None:
    """Add to the campaign's counts (faults injected and survived per category)."""
    COUNTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(f"{COUNTS_FILE}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = json.loads(COUNTS_FILE.read_text()) if COUNTS_FILE.exists() else {}
        row = data.setdefault(category, {"injected": 0, "survived": 0})
        row["injected"] += injected
        row["survived"] += survived
        tmp = COUNTS_FILE.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(COUNTS_FILE)
    finally:
        os.close(lock)
