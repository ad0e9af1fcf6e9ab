"""Recording host keys from many threads at once (a fleet's first run) loses no entry and duplicates none."""

from __future__ import annotations

import threading
from pathlib import Path

import paramiko

from edgeopt.runners.ssh_hostkeys import record_host_key


def test_parallel_first_use_records_every_host_once(tmp_path: Path):
    known_hosts = tmp_path / "ssh" / "known_hosts"
    keys = [paramiko.ECDSAKey.generate() for _ in range(3)]
    hosts = [f"[127.0.0.1]:{2200 + i}" for i in range(24)]
    start = threading.Barrier(len(hosts))

    def record(i: int) -> None:
        start.wait()
        record_host_key(known_hosts, hosts[i], keys[i % 3])
        record_host_key(known_hosts, hosts[i], keys[i % 3])  # a second time: already there

    threads = [threading.Thread(target=record, args=(i,)) for i in range(len(hosts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = known_hosts.read_text().splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted(hosts)
    loaded = paramiko.HostKeys(str(known_hosts))
    assert all(loaded.lookup(h) is not None for h in hosts)
