"""Recipes benchmark: size, latency, fidelity and accuracy of every ONNX recipe on a trained CNN and on real
packaged models, with the time each optimize took.

Models:
- digits-cnn: a 4-conv CNN trained here (torch) on scikit-learn's bundled digits (REAL labels), upsampled to
  32x32; accuracy is measured on the held-out 30% split.
- PP-OCR cls / det / rec (rapidocr-onnxruntime wheel; Paddle exports, opset 11/12, Constant weights) calibrated
  and compared on crops of scikit-image's bundled text photo and scanned page (fidelity vs FP32; no labels).
  Without scikit-image, crops of scikit-learn's two bundled photos.
- silero-vad (16 kHz, LSTM; silero-vad wheel) on synthetic tones + noise (no audio ships with any package here).

Latency: edgeopt.benchmark (the device agent) on the input and each recipe's result, interleaved over rounds,
minimum of the per-round medians (this machine is shared: rounds damp other people's load).

Goals on this CPU: INT8 static on the CNNs >= 1.4x faster than FP32 with digits accuracy within 0.5 points;
INT4 on a MatMul/Gemm-heavy model <= 0.35x the FP32 size of those layers.

Needs: edgeopt[torch] and scikit-learn for the digits CNN; scikit-image (optional) for the text images; network
access once to fetch the two wheels into ~/.cache/edgeopt-test-models (tests/real_models.py).

Usage: python -m benchmarks.recipes [--rounds 5] [--duration 1] [--models digits-cnn,ppocr-cls,...]
       [--out benchmarks/results/recipes.json]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import edgeopt
from benchmarks.common import RESULTS, machine_facts, real_model, write_json
from edgeopt.optimize.fidelity import agent_latency
from edgeopt.passes import ArtifactFormat
from edgeopt.recipes import Recipe, load_recipe
from edgeopt.targets import cpu_facts

RECIPES = ("fp16", "int8", "int8-dynamic", "int4", "prune50")
CACHE = Path(os.environ.get("EDGEOPT_BENCH_CACHE", "~/.cache/edgeopt-bench")).expanduser()


def digits_cnn(work: Path, epochs: int, retrain: bool) -> dict[str, Any]:
    """Train (or reuse) the digits CNN; write calib/eval .npz files with real labels."""
    import torch
    import torch.nn.functional as F  # noqa: N812
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = torch.from_numpy((digits.images / 16.0).astype(np.float32)[:, None])
    x = F.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False).numpy()
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    model_path = CACHE / f"digits-cnn-e{epochs}.onnx"
    info: dict[str, Any] = {"train_samples": len(x_tr), "test_samples": len(x_te), "epochs": epochs}
    if retrain or not model_path.is_file():
        torch.manual_seed(0)
        net = _digits_net()
        opt = torch.optim.Adam(net.parameters(), 2e-3)
        xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
        started = time.perf_counter()
        for _ in range(epochs):
            net.train()
            for idx in torch.randperm(len(xt)).split(64):
                loss = F.cross_entropy(net(xt[idx]), yt[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        info["train_s"] = round(time.perf_counter() - started, 1)
        net.eval()
        CACHE.mkdir(parents=True, exist_ok=True)
        program = torch.onnx.export(net, (torch.zeros(1, 1, 32, 32),), dynamo=True, verbose=False)
        program.save(str(model_path))
    import onnx

    name = onnx.load(str(model_path), load_external_data=False).graph.input[0].name
    np.savez(work / "digits-calib.npz", **{name: x_tr[:64]})
    np.savez(work / "digits-eval.npz", **{name: x_te, "labels": y_te})
    return {"path": model_path, "calib": work / "digits-calib.npz", "eval": work / "digits-eval.npz", "info": info}


def _digits_net() -> Any:
    import torch.nn as nn

    def block(cin: int, cout: int) -> list[Any]:
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(
        *block(1, 32), *block(32, 64), nn.MaxPool2d(2), *block(64, 128), nn.MaxPool2d(2), *block(128, 128),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10),
    )


def text_images() -> tuple[list[np.ndarray], str]:
    """Real pictures of text (scikit-image's bundled ``text`` and ``page``), upscaled 2x, as RGB in [0, 1];
    scikit-learn's two bundled photos when scikit-image is not installed."""
    try:
        from PIL import Image
        from skimage import data

        out = []
        for img in (data.text(), data.page()):
            big = Image.fromarray(img).resize((img.shape[1] * 2, img.shape[0] * 2), Image.Resampling.BILINEAR)
            gray = np.asarray(big, dtype=np.float32) / 255.0
            out.append(np.repeat(gray[:, :, None], 3, axis=2))
        return out, "scikit-image text + page (real photos/scans of text)"
    except ImportError:
        from sklearn.datasets import load_sample_images

        return [im.astype(np.float32) / 255.0 for im in load_sample_images().images], "scikit-learn photos"


def photo_crops(work: Path, name: str, n: int, h: int, w: int, input_name: str = "x") -> Path:
    """Random crops of real text images, normalized like PP-OCR ((x - 0.5) / 0.5)."""
    images, _ = text_images()
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        im = images[i % len(images)]
        top, left = rng.integers(0, im.shape[0] - h), rng.integers(0, im.shape[1] - w)
        out.append(((im[top:top + h, left:left + w] - 0.5) / 0.5).transpose(2, 0, 1)[None])
    path = work / f"{name}.npz"
    np.savez(path, **{input_name: np.stack(out).astype(np.float32)})
    return path


def vad_audio(work: Path, n: int = 32) -> Path:
    """Synthetic 16 kHz chunks (tones + noise) for silero-vad's [1, 576] input and zero LSTM state."""
    rng = np.random.default_rng(0)
    t = np.arange(576) / 16000
    chunks = [(0.3 * np.sin(2 * np.pi * (150 + 35 * i) * t) + 0.05 * rng.standard_normal(576)).astype(np.float32)
              for i in range(n)]
    path = work / "vad.npz"
    np.savez(path, input=np.stack(chunks)[:, None], state=np.zeros((n, 2, 1, 128), np.float32))
    return path


def models(work: Path, wanted: set[str], epochs: int, retrain: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if "digits-cnn" in wanted:
        try:
            d = digits_cnn(work, epochs, retrain)
            out.append({"name": "digits-cnn", "path": d["path"], "calib": d["calib"], "eval": d["eval"],
                        "info": d["info"]})
        except ImportError as exc:
            print(f"skip digits-cnn: {exc} (pip install 'edgeopt[torch]' scikit-learn)", file=sys.stderr)
    real = {
        "ppocr-cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", lambda: photo_crops(work, "cls", 32, 48, 192)),
        "ppocr-det": ("ch_PP-OCRv4_det_infer.onnx", lambda: photo_crops(work, "det", 16, 256, 320)),
        "ppocr-rec": ("ch_PP-OCRv4_rec_infer.onnx", lambda: photo_crops(work, "rec", 32, 48, 320)),
        "silero-vad": ("silero_vad_openvino_16k.onnx", lambda: vad_audio(work)),
    }
    for name, (file, data) in real.items():
        if name not in wanted:
            continue
        path = real_model(file, f"recipes: {name}")
        if path is None:
            continue
        info = {"file": file, "data": text_images()[1] if name.startswith("ppocr") else "synthetic tones + noise"}
        out.append({"name": name, "path": path, "calib": data(), "eval": None, "info": info})
    return out


def run_model(m: dict[str, Any], work: Path, rounds: int, duration: float) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    finals: dict[str, Path] = {}
    for recipe in RECIPES:
        started = time.perf_counter()
        try:
            r = edgeopt.optimize(m["path"], target="local", recipe=onnx_only(recipe), calib=m["calib"],
                                 eval_data=m["eval"],
                                 out_dir=work / m["name"] / recipe, bench=False)
        except edgeopt.errors.EdgeoptError as exc:
            rows.append({"model": m["name"], "recipe": recipe, "error": str(exc)})
            print(f"{m['name']:11s} {recipe:13s} FAILED: {exc}", file=sys.stderr)
            continue
        seconds = time.perf_counter() - started
        fid = {row.artifact: row for row in r.fidelity or []}
        art = onnx_final(r)
        final, ref = fid[art.name], fid["input"]
        rows.append({
            "model": m["name"], "recipe": recipe, "optimize_s": round(seconds, 2),
            "size_bytes_fp32": r.model.size_bytes, "size_bytes": art.size_bytes, "size_ratio": final.size_ratio,
            "max_abs_error": final.max_abs_error, "cosine": final.cosine_similarity,
            "top1_agreement": final.top1_agreement, "accuracy_fp32": ref.accuracy, "accuracy": final.accuracy,
            "report": {k: v for k, v in art.report.items() if k != "per_layer"},
            "warnings": r.warnings + art.warnings, "notes": final.notes,
        })
        finals[recipe] = Path(art.path)
        if r.artifacts[0].pass_name == "cleanup" and "fp32-cleanup" not in finals:
            finals["fp32-cleanup"] = Path(r.artifacts[0].path)  # FP32 after cleanup: what the speedups build on
        print(f"{m['name']:11s} {recipe:13s} optimized in {seconds:.1f} s", file=sys.stderr)
    feed = _first_feed(m)
    paths = {"fp32": Path(m["path"]), **finals}
    cleanup = paths.pop("fp32-cleanup", None)
    if cleanup is not None:
        paths["fp32-cleanup"] = cleanup
    best: dict[str, float] = {}
    for _ in range(rounds):  # interleaved rounds: every model sees the same background load
        for key, path in paths.items():
            try:
                p50 = agent_latency(path, feed, iterations=50, min_duration_s=duration)
            except Exception as exc:  # a runtime without a kernel for a model: record, go on
                print(f"{m['name']} {key}: latency failed: {exc}", file=sys.stderr)
                continue
            best[key] = min(best.get(key, float("inf")), p50)
    for row in rows:
        if "error" not in row:
            row["latency_ms_p50"] = _r(best.get(row["recipe"]))
            row["latency_ms_p50_fp32"] = _r(best.get("fp32"))
            row["latency_ms_p50_fp32_cleanup"] = _r(best.get("fp32-cleanup"))
            row["speedup_vs_cleanup"] = _r(best["fp32-cleanup"] / best[row["recipe"]]) \
                if row["recipe"] in best and "fp32-cleanup" in best else None
            row["speedup"] = _r(best["fp32"] / best[row["recipe"]]) if row["recipe"] in best and "fp32" in best \
                else None
    return rows


def _first_feed(m: dict[str, Any]) -> dict[str, np.ndarray]:
    from edgeopt.calib import DataSource

    return DataSource(Path(m["calib"])).samples(Path(m["path"]), limit=1)[0]


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def onnx_only(name: str) -> Recipe:
    """The built-in recipe with formats: [onnx], so format conversions (other runtimes) stay out of the numbers."""
    return load_recipe(name).recipe.model_copy(update={"formats": [ArtifactFormat.ONNX]})


def onnx_final(r: Any) -> Any:
    """The recipe's last ONNX artifact (conversions to other formats may follow it)."""
    return [a for a in r.artifacts if a.format.value == "onnx"][-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0, help="Seconds of timed inferences per latency run.")
    ap.add_argument("--epochs", type=int, default=12, help="Training epochs of the digits CNN.")
    ap.add_argument("--retrain", action="store_true", help="Retrain the digits CNN even when cached.")
    ap.add_argument("--models", default="digits-cnn,ppocr-cls,ppocr-det,ppocr-rec,silero-vad")
    ap.add_argument("--out", type=Path, default=RESULTS / "recipes.json")
    args = ap.parse_args()
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    infos = {}
    with tempfile.TemporaryDirectory(prefix="edgeopt-bench-recipes-") as tmp:
        work = Path(tmp)
        for m in models(work, set(args.models.split(",")), args.epochs, args.retrain):
            infos[m["name"]] = m["info"]
            rows.extend(run_model(m, work, args.rounds, args.duration))
    _print(rows)
    out = {
        "benchmark": "recipes",
        "machine": {**machine_facts("onnxruntime", "openvino", "torch"), "cpu_flags": list(cpu_facts().flags)},
        "load_average_before_after": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "rounds": args.rounds, "duration_s": args.duration, "models": infos, "results": rows,
        "goals": {"int8_speedup_cnn": ">= 1.4", "int8_digits_accuracy_drop_points": "<= 0.5",
                  "int4_weight_size_ratio": "<= 0.35"},
    }
    write_json(args.out, out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _print(rows: list[dict[str, Any]]) -> None:
    head = (f"{'model':11s} {'recipe':13s} {'size':>10s} {'ratio':>6s} {'p50 ms':>8s} {'fp32 ms':>8s} "
            f"{'speedup':>7s} {'vs clean':>8s} {'cosine':>8s} {'top1 agr':>8s} {'acc':>7s} {'acc fp32':>8s} "
            f"{'opt s':>6s}")
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['model']:11s} {r['recipe']:13s} FAILED: {r['error'][:90]}")
            continue
        print(f"{r['model']:11s} {r['recipe']:13s} {r['size_bytes']:>10,d} {r['size_ratio']:>6.3f} "
              f"{_f(r['latency_ms_p50'], '.3f'):>8s} {_f(r['latency_ms_p50_fp32'], '.3f'):>8s} "
              f"{_f(r['speedup'], '.2f'):>7s} {_f(r['speedup_vs_cleanup'], '.2f'):>8s} {_f(r['cosine'], '.5f'):>8s} "
              f"{_f(r['top1_agreement'], '.3f'):>8s} "
              f"{_f(r['accuracy'], '.4f'):>7s} {_f(r['accuracy_fp32'], '.4f'):>8s} {r['optimize_s']:>6.1f}")


def _f(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


if __name__ == "__main__":
    sys.exit(main())
