"""Conversion passes through edgeopt.optimize: each target family gets its formats, each artifact validated."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import onnx
import pytest

from edgeopt.errors import InputError
from edgeopt.optimize import optimize
from edgeopt.passes.base import ArtifactFormat
from edgeopt.passes.convert import default_formats
from edgeopt.passes.tensorrt_prepare import check_tensorrt
from edgeopt.passes.to_tflite import parse_edgetpu_log
from edgeopt.passes.validate import compare, validate_artifact
from edgeopt.targets import load_registry

from .helpers import tiny_cnn_onnx

needs_openvino = pytest.mark.skipif(importlib.util.find_spec("openvino") is None, reason="openvino not installed")


@pytest.fixture(scope="module")
def cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cnn_onnx(tmp_path_factory.mktemp("cnn") / "cnn.onnx")


def test_default_formats_per_target_family() -> None:
    reg = load_registry()
    assert default_formats(reg.get("intel-nuc")) == [ArtifactFormat.ONNX, ArtifactFormat.OPENVINO_IR]
    assert ArtifactFormat.TENSORRT_ONNX in default_formats(reg.get("jetson-orin-nano"))
    assert default_formats(reg.get("coral-usb")) == [ArtifactFormat.TFLITE]
    assert ArtifactFormat.TFLITE in default_formats(reg.get("rpi5"))
    assert ArtifactFormat.COREML in default_formats(reg.get("mac-m-series"))


@needs_openvino
@pytest.mark.parametrize("recipe", ["fp16", "int8"])
def test_intel_nuc_gets_validated_ir(cnn: Path, tmp_path: Path, recipe: str) -> None:
    result = optimize(cnn, target="intel-nuc", recipe=recipe, out_dir=tmp_path, bench=False, fidelity=False)
    ir = result.artifacts[-1]
    assert ir.format is ArtifactFormat.OPENVINO_IR and Path(ir.path).with_suffix(".bin").is_file()
    check = ir.report["validation"]
    assert check["runtime"] == "openvino" and check["passed"] is True and check["cosine_similarity"] > 0.99
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["formats"] == ["onnx", "openvino_ir"]
    assert manifest["artifacts"][-1]["report"]["validation"]["max_abs_error"] < 0.1


def test_jetson_gets_tensorrt_onnx(cnn: Path, tmp_path: Path) -> None:
    result = optimize(cnn, target="jetson-orin-nano", recipe="fp16", out_dir=tmp_path, bench=False, fidelity=False)
    trt = result.artifacts[-1]
    assert trt.format is ArtifactFormat.TENSORRT_ONNX
    assert trt.report["builder_flag"] == "fp16" and trt.report["unsupported"] == []
    assert trt.report["validation"]["passed"] is True


def test_tensorrt_op_table_flags_unsupported_ops_and_opset(cnn: Path) -> None:
    model = onnx.load(str(cnn))
    assert check_tensorrt(model, "10") == []
    model.graph.node[0].op_type = "StringNormalizer"
    model.opset_import[0].version = 21
    problems = check_tensorrt(model, "8.5")
    assert any("opset 21" in p for p in problems) and any("StringNormalizer" in p for p in problems)


def test_explicit_format_the_target_cannot_run_is_refused(cnn: Path, tmp_path: Path) -> None:
    recipe = {"name": "x", "description": "tflite for a nuc", "formats": ["tflite"],
              "passes": [{"pass": "cleanup"}]}
    from edgeopt.passes.registry import load_pass_registry
    from edgeopt.recipes import build_recipe

    with pytest.raises(InputError, match="cannot load tflite"):
        optimize(cnn, target="intel-nuc", recipe=build_recipe(recipe, load_pass_registry()), out_dir=tmp_path,
                 bench=False, fidelity=False)


@needs_openvino
def test_diverging_conversion_fails_loudly(cnn: Path, tmp_path: Path) -> None:
    from edgeopt.enums import Precision
    from edgeopt.passes.base import Artifact, PassError

    broken = onnx.load(str(cnn))
    weight = next(t for t in broken.graph.initializer if len(t.dims) == 4)
    arr = onnx.numpy_helper.to_array(weight) * -3.0
    weight.CopyFrom(onnx.numpy_helper.from_array(arr, weight.name))
    onnx.save(broken, str(tmp_path / "broken.onnx"))
    art = Artifact.from_file(tmp_path / "broken.onnx", name="b", format=ArtifactFormat.ONNX, precision=Precision.FP32)
    feeds = [{"x": np.random.default_rng(i).standard_normal((1, 1, 8, 8)).astype(np.float32)} for i in range(8)]
    with pytest.raises(PassError, match="diverges"):
        validate_artifact(art, cnn, feeds)


def test_compare_transposes_nhwc_outputs() -> None:
    ref = [[np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)]]
    got = [[ref[0][0].transpose(0, 2, 3, 1)]]
    values = compare(ref, got)
    assert values["max_abs_error"] == 0 and "NHWC" in values["note"]


def test_parse_edgetpu_log() -> None:
    log = """Operator                       Count      Status

CONV_2D                        4          Mapped to Edge TPU
MEAN                           1          Operation is otherwise supported, but not mapped
FULLY_CONNECTED                1          Mapped to Edge TPU
"""
    assert parse_edgetpu_log(log) == {"edgetpu_ops": 5, "cpu_ops": 1, "edgetpu_fraction": 0.8333}


@pytest.mark.skipif(importlib.util.find_spec("nncf") is None or importlib.util.find_spec("openvino") is None,
                    reason="the int8-nncf recipe needs NNCF and OpenVINO: pip install 'edgeopt[openvino,nncf]'")
def test_int8_nncf_recipe_gives_validated_int8_ir(cnn: Path, tmp_path: Path) -> None:
    calib = tmp_path / "calib.npz"
    shape = [d.dim_value or 1 for d in onnx.load(str(cnn)).graph.input[0].type.tensor_type.shape.dim]
    np.savez(calib, x=np.random.default_rng(0).random((32, *shape), dtype=np.float32))
    result = optimize(cnn, target="intel-nuc", recipe="int8-nncf", calib=calib, out_dir=tmp_path / "out",
                      bench=False, fidelity=False)
    assert [a.format for a in result.artifacts] == [ArtifactFormat.ONNX, ArtifactFormat.OPENVINO_IR]
    ir = result.artifacts[-1]
    assert ir.precision.value == "int8" and ir.report["int8"] == "nncf"
    assert ir.report["fake_quantize_ops"] >= 2, "NNCF inserts FakeQuantize before the convs"
    check = ir.report["validation"]
    assert check["runtime"] == "openvino" and check["passed"] is True and check["cosine_similarity"] > 0.98
