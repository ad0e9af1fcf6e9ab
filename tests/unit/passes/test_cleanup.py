"""cleanup: Paddle-style Constant weights become initializers, opset upgrade, stale value_info, folding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from edgeopt.passes.cleanup import CleanupConfig, CleanupPass

from .builders import artifact, context, op_types, paddle_style_model, run_model


def test_cleanup_fixes_a_paddle_style_export(tmp_path: Path) -> None:
    src = paddle_style_model(tmp_path / "paddle.onnx", opset=11)
    out = CleanupPass(CleanupConfig(min_opset=17)).run(artifact(src), context(tmp_path))
    model = onnx.load(str(out.path))
    assert "Constant" not in op_types(out.path)
    assert "BatchNormalization" not in op_types(out.path)  # folded into the Conv by ORT basic optimization
    assert next(o.version for o in model.opset_import if o.domain == "") == 17
    assert all(v.name != "c" or len(v.type.tensor_type.shape.dim) == 4 for v in model.graph.value_info)
    assert out.report["constants_to_initializers"] == 6 and out.report["value_info_cleared"] == 1
    assert out.report["opset_before"] == 11 and out.report["opset_after"] == 17
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(run_model(out.path, {"x": x})[0], run_model(src, {"x": x})[0], rtol=1e-4, atol=1e-5)


def test_cleanup_options_can_be_turned_off(tmp_path: Path) -> None:
    src = paddle_style_model(tmp_path / "paddle.onnx", opset=13)
    cfg = CleanupConfig.model_validate({"constants_to_initializers": False, "fold_constants": False})
    out = CleanupPass(cfg).run(artifact(src), context(tmp_path))
    assert op_types(out.path).count("Constant") == 6
    assert "BatchNormalization" in op_types(out.path)
    assert out.report["opset_after"] == 13
