"""Harness overhead: median latency measured by ``edgeopt bench`` vs a bare ``session.run`` loop.

Interleaved A/B rounds on the same ONNX models (a ~0.25 ms and a ~20 ms zoo CNN), same thread count, same
warm-up and duration. A = edgeopt.benchmark (the agent in a subprocess, exactly as the CLI runs it);
B = a bare onnxruntime loop in this process. Prints a table and writes JSON. Goal: ratio A/B <= 1.01.

Usage: python -m benchmarks.harness_overhead [--rounds 5] [--duration 2] [--out benchmarks/results/...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

import edgeopt
from benchmarks.common import RESULTS, machine_facts, print_table, write_json
from edgeopt.zoo import build

MODELS = ("mobilenet-small", "mobilenet-large")


def bare_loop(path: Path, threads: int, warmup: int, duration_s: float, seed: int) -> float:
    """Median latency (ms) of a bare session.run loop in this process."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    shape = [d if isinstance(d, int) else 1 for d in inp.shape]
    feeds = {inp.name: np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}
    for _ in range(warmup):
        sess.run(None, feeds)
    samples = []
    clock = time.perf_counter_ns
    end = clock() + int(duration_s * 1e9)
    while True:
        t0 = clock()
        sess.run(None, feeds)
        t1 = clock()
        samples.append(t1 - t0)
        if t1 >= end and len(samples) >= 200:
            break
    return statistics.median(samples) / 1e6


def edgeopt_loop(path: Path, threads: int, warmup: int, duration_s: float, seed: int) -> float:
    r = edgeopt.benchmark(path, target="local", use_target_fps=False, threads=threads, warmup=warmup,
                          min_duration_s=duration_s, iterations=200, seed=seed)
    return r.latency_ms.p50


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0, help="seconds of timed inferences per measurement")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads for both A and B")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--out", type=Path, default=RESULTS / "harness_overhead.json")
    args = ap.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-overhead-") as tmp:
        for name in MODELS:
            path = build(name, Path(tmp) / f"{name}.onnx")
            a_runs, b_runs = [], []
            for i in range(args.rounds):
                # Alternate the order so drift (thermal, neighbours) hits both sides equally.
                order = [("A", edgeopt_loop), ("B", bare_loop)]
                if i % 2:
                    order.reverse()
                for side, fn in order:
                    value = fn(path, args.threads, args.warmup, args.duration, seed=0)
                    (a_runs if side == "A" else b_runs).append(value)
                    print(f"{name} round {i + 1} {side}: p50 {value:.4f} ms", file=sys.stderr)
            ratios = [a / b for a, b in zip(a_runs, b_runs, strict=True)]
            rows.append({
                "model": name,
                "edgeopt_p50_ms": statistics.median(a_runs),
                "bare_p50_ms": statistics.median(b_runs),
                "ratio_of_medians": statistics.median(a_runs) / statistics.median(b_runs),
                "ratio_per_round": ratios,
                "edgeopt_rounds_ms": a_runs,
                "bare_rounds_ms": b_runs,
            })

    # The harness's own per-inference cost: the null runtime returns at once, so p50 is clock + call + append.
    with tempfile.TemporaryDirectory(prefix="edgeopt-overhead-") as tmp:
        path = build("mobilenet-tiny", Path(tmp) / "m.onnx")
        null = edgeopt.benchmark(path, runtime="null", use_target_fps=False, min_duration_s=1.0, iterations=1000)
    null_ns = {"p50_ns": null.latency_ms.p50 * 1e6, "p99_ns": null.latency_ms.p99 * 1e6, "samples": null.run.samples}

    env = machine_facts("onnxruntime", "numpy")
    out = {"benchmark": "harness_overhead", "settings": vars(args) | {"out": str(args.out)}, "environment": env,
           "results": rows, "null_runtime": null_ns, "goal": "ratio_of_medians <= 1.01"}
    write_json(args.out, out)

    print(f"\nharness overhead on {env['cpu']} ({args.rounds} interleaved rounds, {args.duration} s each, "
          f"{args.threads} thread(s))")
    print_table(["model", "edgeopt p50 ms", "bare p50 ms", "ratio", "round ratios (min..max)"],
                [[r["model"], f"{r['edgeopt_p50_ms']:.4f}", f"{r['bare_p50_ms']:.4f}", r["ratio_of_medians"],
                  f"{min(r['ratio_per_round']):.3f} .. {max(r['ratio_per_round']):.3f}"] for r in rows])
    print(f"null runtime (harness alone): p50 {null_ns['p50_ns']:.0f} ns, p99 {null_ns['p99_ns']:.0f} ns per inference "
          f"over {null_ns['samples']} samples")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
