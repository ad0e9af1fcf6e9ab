"""The local runner: the agent as a real subprocess, same protocol as a remote run."""

from __future__ import annotations

import os
import re
import signal
import stat
from pathlib import Path

import pytest

from edgeopt.errors import InputError, RunnerError
from edgeopt.runners import LocalRunner, raise_for_error
from edgeopt.runners.base import parse_progress_line
from edgeopt_agent.protocol import Request


def test_local_runner_returns_raw_run_and_streams_progress(tiny_cnn):
    events: list[dict] = []
    raw = LocalRunner().run(Request(model_path="ignored", iterations=20, min_duration_s=0.3,
                                    progress_interval_s=0.1), tiny_cnn, events.append)
    assert raw.ok and len(raw.samples_ns) >= 20
    assert raw.request["model_path"] == str(tiny_cnn.resolve())
    assert [e["phase"] for e in events if e["event"] == "phase"] == ["load", "warmup", "timed"]
    assert any(e["event"] == "progress" for e in events)


def test_agent_runs_with_a_clean_environment(tiny_cnn, monkeypatch):
    monkeypatch.setenv("EDGEOPT_SECRET_TOKEN", "x")
    runner = LocalRunner()
    env = runner._env()
    assert "EDGEOPT_SECRET_TOKEN" not in env and env["PYTHONPATH"].endswith("device_agent")


def test_input_error_on_agent_becomes_input_error(tiny_cnn):
    raw = LocalRunner().run(Request(model_path="", shapes={"nope": [1]}), tiny_cnn)
    with pytest.raises(InputError, match="nope"):
        raise_for_error(raw, "local")


def test_missing_interpreter_is_a_runner_error(tiny_cnn):
    with pytest.raises(RunnerError, match="--python"):
        LocalRunner(python="/nonexistent/python3").run(Request(model_path=""), tiny_cnn)


def test_agent_that_dies_without_result_is_a_runner_error(tiny_cnn, tmp_path: Path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(RunnerError, match="killed by SIGSEGV after .* s in start-up; no result kept.*"
                                          "its last output: Segmentation fault"):
        LocalRunner(python=str(fake)).run(Request(model_path=""), tiny_cnn)


def test_an_agent_killed_by_sigill_is_told_to_reinstall_the_runtime_not_to_run_again(tiny_cnn, tmp_path: Path):
    """A runtime built for instructions this CPU lacks dies the same way every time (a native llama.cpp build ran
    AMX's tilezero on a KVM guest, session 19): the message says so instead of "run again"."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\nkill -ILL $$\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(RunnerError) as err:
        LocalRunner(python=str(fake)).run(Request(model_path=""), tiny_cnn)
    message = str(err.value)
    assert "killed by SIGILL" in message and "instruction this CPU" in message and "reinstall that runtime" in message
    assert "run again" not in message and "\n" not in message


def test_agent_killed_mid_run_says_signal_time_and_phase(tiny_cnn):
    events: list[dict] = []

    def kill_when_timed(event: dict) -> None:
        events.append(event)
        if event.get("phase") == "timed":
            os.kill(next(e["pid"] for e in events if e.get("event") == "start"), signal.SIGKILL)

    request = Request(model_path="", iterations=10, min_duration_s=30, max_duration_s=60, progress_interval_s=0)
    with pytest.raises(RunnerError) as info:
        LocalRunner().run(request, tiny_cnn, kill_when_timed)
    message = str(info.value)
    assert re.fullmatch(r"the agent on local was killed by SIGKILL after \d+\.\d s in the timed loop; "
                        r"no result kept: run again", message), message


def test_progress_lines_are_parsed_and_logs_are_not():
    assert parse_progress_line('{"event": "phase", "phase": "load"}') == {"event": "phase", "phase": "load"}
    assert parse_progress_line("2026-01-01 onnxruntime warning") is None
    assert parse_progress_line('{"no_event": 1}') is None
