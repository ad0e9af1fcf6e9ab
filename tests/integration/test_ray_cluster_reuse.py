"""Issue 23 item 13, cold Ray: ``--executor ray`` started a local cluster on every run (~8.6 s and 2.6 CPU-s) and
printed Ray's banner and token warning. Now it joins the cluster ``ray start`` runs on this machine when one answers
and offers the devices, says on stderr when it starts one and how to keep one running, and Ray's own log lines stay
out of edgeopt's output.

``running_cluster`` is checked against real sockets (fast). The two real clusters (one started by the executor,
one by ``ray start --head``) run in subprocesses with their own ``RAY_TMPDIR``, so another Ray on this machine is
neither found nor disturbed; marked slow (each start takes ~10-15 s on 2 cores)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.fleet.executors.ray_exec import running_cluster
from tests.integration.ssh.sshd import free_port

ROOT = Path(__file__).resolve().parents[2]
RESOURCE = "edgeopt-device:lab-00"
DRIVER = f"""
import json, time
from edgeopt.fleet.executors.ray_exec import RayExecutor
ex = RayExecutor()
t = time.perf_counter()
with ex.session({{"{RESOURCE}": 1.0}}):
    print(json.dumps({{"started_here": ex.shares_paths(), "joined": ex.joined, "s": time.perf_counter() - t}}))
"""


def test_running_cluster_follows_only_a_live_address(tmp_path: Path) -> None:
    file = tmp_path / "ray_current_cluster"
    assert running_cluster(file) is None  # no file: no cluster
    file.write_text(f"127.0.0.1:{free_port()}\n")
    assert running_cluster(file) is None  # a stale file of a killed `ray start`: nothing listens there
    file.write_text("not an address")
    assert running_cluster(file) is None
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        file.write_text(address + "\n")
        assert running_cluster(file) == address


@pytest.fixture()
def ray_env() -> Iterator[dict[str, str]]:
    pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]'")
    tmp = tempfile.mkdtemp(prefix="r", dir="/tmp")  # short: Ray's socket paths live under it
    env = {**os.environ, "RAY_TMPDIR": tmp,
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "device_agent"), os.environ.get("PYTHONPATH", "")])}
    env.pop("RAY_ADDRESS", None)
    yield env
    subprocess.run(["rm", "-rf", tmp], check=False)


def _driver(env: dict[str, str]) -> tuple[dict, str]:
    p = subprocess.run([sys.executable, "-c", DRIVER], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


@pytest.mark.slow
def test_a_started_cluster_is_announced_quietly_and_a_running_one_is_reused(ray_env: dict[str, str]) -> None:
    facts, err = _driver(ray_env)  # no cluster: one is started for the run, and said so
    assert facts["started_here"] and facts["joined"] is None
    assert "starting a local Ray cluster" in err and f"ray start --head --resources '{{\"{RESOURCE}\": 1.0}}'" in err
    assert "Token authentication" not in err and "Started a local Ray instance" not in err and "INFO" not in err
    cold_s = facts["s"]
    port = free_port()
    head = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                             f"--port={port}", "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
                             "--resources", json.dumps({RESOURCE: 1})], env=ray_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        address_file = Path(ray_env["RAY_TMPDIR"]) / "ray" / "ray_current_cluster"
        while running_cluster(address_file) is None:
            assert head.poll() is None and time.monotonic() < deadline, "ray start --head did not come up"
            time.sleep(0.5)
        facts, err = _driver(ray_env)
        assert facts["joined"] == running_cluster(address_file) and not facts["started_here"], err[-3000:]
        assert "using the Ray cluster running at" in err and "starting a local" not in err
        assert "Token authentication" not in err
        print(f"cold start {cold_s:.1f} s, joining the running cluster {facts['s']:.1f} s")
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # `ray start --block` stops its processes on SIGTERM
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
