"""Contract: every registered converter makes an artifact its runtime loads and that matches the ONNX reference
(or, for formats with no runtime here, a structurally valid one). Skips name the missing extra or tool env."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from edgeopt.enums import Precision
from edgeopt.passes.base import Artifact, ArtifactFormat, PassContext
from edgeopt.passes.convert import CONVERTERS
from edgeopt.passes.registry import load_pass_registry
from edgeopt.passes.validate import validate_artifact
from edgeopt.registry import runtime_loads
from edgeopt.targets import load_registry

from ..unit.passes.convert.helpers import tiny_cnn_onnx

TARGET = {ArtifactFormat.OPENVINO_IR: "intel-nuc", ArtifactFormat.TFLITE: "rpi5",
          ArtifactFormat.COREML: "mac-m-series", ArtifactFormat.TENSORRT_ONNX: "jetson-orin-nano"}


def _target_name(fmt: ArtifactFormat) -> str:
    """The target a converter is checked for: named above, else the first target one of whose runtimes loads it
    (so a new format's converter runs here without an edit)."""
    if fmt in TARGET:
        return TARGET[fmt]
    targets = load_registry().all()
    return next((t.name for t in targets if any(runtime_loads(r, fmt) for r in t.runtimes)), "local")


class _Calib:
    is_random = False

    def samples(self, model_path: Path, limit: int | None = None) -> list[dict[str, np.ndarray]]:
        rng = np.random.default_rng(0)
        return [{"x": rng.standard_normal((1, 1, 8, 8)).astype(np.float32)} for _ in range(limit or 8)]


def _params() -> list[object]:
    marks = {ArtifactFormat.TFLITE: [pytest.mark.slow]}  # the tool env install is ~5 min and 2.6 GB
    return [pytest.param(fmt, id=fmt.value, marks=marks.get(fmt, [])) for fmt in CONVERTERS]


@pytest.mark.parametrize("fmt", _params())
def test_converter_output_loads_and_matches(fmt: ArtifactFormat, tmp_path: Path) -> None:
    registry = load_pass_registry()
    cls = registry.get_class(CONVERTERS[fmt])
    reason = cls.availability()
    if reason:
        pytest.skip(reason)
    target = load_registry().get(_target_name(fmt))
    pass_ = cls(cls.parse_config({})).for_target(target)
    onnx_path = tiny_cnn_onnx(tmp_path / "cnn.onnx")
    if fmt is ArtifactFormat.COREML:
        source = Artifact(name="input", path="torch.nn:Identity", format=ArtifactFormat.PYTORCH,
                          precision=Precision.FP32, sha256="0" * 64, size_bytes=0)
    else:
        source = Artifact.from_file(onnx_path, name="input", format=ArtifactFormat.ONNX, precision=Precision.FP32)
    ctx = PassContext(work_dir=tmp_path, output_path=tmp_path / f"out{pass_.suffix}", target=target,  # type: ignore[attr-defined]
                      calibration=_Calib(), input_shapes={"input": [1, 4]})
    ctx = dataclasses.replace(ctx)
    art = pass_.apply(source, ctx, name="converted")
    assert art.format is fmt and art.size_bytes > 0 and len(art.sha256) == 64
    if fmt is ArtifactFormat.COREML:
        assert art.report["spec_type"] == "mlProgram" and art.report["weight_files"] is not None
        return
    check = validate_artifact(art, onnx_path, _Calib().samples(onnx_path, 8))
    assert check.runtime is not None and check.passed is True, check
