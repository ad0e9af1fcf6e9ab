"""Wall time of a 5-level ``edgeopt.sweep`` on a real ~3M-parameter model, and its recommendation vs ORT INT8.

Model: PP-OCRv4 rec (2.69M parameters, a Paddle export shipped in the ``rapidocr-onnxruntime`` wheel), on real text
lines cut from scikit-image's bundled ``text`` and ``page`` images (48x320, PP-OCR's ``(x - 0.5) / 0.5``). Levels:
fp32 + fp16, int8, int4, prune30-int8 on onnxruntime, local target, fresh (no cache), INT8 search off (the sweep's
fixed cost; ``--search`` adds the bounded accuracy-aware INT8 search). Where the time goes is measured by timing
the sweep's three stages (optimize, eval outputs on the device, benchmark). The comparison: the same model
quantized by ``onnxruntime.quantization.quantize_static`` with its defaults (QDQ, S8/S8 per-tensor, MinMax, every
op type), calibrated on the same lines, benchmarked through ``edgeopt.benchmark`` and scored with the same metric.

``--model digits-cnn``: the digits CNN trained in benchmarks/recipes.py, swept with real labels (top-1) on
onnxruntime and OpenVINO: top-1 accuracy and retention per level.

Usage: python -m benchmarks.sweep [--samples 32] [--metric agreement] [--min-retention 0.99] [--search]
       [--out benchmarks/results/sweep.json]
       python -m benchmarks.sweep --model digits-cnn --out benchmarks/results/sweep_digits.json
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import edgeopt
from benchmarks.common import RESULTS, machine_facts, real_model, write_json
from benchmarks.recipes import text_images
from edgeopt.evaluation import device_outputs, parse_output, resolve_metric, retention
from edgeopt.runners import LocalRunner

MODEL = "ch_PP-OCRv4_rec_infer.onnx"


def text_lines(n: int, h: int = 48, w: int = 320, seed: int = 0) -> np.ndarray:
    """Bands of real text (one to two lines high), resized to height ``h`` and right-padded to ``w`` like PP-OCR."""
    from PIL import Image

    images, _ = text_images()
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        im = images[k % len(images)]
        bh, bw = int(rng.integers(30, 70)), int(rng.integers(200, im.shape[1]))
        top, left = int(rng.integers(0, im.shape[0] - bh)), int(rng.integers(0, im.shape[1] - bw))
        crop = Image.fromarray((im[top:top + bh, left:left + bw] * 255).astype(np.uint8))
        nw = min(w, round(bw * h / bh))
        line = np.asarray(crop.resize((nw, h), Image.Resampling.BILINEAR), np.float32) / 255.0
        x = np.zeros((h, w, 3), np.float32)
        x[:, :nw] = (line - 0.5) / 0.5
        out.append(x.transpose(2, 0, 1))
    return np.stack(out)


def param_count(path: Path) -> int:
    import onnx

    m = onnx.load(str(path))
    n = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
    return n + sum(int(np.prod(a.t.dims)) for node in m.graph.node if node.op_type == "Constant"
                   for a in node.attribute if a.name == "value")


def ctc_text_match(ref: np.ndarray, out: np.ndarray) -> float:
    """Share of lines whose greedy CTC decoding (blank = 0) equals the reference's: what an OCR user sees."""
    def decode(ids: np.ndarray) -> tuple[int, ...]:
        keep = [int(v) for i, v in enumerate(ids) if v != 0 and (i == 0 or v != ids[i - 1])]
        return tuple(keep)

    return float(np.mean([decode(a) == decode(b) for a, b in zip(ref.argmax(-1), out.argmax(-1), strict=True)]))


