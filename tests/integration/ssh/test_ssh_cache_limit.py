"""The device cache's size limit: least recently used entries go, recent ones and the one just placed stay."""

from __future__ import annotations

import os
import time

from edgeopt.runners.ssh import SshRunner
from edgeopt_agent.protocol import Request
from tests.conftest import make_matmul_model


def test_lru_entries_beyond_the_limit_are_evicted_and_hits_refresh_recency(device, tmp_path):
    models = [make_matmul_model(tmp_path / f"m{i}.onnx", k=256 + 64 * i, n=256) for i in range(3)]
    base = device.runner()
    runner = SshRunner(base.address, known_hosts=base.known_hosts, accept_new_host_key=True,
                       cache_limit_bytes=sum(m.stat().st_size for m in models[:2]) + 200_000)  # room for 2 + agent
    request = Request(model_path="", iterations=5, min_duration_s=0.01)
    for m in models[:2]:
        assert runner.run(request, m).ok
    cache = device.workdir / "cache"
    entries = {p.name for p in cache.iterdir()}
    old = time.time() - 3600
    for name in entries:  # pretend everything was last used an hour ago
        os.utime(cache / name, (old, old))
    assert runner.run(request, models[1]).ok  # a hit: models[1] becomes the most recently used
    assert runner.last_stats is not None and runner.last_stats.cache_hits == 2 and runner.last_stats.evicted == 0
    assert runner.run(request, models[2]).ok  # over the limit: the least recently used (models[0]) goes
    assert runner.last_stats.evicted >= 1
    left = {p.name for p in cache.iterdir()}
    from edgeopt.fsutil import sha256_file

    assert sha256_file(models[0]) not in left
    assert {sha256_file(models[1]), sha256_file(models[2])} <= left
    assert runner.run(request, models[0]).ok  # evicted is simply uploaded again
