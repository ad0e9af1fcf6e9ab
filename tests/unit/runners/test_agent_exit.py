"""How an agent that ended without a result is described: signal, time, phase, and a probable OOM kill."""

from __future__ import annotations

import time

import pytest

from edgeopt.cli.remote_options import parse_timeouts
from edgeopt.errors import InputError
from edgeopt.runners.agent_exit import AgentTrace, signal_of


def test_exit_statuses_map_to_signals():
    assert signal_of(-9) == 9 and signal_of(137) == 9 and signal_of(143) == 15
    assert signal_of(0) is None and signal_of(1) is None and signal_of(-1) is None and signal_of(None) is None
    assert signal_of(125) is None  # the agent's own "host gone"


def test_sigkill_with_little_memory_at_start_is_called_probably_oom():
    trace = AgentTrace()
    trace.observe({"event": "start", "pid": 42, "memory_available_mb": 90.0, "memory_total_mb": 4096.0})
    trace.observe({"event": "phase", "phase": "load"})
    message = trace.no_result_message(137, "ssh:pi@board:22", "")
    assert "killed by SIGKILL" in message and "in loading the model" in message
    assert "probably out of memory (only 90 MB available at start)" in message and "no result kept" in message


def test_sigkill_with_plenty_of_memory_is_not_called_oom():
    trace = AgentTrace()
    trace.observe({"event": "start", "pid": 42, "memory_available_mb": 3000.0, "memory_total_mb": 4096.0})
    trace.observe({"event": "phase", "phase": "warmup"})
    message = trace.no_result_message(-9, "local", "")
    assert "killed by SIGKILL" in message and "in the warm-up" in message and "memory" not in message


def test_plain_exit_without_result_names_status_phase_and_fix():
    trace = AgentTrace()
    message = trace.no_result_message(1, "local", "ImportError: numpy")
    assert message.startswith("the agent on local ended (exit 1) after ") and "in start-up" in message
    assert "edgeopt devices check" in message and message.endswith("its last output: ImportError: numpy")


def test_ssh_timeouts_parse_from_step_pairs():
    t = parse_timeouts(("connect=5", "upload=300", "lock_wait=0"))
    assert t is not None and (t.connect_s, t.upload_s, t.lock_wait_s, t.fetch_s) == (5, 300, 0, 60)
    assert parse_timeouts(()) is None
    with pytest.raises(InputError, match="STEP one of connect, upload"):
        parse_timeouts(("conect=5",))
    with pytest.raises(InputError, match="connect_s"):
        parse_timeouts(("connect=-1",))


def test_cli_rejects_an_unknown_ssh_timeout_step_in_one_line(tiny_cnn, capsys):
    from edgeopt.cli.main import main

    code = main(["bench", str(tiny_cnn), "--host", "root@127.0.0.1:1", "--ssh-timeout", "bogus=3"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--ssh-timeout 'bogus=3'" in err and "connect" in err


def test_cli_ssh_timeout_applies_to_the_connect_step(tiny_cnn, capsys):
    from edgeopt.cli.main import main

    # A non-routable address either fails at once or hangs until the connect deadline: never beyond 1 s here.
    started = time.monotonic()
    code = main(["bench", str(tiny_cnn), "--host", "root@10.255.255.1:22", "--ssh-timeout", "connect=1",
                 "--accept-new-host-key"])
    err = capsys.readouterr().err
    assert code == 3 and time.monotonic() - started < 10, err
    assert "timed out after 1 s" in err or "failed" in err
