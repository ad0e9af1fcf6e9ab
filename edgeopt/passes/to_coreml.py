"""``to_coreml``: PyTorch -> Core ML ``.mlpackage`` (mlprogram) with coremltools (``[coreml]`` extra).

coremltools dropped its ONNX frontend, so this pass takes the PyTorch input (a factory, TorchScript or .pt2),
traces it and converts it with FP16 compute by default; ``compression`` applies ``coremltools.optimize.coreml``
weight compression (INT8 linear, INT4 block-wise, 4-bit k-means palettization). Core ML predicts only on macOS:
on Linux the pass validates the package structure and its spec (an mlProgram with the expected inputs); the
numbers come from a benchmark through the agent on a macOS host.
"""

from __future__ import annotations

import importlib.util
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from .base import Artifact, ArtifactFormat, PassConfig, PassContext, PassError, PassOutput
from .convert_base import ConvertPass


class CoremlCompression(str, Enum):
    NONE = "none"
    INT8_LINEAR = "int8_linear"  # per-channel symmetric INT8 weights
    INT4_BLOCK = "int4_block"  # INT4 weights, block-wise scales (iOS 18 / macOS 15)
    PALETTIZE_4BIT = "palettize_4bit"  # 16-entry k-means lookup table per tensor


class ToCoremlConfig(PassConfig):
    fp16: bool = Field(default=True, description="FP16 compute (Core ML's default; the Neural Engine runs FP16).")
    compression: CoremlCompression = Field(default=CoremlCompression.NONE, description="Weight compression.")
    block_size: int = Field(default=32, ge=8, description="Block size of int4_block, in weights.")


class ToCoremlPass(ConvertPass):
    name = "to_coreml"
    summary = "PyTorch -> Core ML .mlpackage (mlprogram, FP16; INT8/INT4/palettized weights)"
    config_class = ToCoremlConfig
    input_formats = frozenset({ArtifactFormat.PYTORCH})
    output_format = ArtifactFormat.COREML
    suffix = ".mlpackage"

    @classmethod
    def availability(cls) -> str | None:
        for mod in ("coremltools", "torch"):
            if importlib.util.find_spec(mod) is None:
                return f"to_coreml needs {mod}: pip install 'edgeopt[coreml,torch]'"
        return None

    def output_precision(self, input_precision: Precision) -> Precision:
        if self.config.compression in (CoremlCompression.INT8_LINEAR,):
            return Precision.INT8
        if self.config.compression in (CoremlCompression.INT4_BLOCK, CoremlCompression.PALETTIZE_4BIT):
            return Precision.INT4
        return Precision.FP16 if self.config.fp16 else Precision.FP32

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        import coremltools as ct
        import torch

        from .torch_io import load_torch_model

        cfg: ToCoremlConfig = self.config
        loaded = load_torch_model(source.path, ctx.input_shapes)
        example = loaded.example_inputs(seed=ctx.seed)
        target = ct.target.iOS18 if cfg.compression is CoremlCompression.INT4_BLOCK else ct.target.iOS16
        try:
            with torch.no_grad():
                traced = torch.jit.trace(loaded.module.eval(), example)
            model = ct.convert(
                traced,
                inputs=[
                    ct.TensorType(name=i.name, shape=tuple(x.shape))
                    for i, x in zip(loaded.inputs, example, strict=True)
                ],
                convert_to="mlprogram",
                compute_precision=ct.precision.FLOAT16 if cfg.fp16 else ct.precision.FLOAT32,
                minimum_deployment_target=target,
            )
            model = _compress(model, cfg)
        except PassError:
            raise
        except Exception as exc:  # coremltools raises ValueError/NotImplementedError/RuntimeError per op
            first = first_line(exc)
            raise PassError(f"Core ML conversion of {source.path} failed ({first}); an op may be unsupported by "
                            "coremltools: deliver ONNX for onnxruntime's CoreML EP instead") from exc
        out = ctx.output_path.with_suffix(".mlpackage")
        model.save(str(out))
        report = {"coremltools_version": ct.__version__, "compression": cfg.compression.value, **check_package(out)}
        return PassOutput(path=out, precision=self.output_precision(source.precision), format=ArtifactFormat.COREML,
                          report=report)


def _compress(model: Any, cfg: ToCoremlConfig) -> Any:
    if cfg.compression is CoremlCompression.NONE:
        return model
    import coremltools.optimize.coreml as cto

    if cfg.compression is CoremlCompression.INT8_LINEAR:
        op = cto.OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int8", granularity="per_channel")
        return cto.linear_quantize_weights(model, cto.OptimizationConfig(global_config=op))
    if cfg.compression is CoremlCompression.INT4_BLOCK:
        op = cto.OpLinearQuantizerConfig(mode="linear_symmetric", dtype="int4", granularity="per_block",
                                         block_size=cfg.block_size)
        return cto.linear_quantize_weights(model, cto.OptimizationConfig(global_config=op))
    pal = cto.OpPalettizerConfig(mode="kmeans", nbits=4)
    return cto.palettize_weights(model, cto.OptimizationConfig(global_config=pal))


def check_package(path: Path) -> dict[str, object]:
    """Validate an .mlpackage without Core ML (Linux): Manifest.json, the model spec and its weights.

    Raises:
        PassError: a missing part, or a spec that is not an mlProgram.
    """
    import coremltools as ct

    manifest = path / "Manifest.json"
    spec_file = path / "Data" / "com.apple.CoreML" / "model.mlmodel"
    for part in (manifest, spec_file):
        if not part.is_file():
            raise PassError(f"{path} is not a valid .mlpackage: {part.relative_to(path)} is missing")
    spec = ct.utils.load_spec(str(path))
    kind = spec.WhichOneof("Type")
    if kind != "mlProgram":
        raise PassError(f"{path}: spec type {kind}, expected mlProgram")
    weights = sorted(p.name for p in (path / "Data" / "com.apple.CoreML").rglob("*.bin"))
    return {
        "spec_version": int(spec.specificationVersion),
        "spec_type": kind,
        "inputs": [i.name for i in spec.description.input],
        "outputs": [o.name for o in spec.description.output],
        "weight_files": weights,
        "validated": "structure and spec only (Core ML predicts on macOS)",
    }
