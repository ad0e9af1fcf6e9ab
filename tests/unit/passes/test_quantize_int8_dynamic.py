"""Dynamic INT8: Gemm layers get quantized; a conv net gets a loud warning."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from edgeopt.passes.quantize_int8_dynamic import QuantizeInt8DynamicConfig, QuantizeInt8DynamicPass

from .builders import Recorder, artifact, context, mlp_model, run_model


def test_mlp_gemms_are_rewritten_and_quantized(tmp_path: Path) -> None:
    src = mlp_model(tmp_path / "mlp.onnx")
    rec = Recorder()
    out = QuantizeInt8DynamicPass(QuantizeInt8DynamicConfig()).run(artifact(src), context(tmp_path, reporter=rec))
    assert out.report["gemm_rewritten"] == 2 and out.report["integer_ops"] >= 2
    assert not rec.warnings
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    ref, got = run_model(src, {"x": x})[0], run_model(out.path, {"x": x})[0]
    assert np.abs(ref - got).max() < 0.1 * np.abs(ref).max()


def test_conv_net_warns_loudly(tmp_path: Path, tiny_cnn: Path) -> None:
    rec = Recorder()
    out = QuantizeInt8DynamicPass(QuantizeInt8DynamicConfig()).run(artifact(tiny_cnn), context(tmp_path, reporter=rec))
    assert any("DYNAMIC INT8 ON A CONV NET" in w and "--recipe int8" in w for w in rec.warnings)
    assert out.warnings == rec.warnings