class StageTimer:
    """Wraps the sweep's stage functions (module attributes) to add up where its wall time goes."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, module: Any, attr: str, stage: str) -> None:
        fn = getattr(module, attr)

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - t0
                self.calls[stage] += 1

        setattr(module, attr, timed)


def ort_defaults(model: Path, x: np.ndarray, work: Path) -> tuple[Path, str]:
    """``quantize_static`` with its defaults on the model as shipped (ORT's pre-processing only if that fails)."""
    from onnxruntime.quantization import CalibrationDataReader, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{"x": x[i:i + 1]} for i in range(len(x))])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    out = work / "ort_default_int8.onnx"
    try:
        quantize_static(str(model), str(out), Reader())
        return out, "quantize_static defaults"
    except Exception as exc:  # noqa: BLE001 - fall back to ORT's own recommended pre-processing
        from onnxruntime.quantization.shape_inference import quant_pre_process

        pre = work / "pre.onnx"
        quant_pre_process(str(model), str(pre), skip_symbolic_shape=True)
        quantize_static(str(pre), str(out), Reader())
        return out, f"quant_pre_process + quantize_static defaults (plain call failed: {str(exc)[:80]})"


def _search_summary(search: Any) -> dict[str, Any] | None:
    """What the accuracy-aware INT8 search did (a typed ``Int8SearchResult``), without the per-node lists."""
    if search is None:
        return None
    chosen = search.chosen
    return {"seconds": search.seconds, "device_trials": len(search.trials), "host_checks": len(search.host_checks),
            "quantized_nodes": search.quantized_nodes, "float_nodes": len(search.float_nodes),
            "chosen": chosen.label if chosen else None, "retention": chosen.retention if chosen else None,
            "latency_ms": chosen.latency_ms if chosen else None, "runtimes": search.runtimes,
            "float_sets": search.float_sets,
            "trials": [{"label": t.label, "runtime": t.runtime, "retention": t.retention, "latency_ms": t.latency_ms,
                        "passed": t.passed} for t in search.trials]}


def _speedups(result: Any) -> dict[str, float | None]:
    """Latency ratios of the recommendation to onnxruntime FP32 and to the fastest true-FP32 runtime (issue 14)."""
    fp32 = {lv.runtime: lv.latency_ms for lv in result.levels if lv.recipe == "fp32"}
    rec = result.recommendation
    if rec is None or "onnxruntime" not in fp32:
        return {"speedup_vs_ort_fp32": None, "speedup_vs_fastest_fp32": None}
    return {"speedup_vs_ort_fp32": round(fp32["onnxruntime"] / rec.latency_ms, 3),
            "speedup_vs_fastest_fp32": round(min(fp32.values()) / rec.latency_ms, 3)}


