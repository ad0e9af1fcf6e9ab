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
verdict against the bounds in ``BOUNDS`` (benchmarks/soak_report.py; benchmarks/soak_stats.py does the
arithmetic).

``--failures F`` adds F consecutive SSH benches that must fail (unknown host key, a key the device does not
authorize, no interpreter on the device), sampled the same way: the error paths must not leak either.

Usage: python -m benchmarks.soak [--local 1000] [--ssh 300] [--failures 0] [--out benchmarks/results/soak.json]
Needs root and openssh-server for the SSH part (``make sysdeps``); without them it runs the local part only.
Exit code: 0 every bound held, 1 a bound failed or a run raised, 2 cannot run.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import edgeopt
from benchmarks.common import RESULTS, write_json
from benchmarks.soak_probes import age_cache, cache_sample, device_sample, file_bytes, host_sample, paramiko_counts
from benchmarks.soak_report import Phase, analyse, environment, print_table
from edgeopt.devices import parse_host
from edgeopt.errors import EdgeoptError
from edgeopt.fsutil import atomic_write_bytes
from edgeopt.history import open_store
from edgeopt.runners.ssh import SshRunner
from edgeopt.zoo.mobilenet import mobilenet_like
from tests.integration.ssh.sshd import Sshd, process_tree, processes_mentioning, unavailable_reason


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
    ap.add_argument("--out", type=Path, default=RESULTS / "soak.json")
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
    analysed = analyse(phases, args.warmup_fraction)
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
    write_json(args.out, report)
    print_table(report)
    print(f"wrote {args.out}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
