"""Acceptance: a real packaged OCR model whose naive INT8 destroys its output; the sweep finds a passing config.

PP-OCRv4 rec (``rapidocr-onnxruntime``'s wheel, a Paddle export nobody here wrote) on real text lines cut from
scikit-image's bundled ``text`` and ``page`` images. ``onnxruntime.quantization.quantize_static`` with its defaults
turns every character decision of the CTC logits into a different one (measured: 0 of the non-blank timesteps
agree with FP32); ``edgeopt.sweep(min_retention=...)`` (what ``edgeopt sweep --min-retention`` calls) must
find a mixed-precision INT8 config on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnxruntime", reason="the sweep runs on onnxruntime")
pytest.importorskip("openvino", reason="the speed floor is judged against OpenVINO FP32 too")
pytest.importorskip("skimage", reason="real text images come from scikit-image's bundled data")
pytest.importorskip("PIL", reason="resizing text lines needs Pillow")

from edgeopt.sweep import sweep  # noqa: E402
from tests.real_models import fetch  # noqa: E402

pytestmark = pytest.mark.slow  # ~3-4 minutes on 2 cores: 6 calibrated variants, ~100 host checks, device trials
MIN_RETENTION = 0.99  # issue 14's floor: int8 keeps ~0.955 on 32 lines; the search keeps a few nodes in float


def text_lines(n: int = 16, h: int = 48, w: int = 160) -> np.ndarray:
    """Bands of real text resized to PP-OCR's height 48, right-padded, normalized ``(x - 0.5) / 0.5``, NCHW."""
    from PIL import Image
    from skimage import data

    rng = np.random.default_rng(0)
    images = [data.text(), data.page()]
    out = []
    for k in range(n):
        im = images[k % 2]
        im = np.asarray(Image.fromarray(im).resize((im.shape[1] * 2, im.shape[0] * 2), Image.Resampling.BILINEAR))
        bh, bw = int(rng.integers(30, 70)), int(rng.integers(200, im.shape[1]))
        top, left = int(rng.integers(0, im.shape[0] - bh)), int(rng.integers(0, im.shape[1] - bw))
        nw = min(w, round(bw * h / bh))
        line = Image.fromarray(im[top:top + bh, left:left + bw]).resize((nw, h), Image.Resampling.BILINEAR)
        gray = np.asarray(line, np.float32) / 255.0
        x = np.zeros((3, h, w), np.float32)
        x[:, :, :nw] = (gray - 0.5) / 0.5
        out.append(x)
    return np.stack(out)


def run(model: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run(None, {"x": x[i:i + 1]})[0] for i in range(len(x))])


@pytest.fixture(scope="module")
def rec(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, np.ndarray]:
    model, why = fetch("ch_PP-OCRv4_rec_infer.onnx")
    if model is None:
        pytest.skip(f"PP-OCR rec model unavailable: {why}")
    x = text_lines()
    data = tmp_path_factory.mktemp("rec") / "lines.npz"
    np.savez(data, x=x)
    return model, data, x


def test_naive_int8_loses_the_characters(rec: tuple[Path, Path, np.ndarray], tmp_path: Path) -> None:
    from onnxruntime.quantization import CalibrationDataReader, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model, _, x = rec

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{"x": x[i:i + 1]} for i in range(len(x))])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.it, None)

    pre, q = tmp_path / "pre.onnx", tmp_path / "q.onnx"
    quant_pre_process(str(model), str(pre), skip_symbolic_shape=True)
    quantize_static(str(pre), str(q), Reader())  # onnxruntime's defaults: QDQ, S8/S8 per-tensor, every op type
    f, qo = run(model, x).argmax(-1), run(q, x).argmax(-1)
    chars = f != 0  # CTC blank is class 0: the timesteps where FP32 reads a character
    assert chars.mean() > 0.05, "the text lines must contain characters for this test to mean anything"
    assert (f[chars] == qo[chars]).mean() < 0.5, "naive INT8 was expected to lose most character decisions"


def fp32_speedups(result: Any) -> tuple[float, float]:
    """(onnxruntime FP32 / recommendation, fastest true-FP32 runtime / recommendation): ratios of level p50s."""
    fp32 = {lv.runtime: lv.latency_ms for lv in result.levels if lv.recipe == "fp32"}
    rec = result.recommendation.latency_ms
    return fp32["onnxruntime"] / rec, min(fp32.values()) / rec


def test_sweep_finds_mixed_precision_int8(rec: tuple[Path, Path, np.ndarray], tmp_path: Path) -> None:
    model, data, _ = rec
    result = sweep(model, eval=data, recipes=["int8"], runtimes=["onnxruntime", "openvino"], metric="agreement",
                   min_retention=MIN_RETENTION, max_trials=14, iterations=30, min_duration_s=0.5, threads=1,
                   out_dir=tmp_path)  # 1 thread, 0.5 s runs: 2-thread 0.1 s runs on 2 shared cores are noise
    by = {(lv.recipe, lv.runtime): lv for lv in result.levels}
    assert not by[("int8", "onnxruntime")].passed, by[("int8", "onnxruntime")]
    rec_lvl = result.recommendation
    assert rec_lvl is not None, result.reason
    assert rec_lvl.retention >= MIN_RETENTION
    vs_ort, vs_fastest = fp32_speedups(result)
    # the floor of issue 14: 1.5x over onnxruntime FP32 and 1.15x over the fastest true-FP32 runtime (OpenVINO f32)
    assert vs_ort >= 1.5 and vs_fastest >= 1.15, (vs_ort, vs_fastest, rec_lvl)
    search = result.int8_search
    assert search is not None and "openvino" in search.runtimes, search
    # onnxruntime is searched, or skipped with why (its full INT8 is clearly slower than a passing level here)
    assert set(search.runtimes) | set(search.skipped_runtimes) == {"onnxruntime", "openvino"}, search
    assert all("skipped: its full INT8 model" in why for why in search.skipped_runtimes.values())
    # a skipped runtime cannot win with a mix: the search's choice is not timed there (issue 32: sweep time)
    assert not [lv for lv in result.levels if lv.recipe == "int8-search" and lv.runtime in search.skipped_runtimes]
    assert (tmp_path / "int8-search" / "best.onnx").is_file()
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert doc["recommendation"]["recipe"] == rec_lvl.recipe and doc["threads"] >= 1
