"""A served agent waits until the thread pools of the models it keeps rest before it times a run (quiet.py).

Issue 32: ONNX Runtime's intra-op workers spin after a session's last inference; in a served agent that keeps
several levels loaded, a level timed right after another ORT level shared the cores with that spinning thread, and
the sweep's ranking read FP32 as slow as FP16. A deployment runs one model in its own process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from edgeopt.runners.base import agent_dir
from edgeopt_agent.quiet import wait_quiet


class _FakeProcess:
    """A process whose threads burn one core for ``busy_windows`` windows, then rest (no real sleeping)."""

    def __init__(self, busy_windows: int) -> None:
        self.now, self.cpu_s, self.busy_windows = 0.0, 0.0, busy_windows

    def sleep(self, s: float) -> None:
        self.now += s
        if self.busy_windows > 0:
            self.cpu_s += s
            self.busy_windows -= 1


def test_waits_until_the_process_rests_for_windows_in_a_row():
    p = _FakeProcess(busy_windows=5)
    got = wait_quiet(window_s=0.01, windows=3, max_wait_s=1.0, cpu=lambda: p.cpu_s, clock=lambda: p.now,
                     sleep=p.sleep)
    assert got["quiet"] is True and got["waited_s"] == 0.08  # 5 busy windows, then 3 quiet ones


def test_a_pool_that_never_rests_stalls_the_run_only_up_to_the_limit():
    p = _FakeProcess(busy_windows=10_000)
    got = wait_quiet(window_s=0.01, max_wait_s=0.2, cpu=lambda: p.cpu_s, clock=lambda: p.now, sleep=p.sleep)
    assert got["quiet"] is False and 0.2 <= got["waited_s"] < 0.22 and got["cpu_share"] == 1.0


def test_a_real_busy_thread_is_waited_out():
    stop = threading.Event()

    def burn() -> None:  # a runtime's worker spinning for 0.3 s of CPU after its last job
        end = time.thread_time() + 0.3
        while time.thread_time() < end and not stop.is_set():
            pass

    worker = threading.Thread(target=burn, daemon=True)
    worker.start()
    try:
        # six quiet windows in a row (0.3 s): a loaded machine may leave the spinning thread without a core for a
        # window or two, which would read as quiet before it is done
        got = wait_quiet(window_s=0.05, windows=6, max_wait_s=30.0)
        assert got["quiet"] is True and not worker.is_alive()
    finally:
        stop.set()


def _serve(messages: list[dict]) -> list[dict]:
    lines = "".join(json.dumps(m) + "\n" for m in messages)
    proc = subprocess.run([sys.executable, "-m", "edgeopt_agent", "serve"], input=lines, text=True,
                          capture_output=True, timeout=180, env={"PYTHONPATH": str(agent_dir())}, check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_a_served_run_beside_kept_models_waits_for_them_and_says_so(tiny_cnn: Path, tmp_path: Path):
    other = shutil.copy(tiny_cnn, tmp_path / "other.onnx")  # another level: another ORT session and thread pool
    req = {"iterations": 5, "min_duration_s": 0.0, "warmup": 1, "runtime": "onnxruntime", "threads": 2}
    first, second, again = _serve([
        {"command": "run", "request": {**req, "model_path": str(tiny_cnn)}, "keep_loaded": True},
        {"command": "run", "request": {**req, "model_path": str(other)}, "keep_loaded": True},
        {"command": "run", "request": {**req, "model_path": str(tiny_cnn)}, "keep_loaded": True}])
    assert [r["status"] for r in (first, second, again)] == ["ok", "ok", "ok"]
    assert "quiesce" not in first["environment"]  # nothing else resident: nothing to wait for
    for r in (second, again):  # the other level's session is resident (and spun after its last inference)
        q = r["environment"]["quiesce"]
        assert set(q) == {"waited_s", "quiet", "cpu_share"} and q["waited_s"] > 0
    assert again["runtime"].get("reused_load") is True
