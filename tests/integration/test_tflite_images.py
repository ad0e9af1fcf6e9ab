"""TFLite conversion of a 3-channel image model: onnx2tf's own output check wants sample images for such inputs
(it downloads MS-COCO crops by default); the driver must serve them without any download, with or without --calib.

Slow group (needs the TFLite tool env: ``edgeopt tools install tflite``, ~5 min and 2.6 GB)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt.calib import DataSource
from edgeopt.enums import Precision
from edgeopt.passes.base import Artifact, ArtifactFormat, PassContext
from edgeopt.passes.registry import load_pass_registry
from edgeopt.passes.validate import validate_artifact
from edgeopt.targets import load_registry
from tests.unit.passes.builders import save

pytestmark = pytest.mark.slow


def rgb_cnn(path: Path) -> Path:
    """x[1, 3, 32, 32] -> conv 3x3 (8) -> relu -> global pool -> flatten -> gemm (4)."""
    rng = np.random.default_rng(0)
    inits = {"w": (rng.standard_normal((8, 3, 3, 3)) / 5).astype(np.float32), "b": np.zeros(8, np.float32),
             "g": (rng.standard_normal((4, 8)) / 3).astype(np.float32), "gb": np.zeros(4, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]), helper.make_node("Gemm", ["f", "g", "gb"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "rgb", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save(model, path)


@pytest.mark.parametrize(("quantization", "with_calib"), [("fp32", False), ("fp32", True), ("full_int8", True)])
def test_rgb_model_converts_without_downloads(tmp_path: Path, quantization: str, with_calib: bool) -> None:
    cls = load_pass_registry().get_class("to_tflite")
    if cls.availability():
        pytest.skip(str(cls.availability()))
    model = rgb_cnn(tmp_path / "rgb.onnx")
    calib = None
    if with_calib:
        calib = tmp_path / "calib.npz"
        np.savez(calib, x=np.random.default_rng(1).random((16, 1, 3, 32, 32), dtype=np.float32))
    target = load_registry().get("rpi5")
    pass_ = cls(cls.parse_config({"quantization": quantization, "io_dtype": "float32"})).for_target(target)
    work = tmp_path / "work"
    work.mkdir()
    ctx = PassContext(work_dir=work, output_path=tmp_path / "rgb.tflite", target=target,
                      calibration=DataSource(calib), input_shapes={})
    source = Artifact.from_file(model, name="input", format=ArtifactFormat.ONNX, precision=Precision.FP32)
    art = pass_.apply(source, ctx, name="converted")
    assert art.format is ArtifactFormat.TFLITE and art.report["quantization"] == quantization
    samples = [{"x": np.random.default_rng(2).random((1, 3, 32, 32), dtype=np.float32)} for _ in range(8)]
    check = validate_artifact(art, model, samples)
    assert check.runtime is not None and check.passed is True, check  # run by ai-edge-litert here
