"""Two local runs at once take turns on this machine's lock (issue 23, item 6).

Two local sweeps started in two terminals measured each other 28-45 % slower with no warning: a device had a
lock, the local CPU did not. The local runner now takes the agent's device lock in a directory of this machine,
so the second run waits for the first (and says so on stderr) instead of sharing the cores with it.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from edgeopt.config import ENV_LOCK_DIR
from edgeopt.runners import LocalRunner
from edgeopt_agent.protocol import Request


def test_local_runs_at_once_take_turns_and_say_they_wait(tiny_cnn: Path, tmp_path: Path, capsys):
    spans: dict[str, list[float]] = {"a": [], "b": []}
    events: dict[str, list[dict]] = {"a": [], "b": []}
    raws = {}

    def progress(name: str, event: dict) -> None:
        events[name].append(event)
        if event.get("phase") == "timed" and event.get("event") == "phase":
            spans[name].append(time.monotonic())
        if event.get("event") == "progress" and event.get("final"):
            spans[name].append(time.monotonic())

    def run(name: str, delay_s: float) -> None:
        time.sleep(delay_s)
        raws[name] = LocalRunner(lock_dir=tmp_path / "locks").run(
            Request(model_path="", iterations=20, min_duration_s=1.5, progress_interval_s=0.1), tiny_cnn,
            lambda e: progress(name, e))

    threads = [threading.Thread(target=run, args=("a", 0.0)), threading.Thread(target=run, args=("b", 0.3))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert raws["a"].ok and raws["b"].ok
    first, second = sorted(spans.values(), key=lambda s: s[0])
    assert len(first) == len(second) == 2 and first[1] <= second[0], spans  # the timed phases never overlapped
    waited = [n for n, evs in events.items() if any(e.get("phase") == "lock_wait" for e in evs)]
    assert len(waited) == 1, events
    err = capsys.readouterr().err
    assert "another local run (pid " in err and "waiting for it to finish" in err
    assert not (tmp_path / "locks" / "device.lock").exists()  # released


def test_the_lock_lives_where_the_environment_says(monkeypatch, tmp_path: Path):
    monkeypatch.setenv(ENV_LOCK_DIR, str(tmp_path / "here"))
    assert LocalRunner().lock_dir == tmp_path / "here"
    assert os.environ[ENV_LOCK_DIR] == str(tmp_path / "here")
