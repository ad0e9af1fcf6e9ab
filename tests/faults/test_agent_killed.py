"""The agent killed on the device at each phase: the host says which signal, after how long, where; the next
run succeeds with no manual cleanup."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import time

import pytest

from edgeopt.errors import RunnerError
from edgeopt_agent.protocol import Request
from tests.faults.helpers import assert_device_clean, record

# phase the kill waits for -> the words the error must use; the request makes that phase last long enough.
PHASES = {
    "lock_wait": ("waiting for the device lock", {}),
    "warmup": ("the warm-up", {"warmup_s": 30.0}),
    "timed": ("the timed loop", {"min_duration_s": 30.0}),
}


def _hold_lock(device) -> int:
    device.lock_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(device.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, json.dumps({"pid": os.getpid(), "since": time.time(), "host": "test"}).encode())
    return fd


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("phase", list(PHASES))
def test_agent_killed_in_a_phase_is_reported_and_the_next_run_succeeds(shared_device, tiny_cnn, phase, sig):
    words, fields = PHASES[phase]
    held = _hold_lock(shared_device) if phase == "lock_wait" else None
    events: list[dict] = []

    def kill_in_phase(event: dict) -> None:
        events.append(event)
        if event.get("event") == "phase" and event.get("phase") == phase:
            os.kill(next(e["pid"] for e in events if e.get("event") == "start"), sig)

    request = Request(model_path="", iterations=10, max_duration_s=60, progress_interval_s=0,
                      **{"min_duration_s": 0.1, **fields})
    try:
        with pytest.raises(RunnerError) as info:
            shared_device.runner().run(request, tiny_cnn, kill_in_phase)
    finally:
        if held is not None:
            os.close(held)
    message = str(info.value)
    assert "\n" not in message
    assert re.search(rf"was killed by {sig.name} after \d+\.\d s in {words}; no result kept", message), message
    assert_device_clean(shared_device)
    assert shared_device.job_dirs() == []
    raw = shared_device.runner().run(Request(model_path="", iterations=10, min_duration_s=0.05), tiny_cnn)
    assert raw.ok
    record("agent killed (SIGKILL/SIGTERM) at a phase, over SSH")
