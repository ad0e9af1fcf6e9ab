"""Recipes on real models nobody on this project wrote, taken from PyPI wheels (slow; skipped offline).

PP-OCR (rapidocr-onnxruntime): Paddle exports at opset 11, every weight a Constant node. silero-vad: an LSTM.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import edgeopt
from edgeopt.optimize import OptimizeResult
from edgeopt.passes import Artifact
from tests.real_models import fetch

pytestmark = pytest.mark.slow


def onnx_final(result: OptimizeResult) -> Artifact:
    """The recipe's last ONNX artifact (format conversions for the target may follow it)."""
    return [a for a in result.artifacts if a.format.value == "onnx"][-1]


def _model(name: str) -> Path:
    path, why = fetch(name)
    if path is None:
        pytest.skip(why)
    return path


def _crops(tmp_path: Path, n: int, h: int, w: int) -> Path:
    rng = np.random.default_rng(0)
    try:
        from sklearn.datasets import load_sample_images

        photos = [im.astype(np.float32) / 255.0 for im in load_sample_images().images]
    except ImportError:
        photos = [rng.random((427, 640, 3), dtype=np.float32)]
    out = []
    for i in range(n):
        im = photos[i % len(photos)]
        top, left = rng.integers(0, im.shape[0] - h), rng.integers(0, im.shape[1] - w)
        out.append(((im[top:top + h, left:left + w] - 0.5) / 0.5).transpose(2, 0, 1)[None])
    path = tmp_path / "crops.npz"
    np.savez(path, x=np.stack(out).astype(np.float32))
    return path


def test_int8_on_a_paddle_export_converts_constants_and_shrinks(tmp_path: Path) -> None:
    model = _model("ch_ppocr_mobile_v2.0_cls_infer.onnx")
    result = edgeopt.optimize(model, target="local", recipe="int8", calib=_crops(tmp_path, 16, 48, 192),
                              out_dir=tmp_path / "o", bench=False)
    cleanup, final = [a for a in result.artifacts if a.format.value == "onnx"]
    assert cleanup.report["constants_to_initializers"] > 300 and cleanup.report["opset_after"] == 17
    assert final.size_bytes < 0.6 * result.model.size_bytes  # the weights really were quantized
    row = result.fidelity[-1] if result.fidelity else None
    assert row is not None and row.cosine_similarity is not None and row.cosine_similarity > 0.9
    ops = {n.op_type for n in onnx.load(final.path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops


def test_int4_on_a_matmul_model_counts_its_matmuls(tmp_path: Path) -> None:
    model = _model("ch_PP-OCRv4_rec_infer.onnx")
    result = edgeopt.optimize(model, target="local", recipe="int4", calib=_crops(tmp_path, 4, 48, 320),
                              out_dir=tmp_path / "o", bench=False)
    report = onnx_final(result).report
    assert report["matmuls_quantized"] == report["matmuls_with_constant_weights"] >= 9  # 4 more are QK^T, AV
    assert report["weight_size_ratio"] <= 0.35
    assert result.fidelity is not None and result.fidelity[-1].cosine_similarity > 0.95


def test_dynamic_int8_on_an_lstm(tmp_path: Path) -> None:
    model = _model("silero_vad_openvino_16k.onnx")
    rng = np.random.default_rng(0)
    data = tmp_path / "vad.npz"
    np.savez(data, input=(0.1 * rng.standard_normal((8, 1, 576))).astype(np.float32),
             state=np.zeros((8, 2, 1, 128), np.float32))
    result = edgeopt.optimize(model, target="local", recipe="int8-dynamic", calib=data, out_dir=tmp_path / "o",
                              bench=False)
    assert onnx_final(result).report["integer_ops"] >= 1
    assert result.fidelity is not None and result.fidelity[-1].cosine_similarity > 0.95
