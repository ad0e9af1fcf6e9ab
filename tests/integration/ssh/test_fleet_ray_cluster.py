"""The Ray executor on a real two-node cluster: ``ray start --head`` on this machine plus one worker node process.

Each node declares the devices it "reaches" as custom resources (head: lab-00, lab-01; worker: lab-02, lab-03), so
Ray must place each device's job on the node that offers it. The driver finds the cluster through
``RAY_ADDRESS`` (``--executor ray``), and the model travels through the object store. Ray's token
authentication is switched off for this throwaway local cluster (``RAY_AUTH_MODE=disabled`` for the nodes and
the driver). Marked slow (two Ray nodes on 2 cores take ~20-60 s to start); skips without Ray.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.bench.fleet import fleet_benchmark
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import free_port, unavailable_reason

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]' (the [ray] extra)")
ROOT = Path(__file__).resolve().parents[3]


RAY_CLI = str(Path(sys.executable).with_name("ray"))
NODE_ENV = {**os.environ, "RAY_AUTH_MODE": "disabled",
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "device_agent"), os.environ.get("PYTHONPATH", "")])}


def _node(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen([RAY_CLI, "start", "--block", "--num-cpus=1", "--disable-usage-stats", *args],
                                env=NODE_ENV, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _resources(names: list[str]) -> str:
    return json.dumps({f"edgeopt-device:{n}": 1 for n in names})


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # `ray start --block` stops its node's processes on SIGTERM
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, str]]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    if ray.is_initialized():
        ray.shutdown()
    root = tmp_path_factory.mktemp("ray-cluster")
    from ray._private.services import get_node_ip_address

    address = f"{get_node_ip_address()}:{free_port()}"  # the address Ray's nodes and driver agree on
    with Lab(root / "lab", 4) as lab:
        head = _node(["--head", f"--port={address.rsplit(':', 1)[1]}", "--include-dashboard=false", "--resources",
                      _resources(["lab-00", "lab-01"])], root / "head.log")
        worker = None
        try:
            deadline = time.monotonic() + 120
            while subprocess.run([RAY_CLI, "status", f"--address={address}"], env=NODE_ENV, capture_output=True,
                                 timeout=60).returncode != 0:
                if time.monotonic() > deadline or head.poll() is not None:
                    pytest.fail(f"ray head did not start: {(root / 'head.log').read_text()[-2000:]}")
                time.sleep(1)
            worker = _node([f"--address={address}", "--resources", _resources(["lab-02", "lab-03"])],
                           root / "worker.log")
            yield lab, address
        finally:
            if ray.is_initialized():
                ray.shutdown()
            for proc in (worker, head):
                if proc is not None:
                    _stop(proc)
            current = Path("/tmp/ray/ray_current_cluster")  # left behind when the head had to be killed
            if current.exists() and current.read_text().strip() == address:
                current.unlink()


def test_each_device_runs_on_the_node_that_offers_it(cluster, tiny_cnn: Path, monkeypatch: pytest.MonkeyPatch):
    lab, address = cluster
    monkeypatch.setenv("RAY_ADDRESS", address)
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    deadline = time.monotonic() + 90
    result = None
    while time.monotonic() < deadline:  # the worker node may still be registering
        result = fleet_benchmark(tiny_cnn, devices="tag:lab", inventory=lab.inventory, known_hosts=lab.known_hosts,
                                 executor="ray", iterations=20, min_duration_s=0.2, warmup=2, energy=False)
        if all(r.status == "ok" for r in result.rows):
            break
        ray.shutdown()
        time.sleep(2)
    assert result is not None and [r.status for r in result.rows] == ["ok"] * 4, [r.error for r in result.rows]
    nodes = {r.device: r.worker for r in result.rows}
    assert nodes["lab-00"] == nodes["lab-01"] and nodes["lab-02"] == nodes["lab-03"]
    assert nodes["lab-00"] != nodes["lab-02"] and all(str(w).startswith("ray:") for w in nodes.values())
    assert all(r.result is not None and r.result.model.path == str(tiny_cnn) for r in result.rows)
