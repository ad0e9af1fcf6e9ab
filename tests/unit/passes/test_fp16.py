"""FP16: FP16 weights, FP32 inputs/outputs kept, a valid (sorted) graph, outputs close to FP32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from edgeopt.enums import Precision
from edgeopt.passes.base import PassError
from edgeopt.passes.fp16 import Fp16Config, Fp16Pass

from .builders import artifact, context, run_model


def test_fp16_keeps_float_io_and_halves_the_file(tmp_path: Path, tiny_cnn: Path) -> None:
    out = Fp16Pass(Fp16Config()).run(artifact(tiny_cnn), context(tmp_path))
    model = onnx.load(str(out.path))
    assert model.graph.input[0].type.tensor_type.elem_type == TensorProto.FLOAT
    assert {t.data_type for t in model.graph.initializer if len(t.dims) > 1} == {TensorProto.FLOAT16}
    def weight_bytes(m: onnx.ModelProto) -> int:
        return sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer)

    assert weight_bytes(model) <= 0.5 * weight_bytes(onnx.load(str(tiny_cnn))) + 64
    x = np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)
    ref, got = run_model(tiny_cnn, {"input": x})[0], run_model(out.path, {"input": x})[0]
    np.testing.assert_allclose(got, ref, rtol=2e-2, atol=2e-2 * float(np.abs(ref).max()))


def test_fp16_refuses_a_quantized_input(tmp_path: Path, tiny_cnn: Path) -> None:
    with pytest.raises(PassError, match="takes an fp32 model"):
        Fp16Pass(Fp16Config()).run(artifact(tiny_cnn, Precision.INT8), context(tmp_path))
