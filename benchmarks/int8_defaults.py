"""Why ``quantize_int8`` defaults to U8 activations, S8 per-channel weights, reduce_range and weight ops
(+ Relu/Clip/MaxPool).

Each variant changes one option of the default through a recipe (so it measures edgeopt's own code path), on the
digits CNN trained by ``benchmarks/recipes.py`` (accuracy on real held-out labels) and on real PP-OCR models
(cosine / top-1 agreement vs FP32). Latency: edgeopt.benchmark through the agent, interleaved rounds, minimum of
the per-round medians. Run ``benchmarks/recipes.py`` first (it trains and caches the digits CNN).

Usage: python -m benchmarks.int8_defaults [--rounds 3] [--duration 2] [--out benchmarks/results/int8_defaults.json]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

import edgeopt
from benchmarks.common import RESULTS, machine_facts, real_model, write_json
from benchmarks.recipes import CACHE, digits_cnn, onnx_final, photo_crops
from edgeopt.calib import DataSource
from edgeopt.optimize.fidelity import agent_latency
from edgeopt.passes import ArtifactFormat
from edgeopt.recipes import Recipe, RecipeStep
from edgeopt.targets import cpu_facts

W = ["Conv", "MatMul", "Gemm"]
VARIANTS: dict[str, dict[str, Any]] = {
    "edgeopt default (U8/S8 per-channel, reduce_range, weight ops + Relu/Clip/MaxPool)": {},
    "weight ops only (Conv/MatMul/Gemm)": {"op_types_to_quantize": W},
    "no reduce_range": {"reduce_range": False},
    "S8 activations": {"activation_type": "s8"},
    "per-tensor weights": {"per_channel": False},
    "all ops": {"op_types_to_quantize": []},
    "onnxruntime defaults (S8/S8 per-tensor, all ops)": {
        "activation_type": "s8", "per_channel": False, "reduce_range": False, "op_types_to_quantize": []},
}


def recipe(options: dict[str, Any]) -> Recipe:
    return Recipe(name="variant", description="one int8 option changed", formats=[ArtifactFormat.ONNX], passes=[
        RecipeStep(pass_name="cleanup", config={"min_opset": 17}),
        RecipeStep(pass_name="quantize_int8", config=options),
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--models", default="digits-cnn,ppocr-cls,ppocr-det")
    ap.add_argument("--out", type=Path, default=RESULTS / "int8_defaults.json")
    args = ap.parse_args()
    wanted = set(args.models.split(","))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-int8-defaults-") as tmp:
        work = Path(tmp)
        models: list[tuple[str, Path, Path, Path | None]] = []
        if "digits-cnn" in wanted and (CACHE / "digits-cnn-e12.onnx").is_file():
            d = digits_cnn(work, 12, retrain=False)
            models.append(("digits-cnn", d["path"], d["calib"], d["eval"]))
        for name, file, shape in (("ppocr-cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", (48, 192)),
                                  ("ppocr-det", "ch_PP-OCRv4_det_infer.onnx", (320, 320))):
            path = real_model(file, f"int8_defaults: {name}") if name in wanted else None
            if path is None:
                continue
            models.append((name, path, photo_crops(work, name, 16, *shape), None))
        for name, path, calib, eval_ in models:
            finals: dict[str, Path] = {"fp32": path}
            model_rows = []
            for label, options in VARIANTS.items():
                r = edgeopt.optimize(path, target="local", recipe=recipe(options), calib=calib, eval_data=eval_,
                                     out_dir=work / name / str(len(finals)), bench=False)
                fid = {row.artifact: row for row in r.fidelity or []}
                final, ref = fid[onnx_final(r).name], fid["input"]
                finals[label] = Path(onnx_final(r).path)
                model_rows.append({"model": name, "variant": label, "options": onnx_final(r).pass_config,
                                   "cosine": final.cosine_similarity, "top1_agreement": final.top1_agreement,
                                   "accuracy": final.accuracy, "accuracy_fp32": ref.accuracy,
                                   "size_ratio": final.size_ratio})
                print(f"{name} {label}: optimized", file=sys.stderr)
            feed = DataSource(calib).samples(path, limit=1)[0]
            best: dict[str, float] = {}
            for _ in range(args.rounds):
                for label, p in finals.items():
                    best[label] = min(best.get(label, float("inf")),
                                      agent_latency(p, feed, iterations=50, min_duration_s=args.duration))
            for row in model_rows:
                row["latency_ms_p50"] = round(best[row["variant"]], 4)
                row["latency_ms_p50_fp32"] = round(best["fp32"], 4)
                row["speedup"] = round(best["fp32"] / best[row["variant"]], 3)
            rows.extend(model_rows)
    print(f"{'model':10s} {'variant':80s} {'p50 ms':>8s} {'speedup':>7s} {'cosine':>8s} {'agree':>6s} {'acc':>7s}")
    for r in rows:
        acc = "-" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        agree = "-" if r["top1_agreement"] is None else f"{r['top1_agreement']:.3f}"
        print(f"{r['model']:10s} {r['variant']:80s} {r['latency_ms_p50']:>8.3f} {r['speedup']:>7.2f} "
              f"{r['cosine']:>8.5f} {agree:>6s} {acc:>7s}")
    out = {"benchmark": "int8_defaults",
           "machine": {**machine_facts("onnxruntime", "openvino"), "cpu_flags": list(cpu_facts().flags)},
           "rounds": args.rounds, "duration_s": args.duration,
           "results": rows}
    write_json(args.out, out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
