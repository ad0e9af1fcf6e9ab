"""OpenVINO INT8 candidates: NNCF accuracy control with the sweep's retention, and a QDQ model's float set."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from edgeopt.errors import InputError
from edgeopt.sweep.int8.qdq_surgery import quantized_nodes
from tests.unit.passes.builders import run_model
from tests.unit.sweep.test_qdq_surgery import convnet, quantize

ov = pytest.importorskip("openvino", reason="the candidates run on OpenVINO")
pytest.importorskip("nncf", reason="accuracy control is NNCF's")

from edgeopt.sweep.int8.ov import NncfAccuracyControl, nncf_accuracy_control, write_float_set  # noqa: E402


def samples(n: int = 16) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [{"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(n)]


def ov_outputs(path: Path, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:
    compiled = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.concatenate([compiled(f["x"])[0] for f in feeds])


def test_accuracy_control_meets_the_threshold_with_the_sweeps_metric(tmp_path: Path) -> None:
    model = convnet(tmp_path / "net.onnx")
    feeds = samples()
    ref = ov_outputs(model, feeds)

    def retention(outs: list[list[np.ndarray]], idx: list[int]) -> tuple[float, list[float]]:
        got = np.concatenate([o[0] for o in outs])
        pairs = zip(ref[idx], got, strict=True)
        cos = [float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in pairs]
        return float(np.mean(cos)), cos

    cand = nncf_accuracy_control(model, tmp_path / "ac" / "net.xml", samples=feeds, retention=retention,
                                 min_retention=0.999, shapes={"x": [1, 3, 8, 8]},
                                 settings=NncfAccuracyControl(max_num_iterations=4))
    assert cand.path.is_file() and cand.path.with_suffix(".bin").is_file()
    assert cand.seconds > 0 and cand.fake_quantize_ops >= 0
    got, _ = retention([[o[None]] for o in ov_outputs(cand.path, feeds)], list(range(len(feeds))))
    assert got >= 0.999, (got, cand)
    import nncf

    plain = nncf.quantize(ov.Core().read_model(str(model)), nncf.Dataset([f["x"] for f in feeds]),
                          subset_size=len(feeds))
    ov.save_model(plain, str(tmp_path / "plain.xml"))
    naive, _ = retention([[o[None]] for o in ov_outputs(tmp_path / "plain.xml", feeds)], list(range(len(feeds))))
    assert naive < 0.999, f"plain NNCF INT8 already meets the threshold ({naive}): the test proves nothing"


def test_accuracy_control_rejects_bad_input(tmp_path: Path) -> None:
    model = convnet(tmp_path / "net.onnx")
    with pytest.raises(InputError, match="needs calibration samples"):
        nncf_accuracy_control(model, tmp_path / "x.xml", samples=[], retention=lambda o, i: (1.0, None),
                              min_retention=0.99)
    with pytest.raises(InputError, match="min_retention 1.5"):
        nncf_accuracy_control(model, tmp_path / "x.xml", samples=samples(2), retention=lambda o, i: (1.0, None),
                              min_retention=1.5)


def test_float_set_runs_on_openvino(tmp_path: Path) -> None:
    model = convnet(tmp_path / "net.onnx")
    x = np.concatenate([f["x"] for f in samples(8)])
    qdq_path = quantize(model, tmp_path / "q.onnx", x)
    qdq, base = onnx.load(str(qdq_path)), onnx.load(str(model))
    nodes = quantized_nodes(qdq, ["Conv", "MatMul", "Gemm"])
    out = write_float_set(qdq, base, nodes[:1], tmp_path / "mixed.onnx")
    assert nodes[0] not in quantized_nodes(onnx.load(str(out)), ["Conv", "MatMul", "Gemm"])
    feeds = samples(4)
    got = ov_outputs(out, feeds)  # OpenVINO runs the mixed QDQ model as ORT does, up to INT8 rounding
    want = np.concatenate([run_model(out, f)[0] for f in feeds])
    np.testing.assert_allclose(got, want, atol=0.05 * float(np.abs(want).max()))
