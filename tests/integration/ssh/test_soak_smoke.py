"""benchmarks/soak.py runs end to end at a tiny scale (local + loopback SSH), and fails on an injected leak.

Marked slow: each local run starts an agent subprocess (~1 s, more on a loaded box), ~15-50 s per test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.ssh.sshd import unavailable_reason

ROOT = Path(__file__).resolve().parents[3]


def soak(tmp_path: Path, *args: str) -> tuple[int, dict]:
    """Run the soak as a user does (``python -m benchmarks.soak`` from the checkout's root)."""
    out = tmp_path / "soak.json"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'device_agent'}"}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.soak", *args, "--out", str(out)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(out.read_text())


def checks(report: dict, phase: str) -> dict[str, dict]:
    return {c["metric"]: c for c in report["phases"][phase]["checks"]}


@pytest.mark.slow
def test_soak_runs_local_and_ssh_and_leaves_nothing_behind(tmp_path):
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    _, report = soak(tmp_path, "--local", "3", "--ssh", "3", "--failures", "3", "--every-local", "1",
                     "--every-ssh", "1")
    local, ssh, bad = report["phases"]["local"], report["phases"]["ssh"], report["phases"]["ssh_failures"]
    assert (local["runs"], local["failures"], ssh["runs"], ssh["failures"]) == (3, 0, 3, 0)
    # Each of the three failing kinds raised a typed error (an untyped one or a success is a soak failure).
    assert bad["failures"] == 0 and bad["counters"] == {"unknown_host_key": 1, "wrong_key": 1,
                                                        "missing_interpreter": 1}
    assert checks(report, "ssh_failures")["ssh_transport_objects"]["passed"]
    assert len(ssh["samples"]) == 3 and ssh["counters"]["cache_misses"] >= 2  # agent + two models uploaded
    got = checks(report, "ssh")
    for metric in ("ssh_transports_alive", "ssh_transport_objects", "sftp_client_objects", "host_children",
                   "device_agent_processes", "device_lock_files", "device_job_dirs", "sshd_children",
                   "cache_over_bound_bytes"):
        assert got[metric]["passed"], got[metric]
    assert report["environment"]["paramiko"] and report["seeds"]["bench"] == 0 and report["model_bytes"]


@pytest.mark.slow
def test_soak_fails_when_a_descriptor_leaks_every_run(tmp_path):
    code, report = soak(tmp_path, "--local", "4", "--ssh", "0", "--every-local", "1", "--inject-leak", "fd",
                        "--warmup-fraction", "0")
    fds = checks(report, "local")["host_fds"]
    assert code == 1 and not report["passed"]
    assert not fds["passed"] and fds["last"] - fds["first"] == 3, fds
