"""A "device" with its own address in a network namespace: a bench over 5% packet loss, and a dead link.

Host side 10.200.0.1/24, device side 10.200.0.2/24 on a veth pair; sshd runs inside the namespace on port 22;
nftables in the namespace drops packets to port 22. Only these self-made addresses are used, and the
namespace (which takes the veth pair with it) is always deleted. Tests on this machine are serialized with a
file lock, since the addresses are fixed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.errors import RunnerError
from edgeopt.runners.ssh import SshRunner
from edgeopt.runners.ssh_session import SshTimeouts
from edgeopt_agent.protocol import Request
from tests.integration.ssh.conftest import Device
from tests.integration.ssh.sshd import Sshd, processes_mentioning, unavailable_reason

pytestmark = pytest.mark.netns

HOST_IP, DEVICE_IP = "10.200.0.1", "10.200.0.2"
LOSS_TABLE = "edgeopt_loss"


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def _nft(ns: str, script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script, capture_output=True,
                          text=True, timeout=30)


@pytest.fixture()
def netns_device(tmp_path: Path) -> Iterator[tuple[Device, str]]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    if not shutil.which("nft"):
        pytest.skip("nft (nftables) is not installed: run `make sysdeps` as root")
    if not shutil.which("ip"):
        pytest.skip("ip (iproute2) is not installed")
    guard = open("/tmp/edgeopt-netns-test.lock", "w")  # noqa: SIM115 - held for the fixture's life
    fcntl.flock(guard, fcntl.LOCK_EX)
    suffix = str(os.getpid() % 100000)
    ns, veth_host, veth_dev = f"eo-t{suffix}", f"eoh{suffix}", f"eod{suffix}"
    sshd: Sshd | None = None
    try:
        if _ip("netns", "add", ns).returncode != 0:
            pytest.skip(f"`ip netns add` failed here (needs root and network namespaces): {ns}")
        steps = [
            ("link", "add", veth_host, "type", "veth", "peer", "name", veth_dev),
            ("link", "set", veth_dev, "netns", ns),
            ("addr", "add", f"{HOST_IP}/24", "dev", veth_host),
            ("link", "set", veth_host, "up"),
            ("-n", ns, "addr", "add", f"{DEVICE_IP}/24", "dev", veth_dev),
            ("-n", ns, "link", "set", veth_dev, "up"),
            ("-n", ns, "link", "set", "lo", "up"),
        ]
        for step in steps:
            out = _ip(*step)
            if out.returncode != 0:
                pytest.skip(f"cannot set up the namespace device (ip {' '.join(step)}): {out.stderr.strip()}")
        table = f"table inet {LOSS_TABLE} {{\n  chain input {{\n    type filter hook input priority 0;\n  }}\n}}\n"
        probe = _nft(ns, table)
        if probe.returncode != 0:
            pytest.skip(f"nftables does not work in a namespace here: {probe.stderr.strip()}")
        # The server drops a client that stopped answering after ~4 s: its session ends, and so does the agent.
        sshd = Sshd(tmp_path / "server", port=22, host=DEVICE_IP, prefix=["ip", "netns", "exec", ns],
                    extra_config=["ClientAliveInterval 2", "ClientAliveCountMax 2"])
        sshd.start()
        yield Device(sshd, tmp_path / "device", tmp_path / "known_hosts"), ns
    finally:
        if sshd is not None:
            sshd.stop()
        _ip("netns", "del", ns)  # removes the veth pair too
        _ip("link", "del", veth_host)  # in case the pair was created but never moved
        guard.close()


def _runner(device: Device, **timeouts: float) -> SshRunner:
    return SshRunner(device.address(), known_hosts=device.known_hosts, accept_new_host_key=True,
                     timeouts=SshTimeouts(**timeouts) if timeouts else None)


def test_bench_over_a_lossy_link_to_a_device_with_its_own_address(netns_device, tiny_cnn):
    device, ns = netns_device
    out = _nft(ns, f"add rule inet {LOSS_TABLE} input tcp dport 22 numgen random mod 100 < 5 drop\n")
    assert out.returncode == 0, out.stderr
    runner = _runner(device)
    assert runner.name == "ssh:root@10.200.0.2:22"
    raw = runner.run(Request(model_path="", iterations=50, min_duration_s=0.3), tiny_cnn)
    assert raw.ok, raw.error
    assert runner.last_stats is not None and runner.last_stats.uploaded_bytes > 0
    rules = subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "table", "inet", LOSS_TABLE],
                           capture_output=True, text=True).stdout
    assert "numgen random mod 100 < 5" in rules and "drop" in rules  # the loss was really there
    assert device.job_dirs() == []


def test_dead_link_gives_up_within_the_deadline_and_the_agent_stops(netns_device, tiny_cnn):
    device, ns = netns_device
    runner = _runner(device, dead_after_s=4, keepalive_s=1)
    box: dict = {}

    def run() -> None:
        request = Request(model_path="", iterations=10, min_duration_s=60, max_duration_s=120, progress_interval_s=0)
        try:
            runner.run(request, tiny_cnn)
        except RunnerError as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not (device.lock_file.exists() and processes_mentioning(str(device.workdir))):
        assert time.monotonic() < deadline and thread.is_alive(), "the agent never started"
        time.sleep(0.1)
    out = _nft(ns, f"add rule inet {LOSS_TABLE} input tcp dport 22 drop\n")  # the link dies
    assert out.returncode == 0, out.stderr
    cut = time.monotonic()
    thread.join(timeout=30)
    assert not thread.is_alive() and time.monotonic() - cut < 15
    assert "link to root@10.200.0.2:22 died" in str(box.get("error")), box
    # sshd drops the silent client (ClientAlive), the agent sees stdin EOF, exits and releases the lock.
    deadline = time.monotonic() + 30
    while processes_mentioning(str(device.workdir)) or device.lock_file.exists():
        assert time.monotonic() < deadline, "the agent kept running on the device after the link died"
        time.sleep(0.2)
