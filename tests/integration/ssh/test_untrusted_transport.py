"""The transport from an untrusted board (docs/reliability.md, "Untrusted device: transport"), over the loopback
sshd with tests/fake_agent.py's lying interpreter: a large honest result arrives whole, a result that never ends
(a FIFO, a link to /dev/zero) is refused before it is read, the job directory goes on every exit path, and a
flood of progress events is summarised, not echoed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from edgeopt.errors import RunnerError
from edgeopt.runners.event_gate import EVENT_BURST
from edgeopt.runners.ssh_cache import TransferStats
from edgeopt.runners.ssh_session import SshTimeouts
from edgeopt_agent.protocol import Request
from tests.fake_agent import EVENT_FLOOD, PAD_ITEMS, fake_python
from tests.integration.ssh.conftest import Device

FAST = dict(iterations=20, min_duration_s=0.05, warmup=2, max_duration_s=5.0)


def test_a_40_mb_result_arrives_whole(shared_device: Device, tiny_cnn: Path, tmp_path: Path):
    # fetch_s 20: far beyond what a linear fetch takes (~1 s here), far below what one read(limit + 1) did (57 s)
    runner = shared_device.runner(python=str(fake_python(tmp_path, "padded")), timeouts=SshTimeouts(fetch_s=20))
    raw = runner.run(Request(model_path="", **FAST), tiny_cnn)
    pad = raw.environment["pad"]
    assert raw.ok and len(pad) == PAD_ITEMS
    assert all(p == f"{i:08d}" + "x" * 992 for i, p in enumerate(pad))
    assert not shared_device.job_dirs()


@pytest.mark.parametrize(("mode", "kind"), [("fifo", "a FIFO"), ("devzero", "a character device")])
def test_a_result_that_never_ends_is_refused_before_reading(shared_device: Device, tiny_cnn: Path,
                                                            tmp_path: Path, mode: str, kind: str):
    runner = shared_device.runner(python=str(fake_python(tmp_path, mode)))
    with pytest.raises(RunnerError, match=f"result.json as {kind}, not a regular file") as err:
        runner.run(Request(model_path="", **FAST), tiny_cnn)
    assert "/jobs/" in str(err.value) and "\n" not in str(err.value)
    assert not shared_device.job_dirs()


def test_the_job_directory_goes_after_a_step_timed_out(shared_device: Device, tiny_cnn: Path):
    """A step past its deadline (a fetch that timed out) closes the connection: the job directory is removed
    through a new one (it stayed on the device, 500 MB in one case)."""
    runner = shared_device.runner()
    request = Request(model_path="", **FAST)
    with runner._session() as s:
        workdir = s.remote_path(runner.address.workdir)
        with pytest.raises(RunnerError, match="timed out"), \
                runner.staged(s, workdir, request, runner.bundles(request, tiny_cnn), TransferStats(),
                              lambda e: None) as (_, job):
            assert shared_device.job_dirs() == [Path(job)]
            with s.step("fetching the result", 0.2):
                while s.alive:  # the step's timer closes the connection
                    time.sleep(0.05)
                s.sftp.stat(job)
        assert not s.alive
    assert not shared_device.job_dirs()


def test_a_flood_of_progress_events_is_summarised(shared_device: Device, tiny_cnn: Path, tmp_path: Path):
    runner = shared_device.runner(python=str(fake_python(tmp_path, "event_flood")))
    seen: list[dict] = []
    raw = runner.run(Request(model_path="", **FAST), tiny_cnn, seen.append)
    assert raw.ok, raw.error
    flood = [e for e in seen if e.get("phase") == "flood"]
    notes = [e["message"] for e in seen if e["event"] == "notice" and "more progress events" in e["message"]]
    assert len(flood) < EVENT_FLOOD // 10 and len(notes) == 1
    dropped = int(notes[0].split(" sent ")[1].split(" more")[0].replace(",", ""))
    assert dropped >= EVENT_FLOOD - len(flood)
    assert len(flood) >= min(EVENT_BURST, EVENT_FLOOD)


@pytest.mark.parametrize(("mode", "needle"), [("budget_ints", "more than an agent's result holds"),
                                              ("samples_120mb", "flooded its result.json"),
                                              ("result_500mb", "flooded its result.json")])
def test_a_result_the_host_cannot_afford_is_refused_unparsed(shared_device: Device, tiny_cnn: Path, tmp_path: Path,
                                                             mode: str, needle: str):
    """A result of small integers at the old 128 MiB budget cost the host 1.8 GB of RSS over SSH: refused by its
    count of values before parsing; 120 MB of samples, once parsed whole, is over the budget (refused by its size
    before it is read), as is 500 MB (docs/reliability.md, "Untrusted device: host cost")."""
    runner = shared_device.runner(python=str(fake_python(tmp_path, mode)))
    with pytest.raises(RunnerError, match=needle) as err:
        runner.run(Request(model_path="", **FAST), tiny_cnn)
    assert "\n" not in str(err.value)
    assert not shared_device.job_dirs()
