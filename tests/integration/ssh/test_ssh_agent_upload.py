"""Issue 23 item 14: the agent travels as one archive, unpacked on the device by its own Python, so the first
upload costs a few round trips instead of several per source file (37 files took 45 s at 200 ms round-trip time).

Round trips are counted on the real paramiko transport talking to the loopback sshd: every synchronous SFTP request
(each waits for its answer: stat, mkdir, open, close, rename...) and every channel opened (the SFTP session's, one
per command). Pipelined writes of one file's chunks are not round trips."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import paramiko
import pytest

from edgeopt.runners.ssh_cache import agent_bundle
from edgeopt_agent.protocol import Request

# A fresh device: a few stats/mkdirs of the cache, the stale-upload sweep, one archive (open, close, stat), one
# unpacking command, the rename, the eviction scan, the probe command: 20 requests. Before: 206 (3+ per file).
FIRST_UPLOAD_MAX = 25
CACHED_MAX = 6


@pytest.fixture()
def trips(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts SFTP requests that wait for an answer and command channels, through the real paramiko classes."""
    seen: Counter = Counter()

    def counting(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            seen[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(paramiko.SFTPClient, "_request", counting("sftp", paramiko.SFTPClient._request))
    monkeypatch.setattr(paramiko.Transport, "open_session", counting("channel", paramiko.Transport.open_session))
    return seen


def test_the_agent_is_one_archive_unpacked_on_the_device(device, trips):
    runner = device.runner()
    assert runner.probe()["agent_version"]
    first = dict(trips)
    files = len(agent_bundle().files)
    assert files >= 30  # what made the per-file upload slow
    assert first["sftp"] <= FIRST_UPLOAD_MAX, first  # was 206 (3+ per file)
    assert first["channel"] == 3  # the SFTP session, the unpacking and the probe
    entry = device.workdir / "cache" / agent_bundle().key
    unpacked = sorted(p.relative_to(entry).as_posix() for p in entry.rglob("*.py"))
    assert unpacked == sorted(rel for _, rel in agent_bundle().files)  # same layout as before: a hit either way
    assert not list(entry.rglob("*.zip")) and not list((device.workdir / "cache").glob(".tmp-*"))
    trips.clear()
    runner.probe()  # the version/hash check: nothing uploaded again
    assert trips["sftp"] <= CACHED_MAX and trips["channel"] == 2, dict(trips)


def test_a_run_uploads_the_agent_as_one_file(device, tiny_cnn):
    runner = device.runner()
    assert runner.run(Request(model_path="", iterations=20, min_duration_s=0.1), tiny_cnn).ok
    stats = runner.last_stats
    assert stats is not None and stats.cache_misses == 2 and stats.uploaded_files == 2  # the archive and the model
