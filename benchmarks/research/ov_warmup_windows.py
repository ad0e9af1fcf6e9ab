"""Does OpenVINO need a warm-up longer than the sweep's 0.2 s? One fresh process compiles PP-OCRv4 det (480x640) at
1 thread with the given precision hint and prints the median latency of consecutive 0.4 s windows for 8 s.

Usage: python -m benchmarks.research.ov_warmup_windows bf16|f32
(the model from tests/real_models.py's cache; run alone)
Session 8 finding (docs/benchmarks.md): no warm-up trend on the AMX Xeon; bf16 reads ~19 ms from the first window.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.common import RESULTS, real_model, write_json


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("precision", choices=("bf16", "f32"), help="OpenVINO's INFERENCE_PRECISION_HINT")
    prec = ap.parse_args().precision
    import numpy as np
    import openvino as ov

    model = real_model("ch_PP-OCRv4_det_infer.onnx", "ov_warmup_windows")
    if model is None:
        return 0
    core = ov.Core()
    m = core.read_model(str(model))
    m.reshape([1, 3, 480, 640])
    t0 = time.perf_counter()
    c = core.compile_model(m, "CPU", {"INFERENCE_NUM_THREADS": 1, "INFERENCE_PRECISION_HINT": prec})
    print("compile", round(time.perf_counter() - t0, 2))
    r = c.create_infer_request()
    x = np.random.default_rng(0).random((1, 3, 480, 640), dtype=np.float32)
    start = time.perf_counter()
    out = []
    while time.perf_counter() - start < 8:
        w = time.perf_counter()
        ts = []
        while time.perf_counter() - w < 0.4:
            a = time.perf_counter()
            r.infer({0: x})
            ts.append((time.perf_counter() - a) * 1000)
        out.append((round(time.perf_counter() - start, 1), round(float(np.median(ts)), 1), len(ts)))
    print("| t (s) | median ms | inferences |")
    print("| --- | --- | --- |")
    for t, med, n in out:
        print(f"| {t} | {med} | {n} |")
    flags = set(Path("/proc/cpuinfo").read_text().split())
    machine = {"cpu_flags": sorted(f for f in flags if f.startswith(("amx", "avx512_bf16")))}
    dest = write_json(RESULTS / f"ov_warmup_windows_{prec}.json",
                      {"precision": prec, "threads": 1, "window_s": 0.4, "openvino": ov.__version__,
                       "machine": machine, "windows": out})
    print(f"wrote {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
