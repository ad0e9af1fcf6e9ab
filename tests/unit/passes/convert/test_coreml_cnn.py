"""``to_coreml`` on a real CNN (the SmallCNN factory): an mlProgram .mlpackage for ``mac-m-series`` whose spec
has the CNN's input, its conv layers and FP16 weights. Core ML predicts only on macOS, so the spec is what is
checked here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from edgeopt.enums import Precision
from edgeopt.passes.base import ArtifactFormat
from edgeopt.passes.registry import load_pass_registry
from edgeopt.targets import load_registry

from ..builders import Recorder, context

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("coremltools") is None or importlib.util.find_spec("torch") is None,
    reason="to_coreml needs coremltools and torch: pip install 'edgeopt[coreml,torch]'",
)


def _convert(tmp_path: Path, cfg: dict[str, object], name: str) -> tuple[object, Path]:
    """``small_cnn`` through ``to_coreml`` for ``mac-m-series`` with ``cfg``: (artifact, its weight.bin)."""
    from edgeopt.passes.torch_io import torch_artifact

    from ..torch.models import SPEC

    cls = load_pass_registry().get_class("to_coreml")
    pass_ = cls(cls.parse_config(cfg)).for_target(load_registry().get("mac-m-series"))
    (tmp_path / name).mkdir()
    ctx = context(tmp_path / name, name=f"{name}.mlpackage", target="mac-m-series", input_shapes={"x": [1, 1, 8, 8]},
                  reporter=Recorder())
    art = pass_.apply(torch_artifact(f"{SPEC}:small_cnn"), ctx, name=f"convert-{name}")
    return art, Path(art.path) / "Data" / "com.apple.CoreML" / "weights" / "weight.bin"


@pytest.fixture(scope="module")
def fp16(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """The plain (FP16) conversion, once per module: checked below and the baseline of every compression."""
    return _convert(tmp_path_factory.mktemp("coreml-fp16"), {}, "fp16")


def test_small_cnn_factory_converts_to_an_fp16_mlprogram(fp16: tuple[object, Path]) -> None:
    import coremltools as ct

    from ..torch.models import SmallCNN

    art, weights = fp16
    assert art.format is ArtifactFormat.COREML and art.precision is Precision.FP16
    assert art.report["spec_type"] == "mlProgram" and art.report["inputs"] == ["x"]
    spec = ct.utils.load_spec(art.path)
    arr = spec.description.input[0].type.multiArrayType
    assert list(arr.shape) == [1, 1, 8, 8]
    ops = [op.type for fn in spec.mlProgram.functions.values()
           for block in fn.block_specializations.values() for op in block.operations]
    assert ops.count("conv") == 3 and ops.count("linear") == 1 and "max_pool" in ops
    assert "batch_norm" not in ops  # folded into the convs for inference
    # FP16 weights: about 2 bytes per parameter (BatchNorm folded away), not 4.
    params = sum(p.numel() for name, p in SmallCNN().named_parameters() if ".1." not in name and ".4." not in name
                 and ".8." not in name)
    assert 2 * params <= weights.stat().st_size < 2.3 * params


@pytest.mark.parametrize(("compression", "constexpr", "precision", "max_ratio"), [
    ("int8_linear", "constexpr_affine_dequantize", Precision.INT8, 0.6),
    ("int4_block", "constexpr_blockwise_shift_scale", Precision.INT4, 0.5),  # + an fp16 scale per 32 weights
    ("palettize_4bit", "constexpr_lut_to_dense", Precision.INT4, 0.4),
])
def test_weight_compression_shrinks_the_package(tmp_path: Path, fp16: tuple[object, Path], compression: str,
                                                constexpr: str, precision: Precision, max_ratio: float) -> None:
    """coremltools.optimize weight compression: the large weights become constexpr ops and weight.bin shrinks."""
    import coremltools as ct

    _, fp16_bin = fp16
    art, bin_path = _convert(tmp_path, {"compression": compression}, compression)
    assert art.precision is precision and art.report["compression"] == compression
    spec = ct.utils.load_spec(art.path)
    ops = [op.type for fn in spec.mlProgram.functions.values()
           for block in fn.block_specializations.values() for op in block.operations]
    assert constexpr in ops, ops
    assert ops.count("conv") == 3, "the network itself is unchanged"
    assert bin_path.stat().st_size < max_ratio * fp16_bin.stat().st_size
