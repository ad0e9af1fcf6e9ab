"""Magnitude pruning: real sparsity per layer and overall, and a smaller compressed file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from edgeopt.passes.prune_magnitude import PruneMagnitudeConfig, PruneMagnitudePass

from .builders import artifact, context, mlp_model


def test_per_layer_sparsity_is_reached_and_compresses(tmp_path: Path) -> None:
    src = mlp_model(tmp_path / "mlp.onnx")
    out = PruneMagnitudePass(PruneMagnitudeConfig(sparsity_ratio=0.5, min_weight_elements=1)).run(
        artifact(src), context(tmp_path))
    layers = out.report["per_layer"]
    assert {layer["weight"] for layer in layers} == {"w1", "w2"}
    assert all(abs(layer["sparsity_after"] - 0.5) < 0.01 for layer in layers)
    assert out.report["gzip_bytes_after"] < 0.85 * out.report["gzip_bytes_before"]
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(out.path)).graph.initializer}
    original = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(src)).graph.initializer}
    kept = weights["w1"] != 0
    assert np.abs(original["w1"][kept]).min() >= np.abs(original["w1"][~kept]).max()  # the smallest ones went
    np.testing.assert_array_equal(weights["b1"], original["b1"])  # biases untouched


def test_small_and_depthwise_weights_stay_dense(tmp_path: Path, tiny_cnn: Path) -> None:
    cfg = PruneMagnitudeConfig(sparsity_ratio=0.3, min_weight_elements=100)
    out = PruneMagnitudePass(cfg).run(artifact(tiny_cnn), context(tmp_path))
    assert {layer["node"] for layer in out.report["per_layer"]} == {"stem", "b1.pw", "fc"}  # b0.pw: 64 weights
    cfg = PruneMagnitudeConfig(sparsity_ratio=0.3, min_weight_elements=64)
    out = PruneMagnitudePass(cfg).run(artifact(tiny_cnn), context(tmp_path))
    assert {layer["node"] for layer in out.report["per_layer"]} == {"stem", "b0.pw", "b1.pw", "fc"}  # no .dw
    cfg = PruneMagnitudeConfig.model_validate(
        {"sparsity_ratio": 0.3, "min_weight_elements": 64, "advanced": {"skip_depthwise": False}})
    out = PruneMagnitudePass(cfg).run(artifact(tiny_cnn), context(tmp_path))
    assert {"b0.dw", "b1.dw"} <= {layer["node"] for layer in out.report["per_layer"]}


def test_global_scope_uses_one_threshold(tmp_path: Path) -> None:
    src = mlp_model(tmp_path / "mlp.onnx")
    out = PruneMagnitudePass(PruneMagnitudeConfig.model_validate(
        {"sparsity_ratio": 0.6, "scope": "global", "min_weight_elements": 1})).run(artifact(src), context(tmp_path))
    assert abs(out.report["sparsity_pruned_layers"] - 0.6) < 0.01
