"""``fp16``: weights and compute to FP16 (onnxconverter-common's algorithm, as shipped in onnxruntime), keeping
FP32 inputs and outputs by default so callers feed the same arrays.

Ops without good FP16 kernels (and ops that are numerically unsafe in FP16) stay FP32 through the block list;
Casts are inserted at the boundaries. FP16 pays off on GPUs and Arm cores with FP16 arithmetic; on an x86 CPU
onnxruntime runs most FP16 ops slower than FP32, so use it there only to halve the file.
"""

from __future__ import annotations

from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from .base import Artifact, Pass, PassConfig, PassContext, PassError, PassOutput
from .graph_edit import topological_sort
from .onnx_io import check, load, save


class Fp16Advanced(PassConfig):
    min_positive_val: float = Field(default=5.96e-08, gt=0, description="Smaller magnitudes are clamped to this.")
    max_finite_val: float = Field(default=65504.0, gt=0, description="Larger magnitudes are clamped to this.")
    disable_shape_infer: bool = Field(default=False, description="Skip shape inference (for models it fails on).")


class Fp16Config(PassConfig):
    keep_io_types: bool = Field(default=True, description="Keep FP32 model inputs and outputs (Casts inside).")
    op_block_list: list[str] | None = Field(
        default=None, description="Op types kept in FP32; None: onnxruntime's default list (Range, TopK, Resize...)."
    )
    node_block_list: list[str] = Field(default_factory=list, description="Node names kept in FP32.")
    advanced: Fp16Advanced = Field(default_factory=Fp16Advanced, description="Rarely changed options.")


class Fp16Pass(Pass[Fp16Config]):
    name = "fp16"
    summary = "weights and compute to FP16, FP32 inputs/outputs kept by default"
    config_class = Fp16Config

    def output_precision(self, input_precision: Precision) -> Precision:
        return Precision.FP16

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from onnxruntime.transformers.float16 import convert_float_to_float16

        cfg = self.config
        if source.precision is not Precision.FP32:
            raise PassError(
                f"fp16 takes an fp32 model but {source.name} is {source.precision.value}; put fp16 "
                "before any quantization pass in the recipe"
            )
        model = load(source)
        try:
            converted = convert_float_to_float16(
                model,
                min_positive_val=cfg.advanced.min_positive_val,
                max_finite_val=cfg.advanced.max_finite_val,
                keep_io_types=cfg.keep_io_types,
                disable_shape_infer=cfg.advanced.disable_shape_infer,
                op_block_list=cfg.op_block_list,
                node_block_list=cfg.node_block_list or None,
            )
        except Exception as exc:  # the converter raises ValueError/RuntimeError/shape-inference errors
            first = first_line(exc, limit=None)
            raise PassError(
                f"fp16 conversion of {source.path.rsplit('/', 1)[-1]} failed ({first}); try "
                "advanced.disable_shape_infer: true or add the failing op to op_block_list"
            ) from exc
        topological_sort(converted.graph)
        save(converted, ctx.output_path)
        check(ctx.output_path, self.name)
        casts = sum(1 for n in converted.graph.node if n.op_type == "Cast")
        return PassOutput(
            path=ctx.output_path,
            precision=Precision.FP16,
            report={"cast_nodes": casts, "keep_io_types": cfg.keep_io_types},
        )
