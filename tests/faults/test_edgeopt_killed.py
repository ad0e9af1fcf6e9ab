"""``edgeopt bench --device`` itself interrupted (SIGINT, SIGTERM, SIGKILL) at each step of a remote run; the
next run succeeds without manual cleanup, and nothing stays running or locked on the device."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from edgeopt.fsutil import sha256_file
from tests.conftest import make_matmul_model
from tests.faults.helpers import assert_device_clean, assert_one_line, edgeopt_popen, inventory, record, wait_for
from tests.integration.ssh.sshd import process_tree, processes_mentioning

# The exit status and stderr line each signal gives (SIGKILL: nothing can be printed).
EXPECTED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated"), signal.SIGKILL: (-9, None)}


def _uploading(device) -> bool:
    cache = device.workdir / "cache"
    return cache.is_dir() and any(p.name.startswith(".tmp-") for p in cache.iterdir())


def _agent_running(device) -> bool:
    return bool(processes_mentioning(f"{device.workdir}/"))


def _session_open(device) -> bool:
    """sshd forked a session for the client: edgeopt is connecting or connected (nothing uploaded yet)."""
    return len(process_tree(device.sshd.proc.pid)) > 1


def _cache_entries_match_their_names(device) -> None:
    """Every model entry of the device cache (named by the model's sha256) holds exactly that model."""
    cache = device.workdir / "cache"
    for entry in (cache.iterdir() if cache.is_dir() else []):
        model = entry / "model.onnx"
        if not entry.name.startswith(".") and model.is_file():
            assert sha256_file(model) == entry.name, entry


STEPS = {
    # step -> (extra bench flags, predicate on the device meaning "in that step now")
    "connect": ([], _session_open),
    "upload": ([], _uploading),
    "lock": (["--ssh-timeout", "lock_wait=60"], lambda d: _agent_running(d)),
    "warmup": (["--warmup", "30"], lambda d: _agent_running(d) and d.lock_file.exists()),
    "timed": (["--min-duration", "30"], lambda d: _agent_running(d) and d.lock_file.exists()),
}


def _bench(tmp_path: Path, device, model: Path, *flags: str) -> subprocess.Popen[str]:
    (tmp_path / "inv").mkdir(exist_ok=True)  # not under a path that names the device's work dir
    inv = inventory(tmp_path / "inv" / "lab.yaml", device)
    return edgeopt_popen("bench", str(model), "--device", "dut", "--inventory", str(inv), "--known-hosts",
                         str(device.known_hosts), "--accept-new-host-key", "--iterations", "5",
                         "--min-duration", "0.05", "--max-duration", "60", *flags, cwd=tmp_path)


@pytest.mark.parametrize("sig", list(EXPECTED))
@pytest.mark.parametrize("step", list(STEPS))
def test_edgeopt_killed_at_a_step_then_the_next_run_succeeds(device, tmp_path, step, sig):
    # A big model so that the upload lasts long enough to be caught in the act.
    model = make_matmul_model(tmp_path / "big.onnx", k=2048, n=2048 if step == "upload" else 64)
    flags, in_step = STEPS[step]
    held = None
    if step == "lock":  # another job holds the device: the agent waits in the lock
        device.lock_file.parent.mkdir(parents=True, exist_ok=True)
        held = os.open(device.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(held, fcntl.LOCK_EX)
        os.write(held, json.dumps({"pid": os.getpid(), "since": time.time(), "host": "test"}).encode())
    proc = _bench(tmp_path, device, model, *flags)
    try:
        assert wait_for(lambda: in_step(device), 60, 0.005), proc.communicate(timeout=60)
        proc.send_signal(sig)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
        if held is not None:
            os.close(held)
    code, word = EXPECTED[sig]
    assert proc.returncode == code, err
    if word:
        assert_one_line(err, word)
    assert "Traceback" not in err
    assert took < 10, took  # promptly: not after the upload, the run or a paramiko wait for acknowledgements
    assert_device_clean(device)  # the agent saw its session end and stopped; lock free
    _cache_entries_match_their_names(device)
    again = _bench(tmp_path, device, model)
    out, err = again.communicate(timeout=120)
    assert again.returncode in (0, 1) and "edgeopt: error" not in err, err  # 1: too few samples for p99, not a fault
    assert_device_clean(device)
    record(f"edgeopt killed by {sig.name} at a step of a remote run")
