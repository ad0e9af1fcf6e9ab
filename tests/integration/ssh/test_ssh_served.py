"""The served agent over SSH: one ``edgeopt_agent serve`` on the device, on one exec channel, for many requests.

Before, every SSH request was a fresh remote agent (a connection, a process start, the runtimes' imports, a job
directory) and ``agent_session`` gave the SSH runner back as it was; a sweep over SSH paid that ~100 times. These
tests hold the served SSH agent to the one-shot runs: same results, one remote process, the loaded model kept, a
deadline or a lost link a RunnerError with the next request on a new agent, one-shot again when switched off or
when the device's agent cannot serve.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from edgeopt.errors import RunnerError
from edgeopt.evaluation import device_outputs
from edgeopt.runners.served import ENV_SWITCH, ServedRunner, agent_session
from edgeopt.runners.ssh_session import SshTimeouts
from edgeopt_agent.protocol import Request
from tests.fake_agent import python_without_serve
from tests.integration.ssh.conftest import DEVICE_PYTHON, Device
from tests.integration.ssh.sshd import processes_mentioning
from tests.waiting import wait_for

FAST = {"iterations": 10, "min_duration_s": 0.05, "warmup": 1}


def _pids(events: list[dict]) -> list[int]:
    return [int(e["pid"]) for e in events if e.get("event") == "start"]


def _eval_npz(path: Path) -> Path:
    np.savez(path, input=np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32))
    return path


def _clean(device: Device) -> bool:
    return not processes_mentioning(str(device.workdir)) and not device.lock_file.exists()


def test_runs_and_an_evaluate_go_to_one_remote_agent_with_one_shot_results(shared_device: Device, tiny_cnn: Path,
                                                                            tmp_path: Path):
    runner = shared_device.runner()
    data = _eval_npz(tmp_path / "eval.npz")
    events: list[dict] = []
    with agent_session(runner) as served:
        runs = [served.run(Request(model_path="", **FAST), tiny_cnn, events.append) for _ in range(2)]
        outs, names, _ = device_outputs(tiny_cnn, data, runtime="onnxruntime", runner=served)
        assert isinstance(served, ServedRunner) and served.agent.started == 1 and served.agent.answered == 3
        assert processes_mentioning(str(shared_device.workdir)), "the agent waits on the device for more"
    pids = _pids(events)
    assert len(pids) == 2 and len(set(pids)) == 1  # both runs: the same remote process
    one_shot = runner.run(Request(model_path="", **FAST), tiny_cnn)
    for raw in runs:
        assert raw.ok, raw.error
        assert set(raw.to_dict()) == set(one_shot.to_dict())
        assert set(raw.environment) == set(one_shot.environment) and raw.runtime["name"] == "onnxruntime"
    fresh, fresh_names, _ = device_outputs(tiny_cnn, data, runtime="onnxruntime", runner=runner)
    assert names == fresh_names
    np.testing.assert_allclose(outs[0], fresh[0], rtol=1e-5, atol=1e-6)
    assert wait_for(lambda: _clean(shared_device), 15), "closing the session ends the agent and frees the lock"
    assert shared_device.job_dirs() == []  # the evaluate's job directory (its outputs) removed after the fetch


def test_a_repeated_run_reuses_the_loaded_model_on_the_device(shared_device: Device, tiny_cnn: Path):
    with shared_device.runner().served() as served:
        first, second = (served.run(Request(model_path="", **FAST), tiny_cnn) for _ in range(2))
    assert first.ok and second.ok, (first.error, second.error)
    assert first.runtime.get("reused_load") is None or first.runtime.get("reused_load") is False
    assert second.runtime.get("reused_load") is True and second.load_ms == 0 and first.load_ms > 0


def test_serving_off_keeps_one_agent_per_request(shared_device: Device, tiny_cnn: Path,
                                                 monkeypatch: pytest.MonkeyPatch):
    runner = shared_device.runner()
    for switch, processes in (("0", 2), ("1", 1)):
        monkeypatch.setenv(ENV_SWITCH, switch)
        events: list[dict] = []
        with agent_session(runner) as session:
            for _ in range(2):
                assert session.run(Request(model_path="", **FAST), tiny_cnn, events.append).ok
            assert (session is runner) is (switch == "0")
        assert len(set(_pids(events))) == processes, switch


def test_a_request_past_its_deadline_closes_the_channel_and_the_next_gets_a_new_agent(device: Device,
                                                                                      tiny_cnn: Path):
    served = device.runner(timeouts=SshTimeouts(run_grace_s=2, lock_wait_s=0)).serving()
    try:
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok
        started = time.monotonic()
        with pytest.raises(RunnerError, match=r"did not answer within 3 s") as err:
            # A 60 s warm-up outlives max_duration_s (1) + grace (2): the host closes the served channel (another
            # thread count: a fresh load, since a kept model warms up by count only).
            served.run(Request(model_path="", warmup_s=60, min_duration_s=0.1, max_duration_s=1, threads=1),
                       tiny_cnn)
        assert time.monotonic() - started < 15 and device.sshd.spec.split("@")[1] in str(err.value)
        assert wait_for(lambda: _clean(device), 15), "the agent saw its channel close and stopped itself"
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok and served.agent.started == 2
    finally:
        served.close()
    assert wait_for(lambda: _clean(device), 15)


def test_a_dropped_connection_fails_the_request_and_the_next_one_reconnects(device: Device, tiny_cnn: Path):
    served = device.runner(timeouts=SshTimeouts(dead_after_s=10)).serving()
    box: dict = {}

    def kill_in_timed_loop(event: dict) -> None:
        if event.get("phase") == "timed" and "killed" not in box:
            box["killed"] = True
            threading.Timer(0.3, device.sshd.kill_hard).start()

    try:
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok
        with pytest.raises(RunnerError, match="lost the connection") as err:
            served.run(Request(model_path="", iterations=10, min_duration_s=30, max_duration_s=60), tiny_cnn,
                       kill_in_timed_loop)
        assert "\n" not in str(err.value)
        assert wait_for(lambda: _clean(device), 15), "the agent saw its session end and stopped itself"
        device.sshd.start()
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok and served.agent.started == 2
    finally:
        served.close()


def test_an_agent_that_cannot_serve_falls_back_to_one_shot_runs(device: Device, tiny_cnn: Path, tmp_path: Path):
    # an agent from before `serve`: argparse refuses the command
    old = python_without_serve(tmp_path / "python-without-serve", DEVICE_PYTHON)
    infos: list[dict] = []
    events: list[dict] = []
    with agent_session(device.runner(python=str(old)), on_info=infos.append) as served:
        runs = [served.run(Request(model_path="", **FAST), tiny_cnn, events.append) for _ in range(2)]
        assert isinstance(served, ServedRunner) and not served.serving and served.agent.started == 1
    assert all(r.ok for r in runs) and len(set(_pids(events))) == 2  # one-shot: an agent each
    assert len(infos) == 1 and infos[0]["event"] == "info" and "invalid choice" in infos[0]["message"]
    assert _clean(device) and device.job_dirs() == []
