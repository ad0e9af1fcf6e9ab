"""SIGINT / SIGTERM in the first second of ``edgeopt`` (while it imports onnx, numpy and the runtimes): exit 130 /
143 with one line, never a traceback.

The clock starts when the process catches SIGTERM (``SigCgt`` in ``/proc/PID/status``): that is the first thing
edgeopt's code does. Before it the interpreter itself starts (its ``site`` module, the venv's ``.pth`` files),
which no package can change: a signal there gets Python's own behaviour (docs/reliability.md says so).
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.faults.helpers import assert_one_line, record, wait_for

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to see the handler")

DELAYS_S = (0.0, 0.05, 0.15, 0.3, 0.5, 0.75, 1.0)
EXPECTED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}


def _catches(pid: int, sig: signal.Signals) -> bool:
    """The process has a handler for ``sig`` (bit ``sig - 1`` of SigCgt)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line.split()[1] for line in text.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) >> (int(sig) - 1) & 1)


def _started(proc: subprocess.Popen[str]) -> bool:
    """edgeopt's code runs (it catches SIGTERM), or the process already ended."""
    return _catches(proc.pid, signal.SIGTERM) or proc.poll() is not None


def _commands(tmp_path: Path, tiny_cnn: Path) -> dict[str, list[str]]:
    module = [sys.executable, "-m", "edgeopt"]
    commands = {
        "help": [*module, "--help"],
        "bench": [*module, "bench", str(tiny_cnn), "--iterations", "5", "--min-duration", "0.05", "--no-history"],
    }
    script = Path(sys.executable).with_name("edgeopt")  # the console script, when the venv has it
    if script.exists() or shutil.which("edgeopt"):
        commands["script-bench"] = [str(script if script.exists() else shutil.which("edgeopt")), "bench",
                                    str(tiny_cnn), "--iterations", "5", "--min-duration", "0.05", "--no-history",
                                    "--json"]
    return commands


@pytest.mark.parametrize("sig", list(EXPECTED), ids=lambda s: s.name)
def test_signal_in_the_first_second_gives_one_line(tmp_path, tiny_cnn, sig):
    env = {**os.environ, "EDGEOPT_HISTORY_DB": str(tmp_path / "history.sqlite3")}
    code, word = EXPECTED[sig]
    injected = 0
    for name, argv in _commands(tmp_path, tiny_cnn).items():
        for delay in DELAYS_S:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                    cwd=tmp_path)
            try:
                assert wait_for(functools.partial(_started, proc), 30, 0.002)
                time.sleep(delay)
                started = time.monotonic()
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=60)
                took = time.monotonic() - started
            finally:
                if proc.poll() is None:
                    proc.kill()
            injected += 1
            where = f"{name} +{delay}s"
            if name == "help" and proc.returncode == 0:
                continue  # --help finished before the signal (possible at the last delays on a fast machine)
            assert proc.returncode == code, (where, proc.returncode, err)
            assert_one_line(err, word)
            assert took < 10, (where, took)  # acted on promptly, not after the imports or the run
            if "--json" in argv:
                assert out.strip().startswith("{") and f'"exit_code": {code}' in out, (where, out)
    assert not (tmp_path / "history.sqlite3-journal").exists()
    record(f"edgeopt {sig.name} in the first second of start-up (imports)", injected, injected)
