"""INT4 weight-only: every Gemm becomes MatMulNBits, the weights shrink below 0.35x."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pydantic
import pytest

from edgeopt.enums import Precision
from edgeopt.passes.quantize_int4 import QuantizeInt4Config, QuantizeInt4Pass
from edgeopt.targets import load_registry

from .builders import artifact, context, mlp_model, op_types, run_model


def test_gemm_layers_are_quantized_not_skipped(tmp_path: Path) -> None:
    src = mlp_model(tmp_path / "mlp.onnx")
    out = QuantizeInt4Pass(QuantizeInt4Config()).run(artifact(src), context(tmp_path))
    assert op_types(out.path).count("MatMulNBits") == 2 and "Gemm" not in op_types(out.path)
    assert out.report["matmuls_quantized"] == 2 and out.report["gemm_rewritten"] == 2
    assert out.report["weight_size_ratio"] <= 0.35
    assert out.precision is Precision.INT4
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    ref, got = run_model(src, {"x": x})[0], run_model(out.path, {"x": x})[0]
    cos = float((ref.ravel() @ got.ravel()) / (np.linalg.norm(ref) * np.linalg.norm(got)))
    assert cos > 0.98


def test_without_gemm_rewrite_the_stock_quantizer_skips_them(tmp_path: Path) -> None:
    src = mlp_model(tmp_path / "mlp.onnx")
    out = QuantizeInt4Pass(QuantizeInt4Config(rewrite_gemm=False)).run(artifact(src), context(tmp_path))
    assert out.report["matmuls_quantized"] == 0 and out.warnings


def test_block_size_must_be_a_power_of_two() -> None:
    with pytest.raises(pydantic.ValidationError, match="power of two"):
        QuantizeInt4Config(block_size=48)


def test_target_check_refuses_coral_and_accepts_fp32_onnxruntime_targets() -> None:
    registry = load_registry()
    int4 = QuantizeInt4Pass(QuantizeInt4Config())
    problem = int4.target_problem(registry.get("coral-usb"), Precision.FP32)
    assert problem is not None and "int8" in problem
    assert int4.target_problem(registry.get("rpi5"), Precision.FP32) is None
