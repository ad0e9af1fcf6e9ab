"""The device agent on an emulated arm64 board running Debian 12's own Python (functional, not timing).

qemu-user is ~200x slower than native, so the runs are short and the assertions are about what ran where.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import edgeopt
import edgeopt.zoo

pytestmark = [pytest.mark.arm64, pytest.mark.slow]


def test_benchmark_runs_on_debian_python_on_aarch64(arm64_board, tmp_path: Path):
    model = tmp_path / "m.onnx"
    edgeopt.zoo.build("mobilenet-tiny", model)
    board = arm64_board.board
    result = edgeopt.benchmark(model, host=board.spec, key=str(board.client_key), python=arm64_board.python,
                               known_hosts=board.known_hosts, accept_new_host_key=True, iterations=100,
                               min_duration_s=0.2, warmup=2, energy=False)  # p99 needs 100 samples
    print(f"arm64 board: {arm64_board.built}; p50 {result.latency_ms.p50:.3f} ms; env {result.environment}")
    assert result.valid, result.invalid_reasons
    assert result.runner == "ssh:root@10.201.0.2:22"
    env = result.environment
    assert env["machine"] == "aarch64"
    assert env["python_executable"] == "/usr/bin/python3" and env["python"].startswith("3.11.")
    assert result.latency_ms.p50 > 0 and result.run.samples >= 100
    assert result.runtime.name == "onnxruntime"


def test_devices_check_reports_a_ready_aarch64_board(arm64_board):
    board = arm64_board.board
    out = subprocess.run([sys.executable, "-m", "edgeopt.cli.main", "devices", "check", "--host", board.spec,
                          "--key", str(board.client_key), "--python", arm64_board.python,
                          "--known-hosts", str(board.known_hosts), "--accept-new-host-key", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["ready"] is True and report["problems"] == []
    assert report["arch"] == "aarch64" and report["python"].startswith("3.11.")
    assert report["python_executable"] == "/usr/bin/python3"
    assert report["packages"]["onnxruntime"] and report["packages"]["numpy"]
