"""What the soak's result is (benchmarks/soak.py runs it): the bounds every sampled metric is held to, the record
each phase fills, the machine it ran on, the per-phase verdicts (benchmarks/soak_stats.py does the arithmetic) and
the printed table.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common import machine_facts
from benchmarks.soak_stats import Bound, assess_all

MB_100 = "MiB per 100 runs"
# Bounds, after the warm-up window. RSS: 2 MiB per 100 runs is 20 KiB per run, below the size of one result
# object graph kept per run (a BenchResult with its settings, environment and runtime info is ~30-60 KiB of
# Python objects), so a per-run leak of results fails while allocator noise (a few hundred KiB either way) passes;
# 1000 runs at the bound would be 20 MiB. Counts that must not grow at all get no slack beyond 1-2 for a thread
# or descriptor that is mid-exit when the sample is taken. Things that must be gone after each run: 0.
BOUNDS: tuple[Bound, ...] = (
    Bound("host_rss_mb", "slope", 2.0, f"{MB_100}: < one result object graph leaked per run"),
    Bound("host_fds", "flat", 2, "open descriptors must not grow (2: one closing while sampled)"),
    Bound("host_threads", "flat", 1, "Python threads must not grow (1: a timer thread mid-exit)"),
    Bound("host_os_threads", "flat", 2, "OS threads must not grow (onnxruntime pools live in the agent, not here)"),
    Bound("host_children", "max", 0, "every agent subprocess is reaped after its run"),
    Bound("host_tcp_connections", "max", 0, "no SSH connection stays open between runs"),
    Bound("ssh_transports_alive", "max", 0, "no paramiko transport thread outlives its run"),
    Bound("ssh_transport_objects", "max", 0, "no paramiko Transport stays reachable after its run"),
    Bound("sftp_client_objects", "max", 0, "no SFTP client stays reachable after its run"),
    Bound("ssh_liveness_threads", "max", 0, "the keepalive thread ends with its session"),
    Bound("device_agent_processes", "max", 0, "no agent left running on the device"),
    Bound("device_lock_files", "max", 0, "the device lock is released and its file removed"),
    Bound("device_job_dirs", "max", 0, "every job directory is removed"),
    Bound("cache_tmp_uploads", "max", 0, "no half-upload left in the cache"),
    Bound("sshd_children", "max", 0, "sshd's session process ends with the connection"),
    Bound("cache_over_bound_bytes", "max", 0, "after each upload: cache <= max(limit, entries used in 15 min)"),
    Bound("history_mb", "slope", 1.0, f"{MB_100}: one row per run (~5-6 KiB without samples: settings, "
          "environment, runtime JSON) plus the WAL, which SQLite checkpoints at ~4 MiB"),
)


@dataclass
class Phase:
    """One phase's counters and samples."""

    name: str
    runs: int = 0
    failures: list[str] = field(default_factory=list)
    invalid: int = 0
    samples: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n


def environment() -> dict[str, Any]:
    """The machine, the versions and the device setup the soak ran on."""
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True, check=False).stderr.strip()
    env = machine_facts("onnxruntime", "paramiko", "numpy", "psutil")
    env["load_average_start"] = env.pop("load_average")
    return {**env, "openssh": ssh or None,
            "device": "OpenSSH on 127.0.0.1 (loopback), same machine; device Python = this interpreter"}


def analyse(phases: list[Phase], warmup_fraction: float) -> dict[str, Any]:
    """Per phase: its counters and every metric's verdict against :data:`BOUNDS` after the warm-up window (the
    first ``warmup_fraction`` of its runs)."""
    out: dict[str, Any] = {}
    for phase in phases:
        warmup_runs = max(1, int(warmup_fraction * phase.runs))
        checks = assess_all(phase.samples, BOUNDS, warmup_runs)
        passed = all(c["passed"] for c in checks) and not phase.failures
        out[phase.name] = {"runs": phase.runs, "failures": len(phase.failures), "failure_examples": phase.failures[:5],
                           "invalid_results": phase.invalid, "wall_s": phase.wall_s, "warmup_runs": warmup_runs,
                           "counters": phase.counters, "checks": checks, "passed": passed,
                           "samples": phase.samples}
    return out


def print_table(report: dict[str, Any]) -> None:
    """The verdict table: per phase and metric, first / last / max after warm-up, growth and bound."""
    print(f"\n{'phase':12} {'metric':24} {'first':>10} {'last':>10} {'max':>10} {'growth/100':>11} "
          f"{'bound':>14}  ok")
    for name, phase in report["phases"].items():
        for c in phase["checks"]:
            b = c["bound"]
            print(f"{name:12} {c['metric']:24} {c['first']:10.4g} {c['last']:10.4g} {c['max']:10.4g} "
                  f"{c['growth_per_100_runs']:11.4g} {b['kind'] + ' ' + format(b['limit'], 'g'):>14}  "
                  f"{'yes' if c['passed'] else 'NO'}")
        print(f"{name:12} runs {phase['runs']}, failures {phase['failures']}, invalid {phase['invalid_results']}, "
              f"warm-up {phase['warmup_runs']} runs, {phase['wall_s']} s, counters {phase['counters']}")
    print(f"\nsoak: {'PASS' if report['passed'] else 'FAIL'}")
