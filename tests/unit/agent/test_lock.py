"""The per-device lock: one benchmark at a time, stale locks taken over, and an agent that never leaves one
behind (stdin EOF, SIGTERM). Holders are real processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from edgeopt.runners.base import agent_dir
from edgeopt_agent.lock import DeviceLock, LockBusy, pid_alive

ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(agent_dir()), "PYTHONDONTWRITEBYTECODE": "1"}


def _holder(lock_dir: Path, hold_s: float) -> subprocess.Popen[str]:
    """A process that takes the lock, says so, holds it ``hold_s`` seconds and releases it."""
    code = textwrap.dedent(f"""
        import sys, time
        from edgeopt_agent.lock import DeviceLock
        lock = DeviceLock({str(lock_dir)!r})
        lock.acquire(5)
        print("locked", flush=True)
        time.sleep({hold_s})
        lock.release()
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=ENV)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_acquire_writes_pid_and_release_removes_the_file(tmp_path: Path):
    lock = DeviceLock(str(tmp_path / "locks"))
    lock.acquire(0)
    assert lock.held and lock.holder()["pid"] == os.getpid()
    lock.release()
    lock.release()  # idempotent
    assert not Path(lock.path).exists() and not lock.held


def test_busy_lock_fails_after_the_wait_naming_the_holder(tmp_path: Path):
    holder = _holder(tmp_path, 30)
    try:
        events: list[dict] = []
        started = time.monotonic()
        with pytest.raises(LockBusy) as info:
            DeviceLock(str(tmp_path)).acquire(0.4, on_event=events.append)
        assert 0.4 <= time.monotonic() - started < 3
        assert f"pid {holder.pid}" in str(info.value) and "longer lock wait" in str(info.value)
        assert events == [{"event": "phase", "phase": "lock_wait", "holder_pid": holder.pid,
                           "path": str(tmp_path / "device.lock")}]
    finally:
        holder.kill()
        holder.wait()


def test_waiter_gets_the_lock_when_the_holder_releases(tmp_path: Path):
    holder = _holder(tmp_path, 0.5)
    lock = DeviceLock(str(tmp_path))
    lock.acquire(10)
    assert holder.wait(timeout=10) == 0 and lock.holder()["pid"] == os.getpid()
    assert Path(lock.path).exists()  # the holder's unlink did not take our (new) lock file with it
    lock.release()


def test_lock_of_a_killed_holder_is_taken_over_at_once(tmp_path: Path):
    holder = _holder(tmp_path, 60)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    lock = DeviceLock(str(tmp_path))
    assert lock.holder()["pid"] == holder.pid and not pid_alive(holder.pid)  # left behind
    events: list[dict] = []
    started = time.monotonic()
    lock.acquire(0, on_event=events.append)
    assert time.monotonic() - started < 0.5 and lock.holder()["pid"] == os.getpid()
    assert events and events[0]["action"] == "stale_takeover" and events[0]["pid"] == holder.pid
    lock.release()


def test_garbage_lock_file_is_taken_over(tmp_path: Path):
    (tmp_path / "device.lock").write_text("not json")
    lock = DeviceLock(str(tmp_path))
    lock.acquire(0)
    assert lock.holder()["pid"] == os.getpid()
    lock.release()


def _agent(args: list[str], **kw) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "edgeopt_agent", "run", *args], text=True, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def _request(tmp_path: Path, model: Path, **fields) -> Path:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({"model_path": str(model), "iterations": 10, "progress_interval_s": 0, **fields}))
    return path


def test_agent_on_a_busy_device_returns_a_clear_error_result(tmp_path: Path, tiny_cnn):
    holder = _holder(tmp_path / "locks", 30)
    try:
        req = _request(tmp_path, tiny_cnn, min_duration_s=0.1)
        proc = _agent(["--request", str(req), "--result", str(tmp_path / "r.json"), "--lock-dir",
                       str(tmp_path / "locks"), "--lock-wait-s", "0.3"])
        proc.communicate(timeout=60)
        result = json.loads((tmp_path / "r.json").read_text())
        assert proc.returncode == 1 and result["status"] == "error" and result["error_kind"] == "timeout"
        assert "device busy" in result["error"] and str(holder.pid) in result["error"]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("how", ["stdin_eof", "sigterm", "heartbeat_stops"])
def test_agent_ends_and_releases_the_lock_when_its_host_goes_away(tmp_path: Path, tiny_cnn, how: str):
    req = _request(tmp_path, tiny_cnn, min_duration_s=60, max_duration_s=120, progress_interval_s=1)
    lock_file = tmp_path / "locks" / "device.lock"
    # heartbeat_stops: a dead link closes nothing (stdin stays open); the host's heartbeat bytes just stop coming.
    silence = ["--host-silence-s", "1.5"] if how == "heartbeat_stops" else []
    proc = _agent(["--request", str(req), "--result", str(tmp_path / "r.json"), "--lock-dir", str(tmp_path / "locks"),
                   "--lock-wait-s", "0", "--exit-on-stdin-eof", *silence], stdin=subprocess.PIPE)
    beating = threading.Event()
    if silence:  # the host's heartbeat until the timed phase runs (start-up may take longer than 1.5 s here)
        beating.set()

        def beat() -> None:
            with contextlib.suppress(OSError, ValueError):
                while beating.is_set() and proc.stdin is not None:
                    proc.stdin.write("\n")
                    proc.stdin.flush()
                    time.sleep(0.2)

        threading.Thread(target=beat, daemon=True).start()
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # wait for the 60 s timed phase
            if '"phase": "timed"' in line:
                break
        beating.clear()
        assert lock_file.exists() and proc.poll() is None
        if how == "stdin_eof":
            assert proc.stdin is not None
            proc.stdin.close()  # what sshd does when the session dies
        elif how == "sigterm":
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert proc.returncode == (128 + signal.SIGTERM if how == "sigterm" else 125)
        assert not lock_file.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
