"""Formats benchmark: each runtime format's size, local latency and fidelity vs the ONNX FP32 model, in one table.

Models:
- digits-cnn: a 4-conv CNN trained here (torch) on scikit-learn's bundled digits (REAL labels, 32x32), the same
  model as benchmarks/recipes.py; top-1 accuracy on the held-out 30% split.
- ppocr-cls: PP-OCR's text direction classifier from the rapidocr-onnxruntime wheel (``pip download
  --no-deps`` into the cache; skipped when offline), on crops of real pictures of text (no labels: fidelity only).

Formats: ONNX FP32 (the reference), ONNX INT8 (recipe ``int8``), OpenVINO IR FP16 (FP32 ONNX, FP16 weights)
and INT8 (from the INT8 QDQ ONNX), TFLite FP32 / FP16 / full INT8 (through the ``tflite`` tool environment:
``edgeopt tools install tflite``; skipped when it is not installed). Latency: ``edgeopt.benchmark`` (the device
agent, each format on its runtime) on this machine, interleaved over rounds, minimum of the per-round medians.

Usage: EDGEOPT_TOOLS_DIR=/tmp/eo-tools python -m benchmarks.formats [--rounds 3] [--duration 1.5]
       [--models digits-cnn,ppocr-cls] [--out benchmarks/results/formats.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import edgeopt
from benchmarks.common import RESULTS, format_table, machine_facts, real_model, write_json
from benchmarks.recipes import digits_cnn, photo_crops
from edgeopt.calib import DataSource
from edgeopt.enums import Precision
from edgeopt.errors import EdgeoptError
from edgeopt.passes.base import Artifact, ArtifactFormat, NullReporter, PassContext
from edgeopt.passes.registry import load_pass_registry
from edgeopt.passes.validate import compare, run_artifact, run_onnx
from edgeopt.targets import cpu_facts, load_registry

# (label, pass, config, source: "fp32" or "int8"): how each non-ONNX format is made.
CONVERSIONS: tuple[tuple[str, str, dict[str, Any], str], ...] = (
    ("openvino_ir fp16", "to_openvino", {"compress_to_fp16": True}, "fp32"),
    ("openvino_ir int8", "to_openvino", {}, "int8"),
    ("tflite fp32", "to_tflite", {"quantization": "fp32"}, "fp32"),
    ("tflite fp16", "to_tflite", {"quantization": "fp16"}, "fp32"),
    ("tflite int8", "to_tflite", {"quantization": "full_int8"}, "fp32"),
)
EVAL_LIMIT = 300


def _samples(npz: Path) -> tuple[list[dict[str, np.ndarray]], np.ndarray | None]:
    data = np.load(npz)
    names = [k for k in data.files if k != "labels"]
    n = min(len(data[names[0]]), EVAL_LIMIT)
    # photo_crops stores [n, 1, C, H, W] (one batch-1 sample per row); digits stores [n, C, H, W]
    feeds = [{k: data[k][i] if data[k].ndim == 5 else data[k][i:i + 1] for k in names} for i in range(n)]
    return feeds, (data["labels"][:n] if "labels" in data.files else None)


def _convert(label: str, pass_name: str, config: dict[str, Any], source: Artifact, calib: Path,
             work: Path, shapes: dict[str, list[int]]) -> Artifact:
    registry = load_pass_registry()
    cls = registry.get_class(pass_name)
    reason = cls.availability()
    if reason:
        raise EdgeoptError(reason)
    target = load_registry().get("local")
    pass_ = cls(cls.parse_config(config)).for_target(target)
    out = work / label.replace(" ", "-")
    out.mkdir(parents=True, exist_ok=True)
    ctx = PassContext(work_dir=out, output_path=out / f"model{pass_.suffix}", target=target,  # type: ignore[attr-defined]
                      calibration=DataSource(calib, reporter=NullReporter(), input_shapes=shapes),
                      reporter=NullReporter(), input_shapes=shapes)
    return pass_.apply(source, ctx, name=label)


def _latency(paths: dict[str, Path], rounds: int, duration: float, shapes: dict[str, list[int]]) -> dict[str, float]:
    medians: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(rounds):
        for label, path in paths.items():
            r = edgeopt.benchmark(path, target="local", use_target_fps=False, min_duration_s=duration,
                                  iterations=100, warmup=10, energy=False, threads=1,
                                  shapes=None if path.suffix == ".tflite" else shapes)  # TFLite: static, renamed
            medians[label].append(r.latency_ms.p50)
    return {k: round(min(v), 4) for k, v in medians.items()}


def run_model(name: str, fp32: Path, calib: Path, eval_npz: Path, work: Path, rounds: int,
              duration: float) -> list[dict[str, Any]]:
    feeds, labels = _samples(eval_npz)
    shapes = {k: list(v.shape) for k, v in feeds[0].items()}  # batch 1: the converters need static shapes
    opt = edgeopt.optimize(fp32, target="local", recipe="int8", calib=calib, out_dir=work / "int8", fidelity=False,
                           bench=False, input_shapes=shapes)
    ref = run_onnx(fp32, feeds)
    src = Artifact.from_file(fp32, name="onnx fp32", format=ArtifactFormat.ONNX, precision=Precision.FP32)
    int8 = next(a for a in reversed(opt.artifacts) if a.format is ArtifactFormat.ONNX)
    int8 = int8.model_copy(update={"name": "onnx int8"})
    arts: dict[str, Artifact] = {"onnx fp32": src, "onnx int8": int8}
    rows: dict[str, dict[str, Any]] = {}
    for label, pass_name, config, source in CONVERSIONS:
        try:
            arts[label] = _convert(label, pass_name, config, src if source == "fp32" else int8, calib, work,
                                   shapes)
        except EdgeoptError as exc:
            rows[label] = {"model": name, "format": label, "skipped": str(exc)}
            print(f"{name:10s} {label:17s} skipped: {exc}", file=sys.stderr)
    for label, art in arts.items():
        got, runtime = run_artifact(art, feeds)
        fid = compare(ref, got)
        row: dict[str, Any] = {"model": name, "format": label, "runtime": runtime, "precision": art.precision.value,
                               "size_bytes": art.size_bytes, "size_ratio": round(art.size_bytes / src.size_bytes, 4),
                               **fid, "samples": len(feeds)}
        if labels is not None:
            hits = [int(np.argmax(g[0])) == int(y) for g, y in zip(got, labels, strict=True)]
            row["accuracy"] = round(float(np.mean(hits)), 4)
        rows[label] = row
    lat = _latency({k: Path(a.path) for k, a in arts.items()}, rounds, duration, shapes)
    for label, ms in lat.items():
        rows[label]["latency_p50_ms"] = ms
        rows[label]["speedup_vs_fp32"] = round(lat["onnx fp32"] / ms, 3)
    order = ["onnx fp32", "onnx int8", *(c[0] for c in CONVERSIONS)]
    return [rows[k] for k in order if k in rows]


def _models(work: Path, wanted: set[str], epochs: int) -> list[tuple[str, Path, Path, Path]]:
    out: list[tuple[str, Path, Path, Path]] = []
    if "digits-cnn" in wanted:
        d = digits_cnn(work, epochs, retrain=False)
        out.append(("digits-cnn", d["path"], d["calib"], d["eval"]))
    if "ppocr-cls" in wanted:
        path = real_model("ch_ppocr_mobile_v2.0_cls_infer.onnx", "formats: ppocr-cls")
        if path is not None:
            crops: Callable[[str, int], Path] = lambda n, k: photo_crops(work, n, k, 48, 192)  # noqa: E731
            out.append(("ppocr-cls", _static(path, work / "ppocr-cls-b1.onnx", [1, 3, 48, 192]),
                        crops("cls-calib", 64), crops("cls-eval", 96)))
    return out


def _static(src: Path, dst: Path, shape: list[int]) -> Path:
    """A copy with the input fixed at ``shape`` and batch 1 outputs (PP-OCR writes its batch dim as -1)."""
    import onnx

    model = onnx.load(str(src))
    for value, dims in [(model.graph.input[0], shape),
                        *((o, [1, *[d.dim_value for d in o.type.tensor_type.shape.dim[1:]]])
                          for o in model.graph.output)]:
        for d, n in zip(value.type.tensor_type.shape.dim, dims, strict=True):
            d.Clear()
            d.dim_value = n
    onnx.save(model, str(dst))
    return dst


def table(rows: list[dict[str, Any]]) -> str:
    def cells(r: dict[str, Any]) -> list[Any]:
        if "skipped" in r:
            return [r["model"], r["format"], f"skipped: {r['skipped']}", *[""] * 8]
        acc = f"{r['accuracy']:.4f}" if "accuracy" in r else None
        agr = f"{r['top1_agreement']:.4f}" if r.get("top1_agreement") is not None else None
        return [r["model"], r["format"], r["runtime"], f"{r['size_bytes'] / 1024:,.1f}", r["size_ratio"],
                f"{r['latency_p50_ms']:.4f}", f"{r['speedup_vs_fp32']:.2f}x", f"{r['max_abs_error']:.4g}",
                f"{r['cosine_similarity']:.6f}", agr, acc]

    return format_table(["model", "format", "runtime", "size (KiB)", "size ratio", "p50 ms", "speedup", "max abs err",
                         "cosine", "top-1 agr", "acc"], [cells(r) for r in rows])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.5, help="Seconds per latency measurement.")
    ap.add_argument("--epochs", type=int, default=12, help="digits CNN training epochs (cached per value).")
    ap.add_argument("--models", default="digits-cnn,ppocr-cls")
    ap.add_argument("--out", type=Path, default=RESULTS / "formats.json")
    args = ap.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="edgeopt-formats-") as tmp:
        work = Path(tmp)
        for name, fp32, calib, eval_npz in _models(work, set(args.models.split(",")), args.epochs):
            rows += run_model(name, fp32, calib, eval_npz, work / name, args.rounds, args.duration)
    machine = {**machine_facts("onnxruntime", "openvino", "ai-edge-litert"),
               "cpu_facts": cpu_facts().model_dump(mode="json")}
    doc = {"benchmark": "formats", "machine": machine, "rounds": args.rounds, "duration_s": args.duration,
           "eval_samples_max": EVAL_LIMIT, "rows": rows}
    write_json(args.out, doc)
    print(table(rows))
    print(f"machine: {json.dumps(machine, default=str)}")


if __name__ == "__main__":
    main()
