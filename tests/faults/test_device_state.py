"""What a crash leaves on a device (stale lock, half-uploaded cache entry, job directory), a full or read-only
work dir, and a device that "reboots" (sshd restarted) between runs and mid-run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from edgeopt.errors import RunnerError
from edgeopt_agent.protocol import Request
from tests.faults.helpers import COUNTS_FILE, assert_device_clean, record, wait_for

QUICK = Request(model_path="", iterations=10, min_duration_s=0.05)


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _note_cost(name: str, seconds: float) -> None:
    path = COUNTS_FILE.with_name("fault-costs.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data[name] = round(seconds, 3)
    path.write_text(json.dumps(data, indent=1, sort_keys=True))


def test_crash_leftovers_cost_the_next_run_little_and_are_cleaned(device, tiny_cnn):
    runner = device.runner()
    clean_s = min(_timed(lambda: runner.run(QUICK, tiny_cnn)) for _ in range(2))  # cache warm
    # A SIGKILLed agent's lock file (dead PID), a half-uploaded entry and a job dir, all a day old.
    device.lock_file.write_text(json.dumps({"pid": 999_999, "since": time.time() - 90_000, "host": "x"}))
    half = device.workdir / "cache" / ".tmp-deadbeef-000000000000"
    half.mkdir()
    (half / "model.onnx").write_bytes(b"\x08\x07partial")
    job = device.workdir / "jobs" / ("0" * 32)
    job.mkdir(parents=True, exist_ok=True)
    (job / "request.json").write_text("{}")
    old = time.time() - 90_000
    for p in (half, job):
        os.utime(p, (old, old))
    stale_s = _timed(lambda: runner.run(QUICK, tiny_cnn))
    _note_cost("stale lock + job dir, cache warm (s over a clean run)", max(0.0, stale_s - clean_s))
    assert not job.exists()  # swept by the run's cleanup
    # A half upload of the model itself: the entry is not complete, so it is uploaded again (never read back).
    shutil.rmtree(device.workdir / "cache")
    (device.workdir / "cache" / ".tmp-x-1").mkdir(parents=True)
    upload_s = _timed(lambda: runner.run(QUICK, tiny_cnn))
    _note_cost("half-uploaded cache entry: cold run (s)", upload_s)
    _note_cost("clean warm run (s)", clean_s)
    assert_device_clean(device)
    record("crash leftovers on the device (stale lock, half upload, job dir)", 3, 3)


def test_read_only_work_dir_is_one_clear_error(device, tiny_cnn):
    device.workdir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:  # root writes through file modes: a read-only bind mount instead
        ro = subprocess.run(["mount", "--bind", str(device.workdir), str(device.workdir)], capture_output=True)
        if ro.returncode != 0 or subprocess.run(["mount", "-o", "remount,ro,bind", str(device.workdir)],
                                                capture_output=True).returncode != 0:
            pytest.skip("needs bind mounts to make a read-only work dir as root")
        undo = ["umount", "-l", str(device.workdir)]
    else:
        device.workdir.chmod(0o555)
        undo = ["chmod", "755", str(device.workdir)]
    try:
        with pytest.raises(RunnerError) as info:
            device.runner().run(QUICK, tiny_cnn)
    finally:
        subprocess.run(undo, check=False)
    message = str(info.value)
    assert "\n" not in message and ("read-only" in message or "Permission denied" in message), message
    assert_device_clean(device)
    record("read-only device work dir")


def _mount_tmpfs(path, size: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


def test_full_disk_on_the_device_is_one_clear_error_and_leaves_no_partial_entry(device, tmp_path):
    if not _mount_tmpfs(device.workdir, "2m"):
        pytest.skip("needs root and tmpfs mounts to make a small device disk")
    try:
        from tests.conftest import make_matmul_model

        model = make_matmul_model(tmp_path / "big.onnx", k=1024, n=1024)  # 4 MiB > 2 MiB disk
        with pytest.raises(RunnerError) as info:
            device.runner().run(QUICK, model)
        message = str(info.value)
        assert "\n" not in message and "uploading the model" in message and "disk is full" in message, message
        cache = device.workdir / "cache"
        assert not [p for p in cache.iterdir() if p.name.startswith(".tmp-")]  # the partial upload was removed
        assert_device_clean(device)
        record("device disk full during upload")
    finally:
        subprocess.run(["umount", "-l", str(device.workdir)], check=False)


def test_device_reboot_between_runs_and_mid_run(device, tiny_cnn):
    runner = device.runner()
    assert runner.run(QUICK, tiny_cnn).ok
    first = device.sshd.proc.pid
    device.sshd.stop()
    device.sshd.start()  # same host key, new PID: a reboot as the host sees it
    assert device.sshd.proc.pid != first
    assert runner.run(QUICK, tiny_cnn).ok
    record("device rebooted between runs")
    box: dict = {}

    def target() -> None:
        try:
            runner.run(Request(model_path="", iterations=10, min_duration_s=30, max_duration_s=60), tiny_cnn)
        except RunnerError as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    assert wait_for(lambda: device.lock_file.exists(), 60)
    device.sshd.kill_hard()  # mid-run: every session gone at once
    device.sshd.start()
    thread.join(timeout=60)
    assert "lost the connection" in str(box.get("error")), box
    assert_device_clean(device)
    assert runner.run(QUICK, tiny_cnn).ok
    record("device rebooted mid-run")
