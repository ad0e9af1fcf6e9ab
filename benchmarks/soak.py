"""Soak: N consecutive local benches and M consecutive SSH benches in ONE host process, sampled for leaks.

Every run is a full ``edgeopt.benchmark`` call (the public API: settings, runner, agent subprocess or SSH
session, result parsing), short (a few dozen inferences) so that the count, not the length, is what grows. The
SSH part runs against a loopback OpenSSH server started here (tests/integration/ssh/sshd.py, as
benchmarks/ssh_overhead.py does), with a small device cache limit (``--device-cache-mb``) and several distinct
models used two runs in a row each, so every other run is a cache hit and every other run an upload followed by
least-recently-used eviction. The cache never evicts an entry used within the last 15 minutes
(``KEEP_RECENT_S``); a soak of 300 runs takes minutes, so after each SSH run the script moves the device cache's
last-use times ``--age-s`` (default 300 s) into the past: simulated time between runs, as on a lab device used
through a day. Every run is recorded in a history file (``--no-history`` to skip), as ``edgeopt bench`` does.

Every K runs (``--every-local``, ``--every-ssh``) it samples this process (RSS, fds, threads, children, paramiko
transports and SFTP clients still alive or reachable, TCP connections), the device (cache size vs its bound,
temp uploads, job directories, lock files, agent processes, sshd's session processes) and the history file's
size (see benchmarks/soak_probes.py). After every upload it checks the cache against its bound: at most
``max(limit, bytes of entries used within 15 minutes)``. The report gives, per metric, the first and last value
after a warm-up window (``--warmup-fraction`` of the runs) and the least-squares growth per 100 runs, with a
verdict against the bounds in ``BOUNDS`` (benchmarks/soak_stats.py does the arithmetic).

``--failures F`` adds F consecutive SSH benches that must fail (unknown host key, a key the device does not
authorize, no interpreter on the device), sampled the same way: the error paths must not leak either.

Usage: python benchmarks/soak.py [--local 1000] [--ssh 300] [--failures 0] [--out benchmarks/results/soak.json]
Needs root and openssh-server for the SSH part (``make sysdeps``); without them it runs the local part only.
Exit code: 0 every bound held, 1 a bound failed or a run raised, 2 cannot run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the test suite's sshd launcher
sys.path.insert(0, str(Path(__file__).resolve().parent))  # soak_stats, soak_probes

from soak_probes import age_cache, cache_sample, device_sample, file_bytes, host_sample, paramiko_counts  # noqa: E402
from soak_stats import Bound, assess_all  # noqa: E402

import edgeopt  # noqa: E402
from edgeopt.devices import parse_host  # noqa: E402
from edgeopt.errors import EdgeoptError  # noqa: E402
from edgeopt.fsutil import atomic_write_bytes  # noqa: E402
from edgeopt.history import open_store  # noqa: E402
from edgeopt.runners.ssh import SshRunner  # noqa: E402
from edgeopt.zoo.mobilenet import mobilenet_like  # noqa: E402
from tests.integration.ssh.sshd import Sshd, process_tree, processes_mentioning, unavailable_reason  # noqa: E402

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


def build_models(out: Path, count: int, seed: int) -> list[Path]:
    """``count`` distinct small MobileNet-style models (same shape, different weights), ~50 KB each."""
    paths = []
    for i in range(count):
        model = mobilenet_like(image_size=32, width=16, blocks=4, classes=100, seed=seed + i)
        path = out / f"soak-{i}.onnx"
        atomic_write_bytes(path, model.SerializeToString())
        paths.append(path)
    return paths


def bench_once(model: Path, args: argparse.Namespace, runner: Any | None) -> Any:
    """One short ``edgeopt.benchmark`` run (no FPS budget: the soak checks the process, not the model)."""
    return edgeopt.benchmark(model, runner=runner, use_target_fps=False, iterations=args.iterations,
                             min_duration_s=0.01, warmup=args.warmup, threads=1, seed=args.seed)


def settle(check: Callable[[], bool], timeout_s: float = 3.0) -> float:
    """Wait until ``check()`` holds (processes exit asynchronously); the seconds waited."""
    started = time.monotonic()
    while not check() and time.monotonic() - started < timeout_s:
        time.sleep(0.05)
    return round(time.monotonic() - started, 3)


def due(run: int, total: int, every: int) -> bool:
    return run == 1 or run % every == 0 or run == total


def record(phase: Phase, history: Path | None, result: Any) -> None:
    if not result.valid:
        phase.invalid += 1
    if history is not None:
        open_store(history).record(result, kind="bench")


# --inject-leak: what the self-test leaks per local run, so that the detector must fail (kept until exit).
_LEAKED: list[Any] = []


def inject_leak(kind: str | None) -> None:
    if kind == "fd":
        _LEAKED.append(open(os.devnull, "rb"))  # noqa: SIM115 - the point is to keep it open
    elif kind == "memory":
        _LEAKED.append(bytearray(b"x" * 2**20))  # 1 MiB, touched so that it is resident


def run_local(models: list[Path], args: argparse.Namespace, history: Path | None) -> Phase:
    phase = Phase("local")
    started = time.perf_counter()
    for run in range(1, args.local + 1):
        inject_leak(args.inject_leak)
        try:
            record(phase, history, bench_once(models[run % len(models)], args, None))
        except Exception as exc:  # a soak counts failures and goes on
            phase.failures.append(f"run {run}: {type(exc).__name__}: {exc}")
        phase.runs = run
        if due(run, args.local, args.every_local):
            settle(lambda: host_sample()["host_children"] == 0)
            phase.samples.append({"run": run, "t_s": round(time.perf_counter() - started, 1), **host_sample(),
                                  "history_mb": _mb(file_bytes(history))})
            _progress(phase, args.local)
    phase.wall_s = round(time.perf_counter() - started, 1)
    return phase


def _mb(n: int | None) -> float | None:
    return None if n is None else round(n / 2**20, 4)


def _progress(phase: Phase, total: int) -> None:
    s = phase.samples[-1]
    print(f"[soak {phase.name}] {phase.runs}/{total}  rss {s['host_rss_mb']:.1f} MiB  fds {s['host_fds']}  "
          f"threads {s['host_threads']}  failures {len(phase.failures)}"
          + (f"  cache {s['cache_bytes']:,} B ({s['cache_entries']} entries)" if "cache_bytes" in s else ""),
          file=sys.stderr, flush=True)


@dataclass
class Lab:
    """The loopback device: sshd, its work dir, and how to reach it."""

    sshd: Sshd
    workdir: Path
    known_hosts: Path
    limit_bytes: int

    def runner(self) -> SshRunner:
        address = parse_host(self.sshd.spec, key=self.sshd.client_key, python=sys.executable,
                             workdir=str(self.workdir))
        return SshRunner(address, known_hosts=self.known_hosts, accept_new_host_key=True,
                         cache_limit_bytes=self.limit_bytes)

    def agents(self) -> list[int]:
        return processes_mentioning(str(self.workdir))

    def sshd_children(self) -> list[int]:
        assert self.sshd.proc is not None
        return process_tree(self.sshd.proc.pid)[1:]

    def quiet(self) -> bool:
        return not self.agents() and not self.sshd_children()

    def sshd_pids(self) -> frozenset[int]:
        assert self.sshd.proc is not None
        return frozenset(process_tree(self.sshd.proc.pid))


def _after_ssh_run(phase: Phase, lab: Lab, runner: SshRunner) -> int:
    """Count what the run moved; after an upload, how far the cache is over its bound (0: within)."""
    stats = runner.last_stats
    if stats is None:
        return 0
    for key in ("cache_hits", "cache_misses", "evicted", "uploaded_files", "uploaded_bytes"):
        phase.count(key, int(getattr(stats, key)))
    if not stats.cache_misses:
        return 0
    c = cache_sample(lab.workdir / "cache")
    over = max(0, c["cache_bytes"] - max(lab.limit_bytes, c["cache_recent_bytes"]))
    phase.counters["cache_max_bytes"] = max(phase.counters.get("cache_max_bytes", 0), c["cache_bytes"])
    return over


def run_ssh(models: list[Path], args: argparse.Namespace, history: Path | None, lab: Lab) -> Phase:
    phase = Phase("ssh")
    started = time.perf_counter()
    over_since_sample = 0
    for run in range(1, args.ssh + 1):
        runner = lab.runner()  # a fresh runner per call, as edgeopt.benchmark(host=...) builds one
        try:
            record(phase, history, bench_once(models[(run // 2) % len(models)], args, runner))
        except Exception as exc:
            phase.failures.append(f"run {run}: {type(exc).__name__}: {exc}")
        phase.runs = run
        over_since_sample = max(over_since_sample, _after_ssh_run(phase, lab, runner))
        if due(run, args.ssh, args.every_ssh):
            waited = settle(lab.quiet)
            device = device_sample(lab.workdir, lab.agents(), lab.sshd_children())
            phase.samples.append({"run": run, "t_s": round(time.perf_counter() - started, 1), "settle_s": waited,
                                  **host_sample(lab.sshd_pids()), **device,
                                  "cache_over_bound_bytes": over_since_sample, "history_mb": _mb(file_bytes(history))})
            over_since_sample = 0
            _progress(phase, args.ssh)
        age_cache(lab.workdir / "cache", args.age_s)
    phase.wall_s = round(time.perf_counter() - started, 1)
    return phase


def failing_runner(lab: Lab, run: int) -> tuple[str, SshRunner]:
    """A runner that must fail, cycling through three ways: unknown host key, a key the device does not
    authorize, an interpreter that does not exist on the device."""
    good = lab.runner()
    kind = ("unknown_host_key", "wrong_key", "missing_interpreter")[run % 3]
    if kind == "unknown_host_key":
        return kind, SshRunner(good.address, known_hosts=lab.known_hosts.with_name("known_hosts-empty"))
    if kind == "wrong_key":
        address = good.address.model_copy(update={"key": lab.sshd.host_key})  # a key, but not an authorized one
    else:
        address = good.address.model_copy(update={"python": "/nonexistent/bin/python3"})
    return kind, SshRunner(address, known_hosts=lab.known_hosts, accept_new_host_key=True,
                           cache_limit_bytes=lab.limit_bytes)


def no_transports() -> bool:
    """No paramiko Transport left, once garbage is collected (a failed handshake leaves it in a cycle)."""
    gc.collect()
    return paramiko_counts()["ssh_transport_objects"] == 0


def run_failures(models: list[Path], args: argparse.Namespace, lab: Lab) -> Phase:
    """Consecutive SSH benches that fail (each must raise an EdgeoptError): the error paths must not leak either.

    A failed connection's paramiko thread ends a moment after the error is raised, so a sample first waits (up
    to 3 s) for the device to be quiet and no paramiko Transport to be left; one still there after that counts.
    """
    phase = Phase("ssh_failures")
    started = time.perf_counter()
    for run in range(1, args.failures + 1):
        kind, runner = failing_runner(lab, run)
        try:
            bench_once(models[run % len(models)], args, runner)
            phase.failures.append(f"run {run}: {kind} did not fail")
        except EdgeoptError:
            phase.count(kind)
        except Exception as exc:
            phase.failures.append(f"run {run}: {kind}: untyped {type(exc).__name__}: {exc}")
        phase.runs = run
        if due(run, args.failures, args.every_ssh):
            waited = settle(lambda: lab.quiet() and no_transports())
            device = device_sample(lab.workdir, lab.agents(), lab.sshd_children())
            phase.samples.append({"run": run, "t_s": round(time.perf_counter() - started, 1), "settle_s": waited,
                                  **host_sample(lab.sshd_pids()), **device})
            _progress(phase, args.failures)
    phase.wall_s = round(time.perf_counter() - started, 1)
    return phase


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def environment() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    ssh = subprocess.run(["ssh", "-V"], capture_output=True, text=True, check=False).stderr.strip()
    return {"machine": platform.machine(), "cpu": cpu, "cpus": os.cpu_count(), "os": platform.platform(),
            "python": platform.python_version(), "edgeopt": edgeopt.__version__, "openssh": ssh or None,
            **{d: _version(d) for d in ("onnxruntime", "paramiko", "numpy", "psutil")},
            "load_average_start": list(os.getloadavg()),
            "device": "OpenSSH on 127.0.0.1 (loopback), same machine; device Python = this interpreter"}


def analyse(phases: list[Phase], args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for phase in phases:
        warmup_runs = max(1, int(args.warmup_fraction * phase.runs))
        checks = assess_all(phase.samples, BOUNDS, warmup_runs)
        passed = all(c["passed"] for c in checks) and not phase.failures
        out[phase.name] = {"runs": phase.runs, "failures": len(phase.failures), "failure_examples": phase.failures[:5],
                           "invalid_results": phase.invalid, "wall_s": phase.wall_s, "warmup_runs": warmup_runs,
                           "counters": phase.counters, "checks": checks, "passed": passed,
                           "samples": phase.samples}
    return out


def print_table(report: dict[str, Any]) -> None:
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--local", type=int, default=1000, help="consecutive local benches")
    ap.add_argument("--ssh", type=int, default=300, help="consecutive SSH benches (loopback sshd; needs root)")
    ap.add_argument("--failures", type=int, default=0,
                    help="then F consecutive SSH benches that must fail (unknown host key, unauthorized key, no "
                         "interpreter on the device), sampled the same way")
    ap.add_argument("--every-local", type=int, default=20, help="sample every K local runs")
    ap.add_argument("--every-ssh", type=int, default=10, help="sample every K SSH runs")
    ap.add_argument("--iterations", type=int, default=100, help="timed inferences per run")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up inferences per run")
    ap.add_argument("--models", type=int, default=6, help="distinct models cycled through")
    ap.add_argument("--device-cache-mb", type=float, default=0.35,
                    help="device cache limit (default: the agent (~0.21 MB) and three ~0.05 MB models)")
    ap.add_argument("--age-s", type=float, default=300.0, help="simulated seconds between SSH runs (cache mtimes)")
    ap.add_argument("--warmup-fraction", type=float, default=0.1, help="share of each phase left out of the fit")
    ap.add_argument("--seed", type=int, default=0, help="benchmark seed; model i has weights seeded seed+i")
    ap.add_argument("--no-history", action="store_true", help="do not record runs in a history file")
    ap.add_argument("--inject-leak", choices=("fd", "memory"), default=None,
                    help="self-test: leak one file descriptor or 1 MiB per local run (the soak must then fail)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/soak.json")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    reason = unavailable_reason() if args.ssh or args.failures else None
    if reason:
        print(f"soak: SSH part skipped: {reason}", file=sys.stderr)
    env = environment()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="edgeopt-soak-") as tmp_name:
        tmp = Path(tmp_name)
        models = build_models(tmp, args.models, args.seed)
        model_bytes = [m.stat().st_size for m in models]
        history = None if args.no_history else tmp / "history.sqlite3"
        phases = [run_local(models, args, history)] if args.local else []
        if (args.ssh or args.failures) and not reason:
            with Sshd(tmp / "sshd") as sshd:
                lab = Lab(sshd, tmp / "device", tmp / "known_hosts", int(args.device_cache_mb * 2**20))
                if args.ssh:
                    phases.append(run_ssh(models, args, history, lab))
                if args.failures:
                    phases.append(run_failures(models, args, lab))
    env["load_average_end"] = list(os.getloadavg())
    analysed = analyse(phases, args)
    report = {
        "benchmark": "soak",
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "ssh_skipped": reason,
        "environment": env,
        "seeds": {"bench": args.seed, "model_weights": [args.seed + i for i in range(args.models)]},
        "model_bytes": model_bytes,
        "device_cache_limit_bytes": int(args.device_cache_mb * 2**20),
        "duration_s": round(time.perf_counter() - started, 1),
        "phases": analysed,
        "passed": all(p["passed"] for p in analysed.values()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(args.out, json.dumps(report, indent=2).encode())
    print_table(report)
    print(f"wrote {args.out}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
