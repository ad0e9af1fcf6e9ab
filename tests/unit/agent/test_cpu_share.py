"""The agent's view of other processes' CPU use during a timed phase (edgeopt_agent.cpu_share), on real processes."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from edgeopt_agent.cpu_share import CpuShare

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="/proc/stat is Linux only")

BURN = "import time\nend = time.time() + {s}\nwhile time.time() < end:\n    pass\n"


def burners(seconds: float) -> list[subprocess.Popen[bytes]]:
    """One busy-looping process per logical core (each ends by itself after ``seconds``)."""
    return [subprocess.Popen([sys.executable, "-c", BURN.format(s=seconds)]) for _ in range(os.cpu_count() or 1)]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
        p.wait()


def _rusage_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def test_own_busy_loop_is_own_not_others() -> None:
    before = _rusage_cpu_s()
    share = CpuShare()
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        pass
    got = share.stop()
    used = _rusage_cpu_s() - before
    cores = os.cpu_count() or 1
    assert set(got) == {"wall_s", "cores", "own_cpu_pct", "others_cpu_pct", "steal_pct", "busy_pct"}
    assert got["cores"] == cores and got["wall_s"] >= 0.5
    # what the loop got depends on the machine's load (a loaded CI: a fraction of a core); it counts as its own,
    # as a share of the whole machine: the CPU time the kernel's rusage gives this process over the wall time
    expected = 100.0 * used / (got["wall_s"] * cores)
    assert abs(got["own_cpu_pct"] - expected) <= 2.0 and got["own_cpu_pct"] <= 100 / cores + 5
    assert 0 <= got["others_cpu_pct"] <= 100
    assert abs(got["own_cpu_pct"] + got["others_cpu_pct"] - got["busy_pct"]) <= 5  # busy = own + others


def test_burners_show_as_others() -> None:
    procs = burners(10)
    try:
        time.sleep(0.3)  # the burners are running
        share = CpuShare()
        time.sleep(1.0)
        got = share.stop()
    finally:
        stop(procs)
    assert got["own_cpu_pct"] < 5
    assert got["others_cpu_pct"] >= 80  # every core busy with a burner