def digits(args: argparse.Namespace) -> int:
    """The digits CNN with real labels: top-1 accuracy and retention per level, onnxruntime and OpenVINO."""
    from benchmarks.recipes import digits_cnn

    with tempfile.TemporaryDirectory(prefix="edgeopt-bench-sweep-digits-") as tmp:
        work = Path(tmp)
        m = digits_cnn(work, epochs=15, retrain=False)
        t0 = time.perf_counter()
        result = edgeopt.sweep(m["path"], eval=m["eval"], calib=m["calib"], metric="top1",
                               recipes=["fp16", "int8", "int4", "prune30-int8"], min_retention=args.min_retention,
                               out_dir=work / "sweep", no_cache=True, int8_search=False, iterations=args.iterations,
                               min_duration_s=args.duration, threads=args.threads)
        wall = time.perf_counter() - t0
    rows = [{"config": f"{lv.recipe}/{lv.runtime}", "size_bytes": lv.size_bytes, "latency_ms_p50": lv.latency_ms,
             "top1": round(lv.metric_value, 4), "retention": round(lv.retention, 4), "passed": lv.passed}
            for lv in result.levels]
    rec = result.recommendation
    doc = {"benchmark": "sweep-digits", "model": "digits CNN (trained here, scikit-learn digits)",
           "eval": f"{result.eval_samples} held-out labelled digits", "metric": "top1",
           "min_retention": args.min_retention, "runtimes": result.runtimes,
           "machine": machine_facts("onnxruntime", "openvino"), "sweep_wall_s": round(wall, 1),
           "recommendation": None if rec is None else f"{rec.recipe}/{rec.runtime}", "reason": result.reason,
           "rows": rows}
    print(f"\ndigits CNN, {result.eval_samples} labelled digits, top-1, min retention {args.min_retention}: "
          f"{len(rows)} configs in {wall:.1f} s")
    print(f"{'config':28} {'size KB':>8} {'p50 ms':>8} {'top-1':>7} {'retention':>9} passed")
    for r in rows:
        print(f"{r['config']:28} {r['size_bytes'] / 1e3:8.1f} {r['latency_ms_p50']:8.3f} {r['top1']:7.4f} "
              f"{r['retention']:9.4f} {r['passed']}")
    print(f"recommendation: {doc['recommendation'] or result.reason}")
    write_json(args.out, doc)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["ppocr-rec", "digits-cnn"], default="ppocr-rec")
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--metric", default="agreement")
    ap.add_argument("--min-retention", type=float, default=0.99)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1,
                    help="runtime threads (1: this 2-vCPU VM gives a 2nd thread only part of the time)")
    ap.add_argument("--search", action="store_true", help="also run the accuracy-aware INT8 search (bounded)")
    ap.add_argument("--out", type=Path, default=RESULTS / "sweep.json")
    args = ap.parse_args()
    if args.model == "digits-cnn":
        return digits(args)
    model = real_model(MODEL, "sweep")
    if model is None:
        return 0
    bench_opts = {"iterations": args.iterations, "min_duration_s": args.duration, "threads": args.threads}
    with tempfile.TemporaryDirectory(prefix="edgeopt-bench-sweep-") as tmp:
        work = Path(tmp)
        x = text_lines(args.samples)
        eval_npz = work / "lines.npz"
        np.savez(eval_npz, x=x)
        timer = StageTimer()  # edgeopt.sweep is also the function's name: import the modules by path
        sweep_api = importlib.import_module("edgeopt.sweep.api")
        sweep_measure = importlib.import_module("edgeopt.sweep.measure")
        timer.wrap(sweep_api, "optimize", "optimize")
        timer.wrap(sweep_measure, "device_outputs", "eval outputs (agent)")
        timer.wrap(sweep_measure, "run_benchmark", "benchmark (agent)")
        marks: list[tuple[str, float]] = []
        t0 = time.perf_counter()

        def progress(event: dict[str, Any]) -> None:
            if event.get("event") == "level":
                marks.append((event["recipe"], time.perf_counter() - t0))
                print(f"{marks[-1][1]:7.1f}s {event['recipe']}: retention {event['retention']:.4f}, "
                      f"p50 {event['latency_ms']:.2f} ms", file=sys.stderr)

        result = edgeopt.sweep(model, eval=eval_npz, recipes=["fp16", "int8", "int4", "prune30-int8"],
                               metric=args.metric, min_retention=args.min_retention,
                               runtimes=["onnxruntime", "openvino"],
                               out_dir=work / "sweep", no_cache=True, int8_search=args.search, progress=progress,
                               **bench_opts)
        wall = time.perf_counter() - t0
        per_level = [{"recipe": r, "seconds": round(t - (marks[i - 1][1] if i else 0.0), 1)}
                     for i, (r, t) in enumerate(marks)]
        # plain ORT INT8 defaults on the same model and data, measured the same way
        q, how = ort_defaults(model, x, work)
        runner = LocalRunner()
        met, sel = resolve_metric(args.metric), parse_output(None)
        ref_outs, names, _ = device_outputs(model, eval_npz, runtime="onnxruntime", runner=runner)
        q_outs, q_names, _ = device_outputs(q, eval_npz, runtime="onnxruntime", runner=runner)
        ref, out = sel.pick(ref_outs, names), sel.pick(q_outs, q_names)
        _, ort_ret = retention(met, ref, out.astype(ref.dtype), None)
        shapes = {"x": [1, *x.shape[1:]]}
        ort_bench = edgeopt.benchmark(q, target="local", runtime="onnxruntime", shapes=shapes, warmup=5, **bench_opts)
        text = {"ort-defaults-int8": ctc_text_match(ref, out)}
        q_size = q.stat().st_size  # the temp dir is gone after the with block
        for lv in result.levels:
            lv_outs, lv_names, _ = device_outputs(Path(lv.artifact), eval_npz, runtime=lv.runtime, runner=runner,
                                                  runtime_options=lv.details.get("effective_runtime_options"))
            text[f"{lv.recipe}/{lv.runtime}"] = ctc_text_match(ref, sel.pick(lv_outs, lv_names))
    rec = result.recommendation
    rows = [{"config": f"{lv.recipe}/{lv.runtime}", "size_bytes": lv.size_bytes, "latency_ms_p50": lv.latency_ms,
             "retention": round(lv.retention, 4),
             "ctc_text_match": round(text.get(f"{lv.recipe}/{lv.runtime}", float("nan")), 4),
             "passed": lv.passed} for lv in result.levels]
    rows.append({"config": "ort-defaults-int8/onnxruntime", "size_bytes": q_size,
                 "latency_ms_p50": ort_bench.latency_ms.p50, "retention": round(ort_ret, 4),
                 "ctc_text_match": round(text["ort-defaults-int8"], 4), "passed": ort_ret >= args.min_retention})
    doc = {
        "benchmark": "sweep", "model": MODEL, "parameters": param_count(model), "eval": f"{args.samples} text lines "
        "48x320 from skimage text+page", "metric": args.metric, "min_retention": args.min_retention,
        "machine": machine_facts("onnxruntime", "openvino"), "searched": args.search,
        "sweep_wall_s": round(wall, 1), "sweep_reported_s": result.seconds, "levels_measured": len(result.levels),
        "per_level_s": per_level, "stage_s": {k: round(v, 1) for k, v in timer.seconds.items()},
        "stage_calls": dict(timer.calls), "ort_int8_how": how,
        "recommendation": None if rec is None else {"config": f"{rec.recipe}/{rec.runtime}",
                                                    "latency_ms_p50": rec.latency_ms, "retention": rec.retention},
        "reason": result.reason, "rows": rows, "int8_search": _search_summary(result.int8_search),
        "threads": result.threads, "ranking": result.ranking, **_speedups(result),
    }
    print(f"\nPP-OCRv4 rec ({doc['parameters']:,} params), {args.samples} lines, metric {args.metric}, "
          f"min retention {args.min_retention}: {len(result.levels)}-level sweep in {wall:.1f} s "
          f"(stages: {doc['stage_s']})")
    print(f"{'config':34} {'size MB':>8} {'p50 ms':>8} {'retention':>9} {'CTC text':>8} passed")
    for r in rows:
        size = f"{r['size_bytes'] / 1e6:.2f}" if r["size_bytes"] else "-"
        print(f"{r['config']:34} {size:>8} {r['latency_ms_p50']:8.2f} {r['retention']:9.4f} "
              f"{r['ctc_text_match']:8.4f} {r['passed']}")
    print(f"recommendation: {doc['recommendation'] or result.reason}")
    print(f"speed-up over onnxruntime FP32 {doc['speedup_vs_ort_fp32']}x (goal 1.5), over the fastest FP32 runtime "
          f"{doc['speedup_vs_fastest_fp32']}x (goal 1.15); sweep {result.seconds:.1f} s (goal 120), "
          f"{result.threads} threads")
    if doc["int8_search"]:
        srch = doc["int8_search"]
        print(f"int8 search: {srch['seconds']:.0f} s, {srch['device_trials']} device trials, "
              f"{srch['host_checks']} host checks; chosen {srch['chosen']} ({srch['float_nodes']} of "
              f"{srch['quantized_nodes']} weight nodes float)")
    write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
