"""Faults against a real sshd: a busy device, sshd killed mid-run, a run that overstays its deadline."""

from __future__ import annotations

import threading
import time

import pytest

from edgeopt.errors import RunnerError
from edgeopt.runners import AgentError, raise_for_error
from edgeopt.runners.ssh_session import SshTimeouts
from edgeopt_agent.protocol import Request
from tests.integration.ssh.sshd import processes_mentioning
from tests.waiting import wait_for


def _run_in_thread(runner, request, model):
    box: dict = {"events": []}

    def target():
        started = time.monotonic()
        try:
            box["raw"] = runner.run(request, model, box["events"].append)
        except Exception as exc:  # the test inspects it
            box["error"] = exc
        box["elapsed_s"] = time.monotonic() - started

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def _timed_started(box) -> bool:
    return any(e.get("phase") == "timed" for e in box["events"])


def test_second_job_waits_for_the_device_lock_and_both_are_valid(device, tiny_cnn):
    device.runner().run(Request(model_path="", iterations=10, min_duration_s=0.05), tiny_cnn)  # warm the cache
    request = Request(model_path="", iterations=20, min_duration_s=1.5)
    (t1, b1), (t2, b2) = (_run_in_thread(device.runner(), request, tiny_cnn) for _ in range(2))
    for t in (t1, t2):
        t.join(timeout=120)
    for box in (b1, b2):
        assert "error" not in box and box["raw"].ok, box
    waited = [any(e.get("phase") == "lock_wait" for e in box["events"]) for box in (b1, b2)]
    assert sorted(waited) == [False, True]  # exactly one of them had to wait
    late = b1 if waited[0] else b2
    assert late["elapsed_s"] > 1.5  # it waited for the whole timed phase of the other
    assert not device.lock_file.exists() and device.job_dirs() == []


def test_short_lock_wait_fails_clearly_as_data(device, tiny_cnn):
    holder, box = _run_in_thread(device.runner(), Request(model_path="", iterations=20, min_duration_s=4), tiny_cnn)
    assert wait_for(lambda: _timed_started(box), 60)
    impatient = device.runner(timeouts=SshTimeouts(lock_wait_s=0.3))
    raw = impatient.run(Request(model_path="", iterations=20, min_duration_s=0.1), tiny_cnn)
    assert not raw.ok and raw.error_kind == "timeout"
    assert "device busy" in (raw.error or "") and "longer lock wait" in (raw.error or "")
    with pytest.raises(AgentError, match="device busy"):
        raise_for_error(raw, impatient.name)
    holder.join(timeout=60)
    assert box["raw"].ok and not device.lock_file.exists()


def test_sshd_killed_mid_run_gives_a_clear_error_and_leaves_nothing_running(device, tiny_cnn):
    runner = device.runner(timeouts=SshTimeouts(dead_after_s=10))
    # No progress lines: an agent writing to a dead pipe would die of that; this one must notice on its own.
    request = Request(model_path="", iterations=10, min_duration_s=60, max_duration_s=120, progress_interval_s=0)
    thread, box = _run_in_thread(runner, request, tiny_cnn)
    assert wait_for(lambda: device.lock_file.exists() and processes_mentioning(str(device.workdir)), 60), box
    time.sleep(0.5)  # into the timed loop
    killed_at = time.monotonic()
    device.sshd.kill_hard()
    thread.join(timeout=30)
    assert not thread.is_alive(), "the runner did not give up"
    assert time.monotonic() - killed_at < 15
    err = box.get("error")
    assert isinstance(err, RunnerError) and "lost the connection" in str(err) and "\n" not in str(err)
    # The agent noticed its session was gone (stdin EOF), ended itself and released the lock.
    assert wait_for(lambda: not processes_mentioning(str(device.workdir)), 15), processes_mentioning(
        str(device.workdir))
    assert not device.lock_file.exists()


def test_run_past_its_deadline_is_stopped_and_cleaned_up(device, tiny_cnn):
    runner = device.runner(timeouts=SshTimeouts(run_grace_s=2, lock_wait_s=0))
    started = time.monotonic()
    with pytest.raises(RunnerError, match="did not finish within 3 s"):
        # A 60 s warm-up outlives max_duration_s (1) + grace (2): the host stops waiting and closes the channel.
        runner.run(Request(model_path="", warmup_s=60, min_duration_s=0.1, max_duration_s=1), tiny_cnn)
    assert time.monotonic() - started < 20
    assert wait_for(lambda: not processes_mentioning(str(device.workdir)), 15)
    assert not device.lock_file.exists()
    assert wait_for(lambda: device.job_dirs() == [], 5)
