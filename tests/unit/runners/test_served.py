"""One agent process answering many requests (``edgeopt_agent serve`` behind :class:`ServedRunner`).

A PP-OCRv4 rec sweep sent ~135 requests to the local agent, each a fresh process paying its start and the runtimes'
imports: ~60 % of the sweep's wall time (issue 21, "fast enough"). The served agent answers them in one process;
these tests hold it to the one-shot agent's behaviour: same results, the lock per request, a death or a hang is a
RunnerError naming it and the next request gets a new process, and serving can be turned off.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from edgeopt.errors import RunnerError
from edgeopt.evaluation import device_outputs
from edgeopt.runners import LocalRunner
from edgeopt.runners.agent_pipe import PopenPipe
from edgeopt.runners.served import ENV_SWITCH, ServedAgent, ServedRunner, ServeSpec, agent_session
from edgeopt_agent.loaded import REUSED_WARMUP
from edgeopt_agent.lock import DeviceLock, LockBusy
from edgeopt_agent.protocol import Request

FAST = {"iterations": 10, "min_duration_s": 0.05, "warmup": 1}


def _starts(events: list[dict]) -> list[dict]:
    return [e for e in events if e.get("event") == "start"]


def test_many_requests_are_answered_by_one_process_with_one_shot_results(tiny_cnn: Path, tmp_path: Path):
    x = np.random.default_rng(0).standard_normal((4, 3, 32, 32)).astype(np.float32)
    np.savez(tmp_path / "eval.npz", input=x)
    events: list[dict] = []
    with LocalRunner().served() as served:
        for _ in range(3):
            raw = served.run(Request(model_path="", **FAST), tiny_cnn, events.append)
            assert raw.ok, raw.error
        outs, _, _ = device_outputs(tiny_cnn, tmp_path / "eval.npz", runtime="onnxruntime", runner=served)
        assert served.agent.started == 1 and served.agent.answered == 4
    pids = {e["pid"] for e in _starts(events)}
    assert len(_starts(events)) == 3 and len(pids) == 1  # one process, one start event per request
    assert all(e.get("peak_reset") is True for e in _starts(events))  # Linux: VmHWM reset before each request
    fresh, _, _ = device_outputs(tiny_cnn, tmp_path / "eval.npz", runtime="onnxruntime", runner=LocalRunner())
    np.testing.assert_allclose(outs[0], fresh[0], rtol=1e-5, atol=1e-6)


def test_an_agent_killed_mid_request_is_named_and_the_next_request_gets_a_new_one(tiny_cnn: Path):
    served = LocalRunner().serving()
    pid: list[int] = []

    def progress(event: dict) -> None:
        if event.get("event") == "phase" and event.get("phase") == "timed":
            os.kill(pid[0], signal.SIGKILL)
        if event.get("event") == "start":
            pid.append(int(event["pid"]))

    try:
        with pytest.raises(RunnerError, match="SIGKILL"):
            served.run(Request(model_path="", iterations=10, min_duration_s=5.0), tiny_cnn, progress)
        raw = served.run(Request(model_path="", **FAST), tiny_cnn)
        assert raw.ok and served.agent.started == 2
    finally:
        served.close()


def test_a_request_past_its_deadline_kills_the_agent(tiny_cnn: Path):
    base = LocalRunner()
    argv = (base.python, "-m", "edgeopt_agent", "serve")
    spec = ServeSpec(start=lambda: PopenPipe.start(argv, base._env()), where="local", grace_s=0.5)
    served = ServedRunner(base, ServedAgent(spec))
    try:
        t0 = time.monotonic()
        with pytest.raises(RunnerError, match="did not answer within"):  # a hung agent: stopped at its start
            served.run(Request(model_path="", max_duration_s=1.0, **FAST), tiny_cnn,
                       lambda e: os.kill(int(e["pid"]), signal.SIGSTOP) if e.get("event") == "start" else None)
        assert time.monotonic() - t0 < 15
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok and served.agent.started == 2
    finally:
        served.close()


def test_the_lock_is_held_per_request_not_while_idle(tiny_cnn: Path, tmp_path: Path):
    locks = tmp_path / "locks"
    with LocalRunner(lock_dir=locks).served() as served:
        assert served.run(Request(model_path="", **FAST), tiny_cnn).ok
        # the served agent is idle: a one-shot run that will not wait gets the machine at once
        other = LocalRunner(lock_dir=locks, lock_wait_s=0.0).run(Request(model_path="", **FAST), tiny_cnn)
        assert other.ok, other.error
        seen: dict[str, object] = {}

        def progress(event: dict) -> None:  # the served agent is measuring now: it holds the lock
            if event.get("event") == "phase" and event.get("phase") == "timed" and "busy" not in seen:
                # Checked in this process the moment the agent says "timed" (its timed phase lasts >= 3 s): a
                # one-shot agent started here would need seconds of imports first, which a loaded machine can
                # stretch past the served run's end (the verdict then depended on the machine being quiet).
                probe = DeviceLock(str(locks))
                try:
                    probe.acquire(0.0)
                    seen["busy"] = None
                    probe.release()
                except LockBusy as exc:
                    seen["busy"] = exc

        held = served.run(Request(model_path="", iterations=10, min_duration_s=3.0), tiny_cnn, progress)
    assert isinstance(seen["busy"], LockBusy), "the served agent did not hold the lock while measuring"
    assert held.ok


def test_serving_can_be_turned_off(monkeypatch):
    base = LocalRunner()
    monkeypatch.setenv(ENV_SWITCH, "0")
    with agent_session(base) as runner:
        assert runner is base
    monkeypatch.setenv(ENV_SWITCH, "1")
    with agent_session(base) as runner:
        assert isinstance(runner, ServedRunner) and runner.name == base.name


def test_a_runner_that_cannot_serve_is_used_as_it_is():
    class Plain:
        name = "plain"

    plain = Plain()
    with agent_session(plain) as runner:  # type: ignore[arg-type]
        assert runner is plain


def test_repeated_runs_reuse_the_loaded_model_only_under_the_same_key(tiny_cnn: Path, tmp_path: Path):
    copy = tmp_path / "m.onnx"
    copy.write_bytes(tiny_cnn.read_bytes())
    with LocalRunner().served() as served:
        runs = [served.run(Request(model_path="", **FAST), copy) for _ in range(2)]
        other_threads = served.run(Request(model_path="", threads=1, **FAST), copy)
        copy.write_bytes(tiny_cnn.read_bytes() + b"")  # rewritten: a new file, whatever its bytes
        os.utime(copy, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        rewritten = served.run(Request(model_path="", **FAST), copy)
        served.keep_loaded = False
        not_kept = served.run(Request(model_path="", **FAST), copy)
    reused = [r.runtime.get("reused_load", False) for r in (*runs, other_threads, rewritten, not_kept)]
    assert reused == [False, True, False, False, False]
    assert runs[1].load_ms == 0 and runs[0].load_ms > 0 and runs[1].ok and len(runs[1].samples_ns) >= 10
    assert LocalRunner().run(Request(model_path="", **FAST), copy).runtime.get("reused_load") is None


def test_a_kept_model_warms_up_once_not_for_the_count_or_the_time(tiny_cnn: Path, tmp_path: Path):
    """A model a served agent kept loaded warmed up for ``warmup`` and ``warmup_s`` when it was loaded: a later run
    of it (a sweep's next interleaved round) runs its untimed first inference and :data:`loaded.REUSED_WARMUP` more
    (issue 32: the sweep's 5-inference warm-up repeated on every round of a kept PP-OCRv4 det level was ~10 % of the
    round's inferences); a fresh load warms up for the whole count and ``warmup_s``; a request asking for less
    warm-up than that gets what it asked for."""
    copy = tmp_path / "m.onnx"
    copy.write_bytes(tiny_cnn.read_bytes())
    request = Request(model_path="", warmup_s=0.4, **{**FAST, "warmup": 5})
    with LocalRunner().served() as served:
        first, again = (served.run(request, copy) for _ in range(2))
        none = served.run(Request(model_path="", warmup_s=0.4, **{**FAST, "warmup": 0}), copy)
    assert first.warmup_done["iterations"] >= 5 and first.warmup_done["duration_s"] >= 0.4
    assert not first.runtime.get("reused_load") and again.runtime.get("reused_load") and none.runtime.get("reused_load")
    assert again.warmup_done["iterations"] == REUSED_WARMUP == 1 and none.warmup_done["iterations"] == 0
    assert again.ok and len(again.samples_ns) >= FAST["iterations"]
