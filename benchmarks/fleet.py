"""Fleet scaling: 1, 4 and 16 loopback devices running a frame-paced workload, local threads vs Ray.

Each device is a real sshd on 127.0.0.1 (tests/integration/ssh/lab.py) running the agent; the workload is
frame-paced (``--fps``, ``--frames``) so a device's run lasts ``frames / fps`` seconds whatever the CPU, and the
2-core host is not the bottleneck. For each fleet size and executor it measures:

- fleet wall time / one device's wall time (goal: <= 1.2 at 16 devices);
- host CPU seconds per device: this process's CPU (SSH client threads, result parsing) plus, for Ray, the Ray
  processes' CPU (workers, raylet, GCS; read from /proc), divided by the fleet size;
- the Ray executor's overhead: Ray's fleet wall time minus the local executor's, on a warm cluster started once
  here with one ``edgeopt-device:NAME`` resource per device (goal: < 2 s per fleet run). Warm means one fleet
  run on every device of the largest size first: Ray then keeps a worker process per device and reuses it, while
  a cold run starts one per device job (Python, Ray and edgeopt imports, at most CPU-count at a time);
  ``ray_workers_started`` counts the Ray worker processes each timed run had to start (0 when warm).

Needs root and openssh-server (``make sysdeps``); Ray only for ``--executors ...ray``.

Usage: python -m benchmarks.fleet [--sizes 1,4,16] [--fps 20] [--frames 60] [--rounds 3] [--executors local,ray]
                                  [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import machine_facts
from edgeopt.bench.fleet import fleet_benchmark
from edgeopt.zoo import build
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

_TICK = os.sysconf("SC_CLK_TCK")
# Command-line markers of Ray's processes: worker titles, raylet, GCS, its Python-side agents.
_RAY_MARKERS = (b"ray::", b"/raylet", b"gcs_server", b"/ray/_private/", b"/ray/dashboard/")


def ray_cpu_s() -> float:
    """CPU seconds used so far by Ray's processes on this machine (workers, raylet, GCS), from /proc."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if not any(marker in cmdline for marker in _RAY_MARKERS):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICK  # utime + stime
    return total


def ray_workers() -> set[int]:
    """PIDs of Ray worker processes (their titles start with ``ray::``)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(b"ray::"):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def own_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(model: Path, lab: Lab, names: list[str], executor: str, args: argparse.Namespace) -> dict[str, float]:
    """One fleet run: wall seconds, host CPU seconds, devices that returned a result."""
    cpu0, ray0 = own_cpu_s(), ray_cpu_s() if executor == "ray" else 0.0
    workers0 = ray_workers() if executor == "ray" else set()
    started = time.perf_counter()
    result = fleet_benchmark(model, devices=",".join(names), inventory=lab.inventory, known_hosts=lab.known_hosts,
                             executor=executor, pacing_fps=args.fps, iterations=args.frames, min_duration_s=0.0,
                             warmup=2, threads=1, energy=False, use_target_fps=False, deadline_s=600)
    wall = time.perf_counter() - started
    cpu = own_cpu_s() - cpu0 + ((ray_cpu_s() - ray0) if executor == "ray" else 0.0)
    started_workers = len(ray_workers() - workers0) if executor == "ray" else 0
    errors = [f"{r.device}: {r.error}" for r in result.rows if r.status == "error"]
    if errors:
        print("device errors: " + "; ".join(errors), file=sys.stderr)
    return {"wall_s": wall, "host_cpu_s": cpu, "ok": sum(r.status == "ok" for r in result.rows),
            "workers": started_workers}


def measure(model: Path, lab: Lab, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for executor in args.executors:
        # warm: the agent and the model in every device's cache, a Ray worker per device up
        one_run(model, lab, [d.name for d in lab.devices[:max(args.sizes)]], executor, args)
        for n in args.sizes:
            names = [d.name for d in lab.devices[:n]]
            runs = [one_run(model, lab, names, executor, args) for _ in range(args.rounds)]
            rows.append({
                "executor": executor, "devices": n, "rounds": args.rounds,
                "wall_s": round(statistics.median(r["wall_s"] for r in runs), 3),
                "host_cpu_s_per_device": round(statistics.median(r["host_cpu_s"] for r in runs) / n, 3),
                "devices_ok": min(r["ok"] for r in runs),
                **({"ray_workers_started": [r["workers"] for r in runs]} if executor == "ray" else {}),
            })
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def summarize(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    single = {r["executor"]: r["wall_s"] for r in rows if r["devices"] == 1}
    for r in rows:
        r["wall_vs_one_device"] = round(r["wall_s"] / single[r["executor"]], 3) if r["executor"] in single else None
    local = {r["devices"]: r["wall_s"] for r in rows if r["executor"] == "local"}
    overhead = {str(r["devices"]): round(r["wall_s"] - local[r["devices"]], 3)
                for r in rows if r["executor"] == "ray" and r["devices"] in local}
    return {
        "benchmark": "fleet", "machine": machine_facts("paramiko", "ray"),
        "settings": {"fps": args.fps, "frames": args.frames, "paced_run_s": args.frames / args.fps,
                     "rounds": args.rounds, "model": args.model},
        "rows": rows, "ray_overhead_s_vs_local": overhead,
        "goals": {"wall_vs_one_device_at_16": "<= 1.2", "ray_overhead_s": "< 2"},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,16", help="fleet sizes, comma-separated")
    parser.add_argument("--fps", type=float, default=20.0, help="frame rate of the paced workload")
    parser.add_argument("--frames", type=int, default=60, help="frames per device run")
    parser.add_argument("--rounds", type=int, default=3, help="runs per (size, executor); the median is kept")
    parser.add_argument("--executors", default="local,ray", help="local and/or ray")
    parser.add_argument("--model", default="mobilenet-tiny", help="zoo model")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    args.sizes = sorted({int(s) for s in args.sizes.split(",")})
    args.executors = [e.strip() for e in args.executors.split(",") if e.strip()]
    reason = unavailable_reason()
    if reason:
        print(f"skipped: {reason}", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="edgeopt-fleet-bench-") as tmp:
        model = build(args.model, Path(tmp) / f"{args.model}.onnx")
        with Lab(Path(tmp) / "lab", max(args.sizes)) as lab:
            if "ray" in args.executors:
                import ray

                ray.init(address="local", resources={f"edgeopt-device:{d.name}": 1.0 for d in lab.devices},
                         include_dashboard=False, log_to_driver=False)
            try:
                report = summarize(measure(model, lab, args), args)
            finally:
                if "ray" in args.executors:
                    ray.shutdown()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
