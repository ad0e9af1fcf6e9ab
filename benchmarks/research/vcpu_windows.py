"""Does a 1-thread latency depend on which vCPU it lands on? (issue 21: 1-thread first measurements on the 2-vCPU VM
vary by up to ~40 % between independent measurements.)

PP-OCRv4 rec (rapidocr wheel, tests/real_models.py) on ONNX Runtime with one intra-op thread (it runs on the
calling thread), the calling thread pinned alternately to vCPU 0 and vCPU 1 (``os.sched_setaffinity``), 3 warm-up
inferences and one 0.3 s window per pin, ``--pairs`` adjacent pairs (the order alternates). Prints each vCPU's
median window, the paired ratio cpu0/cpu1 (median, range) and the spread of single windows; writes JSON.

Usage: python -m benchmarks.research.vcpu_windows [--pairs 30] [--window-s 0.3]
       [--out benchmarks/results/vcpu_windows.json]
Linux only; run it alone.
"""

from __future__ import annotations

import argparse
import os
import statistics as st
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import RESULTS, real_model, write_json
from edgeopt_agent.environment import cpu_model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--window-s", type=float, default=0.3)
    ap.add_argument("--out", type=Path, default=RESULTS / "vcpu_windows.json")
    args = ap.parse_args()
    import onnxruntime as ort

    cpus = sorted(os.sched_getaffinity(0))[:2]
    if len(cpus) < 2:
        print("vcpu_windows: needs two CPUs", file=sys.stderr)
        return 2
    model = real_model("ch_PP-OCRv4_rec_infer.onnx", "vcpu_windows")
    if model is None:
        return 2
    so = ort.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    feed = {sess.get_inputs()[0].name: np.random.default_rng(0).random((1, 3, 48, 320), dtype=np.float32)}
    windows: dict[int, list[float]] = {c: [] for c in cpus}
    for k in range(args.pairs):
        for cpu in (cpus if k % 2 == 0 else cpus[::-1]):
            os.sched_setaffinity(0, {cpu})
            for _ in range(3):
                sess.run(None, feed)
            times, t0 = [], time.perf_counter()
            while time.perf_counter() - t0 < args.window_s:
                a = time.perf_counter()
                sess.run(None, feed)
                times.append((time.perf_counter() - a) * 1e3)
            windows[cpu].append(st.median(times))
    a, b = cpus
    paired = [x / y for x, y in zip(windows[a], windows[b], strict=True)]
    doc = {"benchmark": "vcpu_windows", "cpu": cpu_model(), "cores": os.cpu_count(), "onnxruntime": ort.__version__,
           "pairs": args.pairs, "window_s": args.window_s,
           "median_ms": {str(c): round(st.median(w), 3) for c, w in windows.items()},
           "window_range_ms": {str(c): [round(min(w), 3), round(max(w), 3)] for c, w in windows.items()},
           "paired_ratio": {"median": round(st.median(paired), 3), "min": round(min(paired), 3),
                            "max": round(max(paired), 3)}, "windows_ms": {str(c): w for c, w in windows.items()}}
    for c in cpus:
        print(f"vCPU {c}: median window {doc['median_ms'][str(c)]} ms, range {doc['window_range_ms'][str(c)]}")
    print(f"paired vCPU {a}/{b}: median {doc['paired_ratio']['median']}, range "
          f"{doc['paired_ratio']['min']}-{doc['paired_ratio']['max']}")
    write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
