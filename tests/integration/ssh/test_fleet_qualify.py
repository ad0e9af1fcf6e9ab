"""qualify's per-device deadline on real loopback sshd devices: past it the device's SSH session is aborted.

One device of the lab is made slow: its inventory interpreter is a wrapper that stretches the timed phase of
every request to a minute before it starts the agent (as a board that runs far slower than the others would).
With a short ``--deadline`` that device becomes a ``deadline`` row, its agent is gone and its lock released,
while the other device's verdict stands.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason
from tests.waiting import wait_for

SLOW_PYTHON = f"""#!{sys.executable}
import json, os, sys
args = sys.argv[1:]
if "--request" in args:  # stretch the timed phase: this board needs a minute for what the others do at once
    path = args[args.index("--request") + 1]
    with open(path) as fh:
        request = json.load(fh)
    request["min_duration_s"] = 60.0
    with open(path, "w") as fh:
        json.dump(request, fh)
os.execv(sys.executable, [sys.executable, *args])
"""


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 2) as running:
        yield running


def test_a_device_past_the_qualify_deadline_is_aborted_and_the_other_stands(lab: Lab, tiny_cnn: Path,
                                                                              tmp_path: Path, capsys):
    slow = lab["lab-01"]
    wrapper = tmp_path / "slow-python"
    wrapper.write_text(SLOW_PYTHON)
    wrapper.chmod(0o755)
    slow.python = str(wrapper)
    lab.write_inventory()
    spec = tmp_path / "q.yaml"
    spec.write_text(f"""
name: deadline
model: {{path: {tiny_cnn}}}
inventory: {lab.inventory}
targets:
  - {{devices: "tag:lab", known_hosts: {lab.known_hosts}}}
measure: {{iterations: 100, min_duration_s: 0.2, warmup: 2, energy: false}}
gates: {{latency: {{max_ms: 1000}}}}
""")  # 100 iterations: the latency gate reads p99, which needs 100 samples however slow a loaded host makes the run
    started = time.monotonic()
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history", "--deadline", "10",
                 "--json"])
    elapsed = time.monotonic() - started
    out = json.loads(capsys.readouterr().out)
    devices = {d["label"]: d for d in out["devices"]}
    assert devices["lab-00"]["status"] == "ok" and devices["lab-00"]["passed"], devices["lab-00"]["error"]
    bad = devices["lab-01"]
    assert bad["status"] == "error" and bad["error"].startswith("deadline: stopped at the device deadline of 10 s")
    assert all(g["status"] == "error" for g in bad["gates"])
    assert code == 1 == out["exit_code"] and elapsed < 40  # aborted at the deadline, not after the minute
    # the agent ended itself
    assert wait_for(lambda: not slow.agent_processes(), 20, step_s=0.1), slow.agent_processes()
    assert not slow.lock_file.exists() and not lab["lab-00"].lock_file.exists()
