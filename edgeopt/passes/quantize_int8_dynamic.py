"""``quantize_int8_dynamic``: INT8 weights, activations quantized on the fly (onnxruntime ``quantize_dynamic``).

For transformer and RNN models (MatMul, Attention, LSTM, GRU). Not for conv nets: dynamic INT8 convolutions
(ConvInteger) ran 4-10x *slower* than FP32 on CNNs on this project's AVX2 machine, so Conv is left out of the
default op types and a conv net gets a loud warning pointing at the static ``int8`` recipe.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from ..targets.schema import Target
from .base import Artifact, Pass, PassConfig, PassContext, PassError, PassOutput
from .graph_edit import gemm_to_matmul
from .int8_target import QuantTypeName, int8_defaults
from .onnx_io import SINGLE_FILE_LIMIT_BYTES, check, load, save
from .quiet import quiet_ort

CONV_NET_WARNING = (
    "DYNAMIC INT8 ON A CONV NET: {convs} Conv nodes carry this model; dynamic INT8 convolutions ran 4-10x slower "
    "than FP32 on CNNs here, so {what}. Use the static recipe instead: --recipe int8 with --calib DATA"
)


class QuantizeInt8DynamicConfig(PassConfig):
    weight_type: QuantTypeName = Field(default=QuantTypeName.S8, description="Weight type (s8 or u8).")
    per_channel: bool = Field(default=False, description="One weight scale per output channel.")
    reduce_range: bool | None = Field(
        default=None, description="7-bit weights; None: from the target's CPU (True on x86 without VNNI)."
    )
    op_types_to_quantize: list[str] = Field(
        default_factory=lambda: ["MatMul", "Attention", "LSTM", "GRU"],
        description="Op types to quantize. Add Conv only knowingly: ConvInteger was 4-10x slower than FP32 here.",
    )
    nodes_to_exclude: list[str] = Field(default_factory=list, description="Node names left in float.")
    rewrite_gemm: bool = Field(
        default=True, description="Rewrite Gemm (exported nn.Linear) to MatMul + Add so it is quantized."
    )


class QuantizeInt8DynamicPass(Pass[QuantizeInt8DynamicConfig]):
    name = "quantize_int8_dynamic"
    summary = "dynamic INT8 for transformers/RNNs (MatMul, Attention, LSTM, GRU); warns on conv nets"
    config_class = QuantizeInt8DynamicConfig

    def for_target(self, target: Target) -> QuantizeInt8DynamicPass:
        if self.config.reduce_range is not None:
            return self
        return QuantizeInt8DynamicPass(
            self.config.model_copy(update={"reduce_range": int8_defaults(target).reduce_range})
        )

    def output_precision(self, input_precision: Precision) -> Precision:
        return Precision.INT8

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from onnxruntime.quantization import quantize_dynamic

        from .quantize_int8 import ort_quant_type

        cfg = self.for_target(ctx.target).config
        model = load(source)
        warnings = []
        convs = sum(1 for n in model.graph.node if n.op_type in ("Conv", "ConvTranspose"))
        if convs and convs >= sum(1 for n in model.graph.node if n.op_type in ("MatMul", "Gemm", "LSTM", "GRU")):
            what = (
                "its Conv layers will be quantized and slow"
                if "Conv" in cfg.op_types_to_quantize
                else "its Conv layers stay FP32 and little will speed up"
            )
            warnings.append(CONV_NET_WARNING.format(convs=convs, what=what))
            ctx.reporter.warn(warnings[-1])
        gemms = gemm_to_matmul(model) if cfg.rewrite_gemm else 0
        staged = save(model, ctx.work_dir / f"{self.name}.staged.onnx")
        try:
            with quiet_ort():
                quantize_dynamic(
                    staged,
                    ctx.output_path,
                    op_types_to_quantize=list(cfg.op_types_to_quantize) or None,
                    per_channel=cfg.per_channel,
                    reduce_range=bool(cfg.reduce_range),
                    weight_type=ort_quant_type(cfg.weight_type),
                    nodes_to_exclude=list(cfg.nodes_to_exclude) or None,
                    use_external_data_format=model.ByteSize() >= SINGLE_FILE_LIMIT_BYTES,
                )
        except Exception as exc:  # onnxruntime raises ValueError/RuntimeError for graphs it cannot handle
            first = first_line(exc, limit=None)
            raise PassError(
                f"quantize_int8_dynamic failed on {Path(source.path).name}: {first}; exclude the "
                "failing node with nodes_to_exclude"
            ) from exc
        check(ctx.output_path, self.name)
        out = onnx.load_model(str(ctx.output_path), load_external_data=False)
        integer_ops = sum(
            1
            for n in out.graph.node
            if n.op_type
            in ("MatMulInteger", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM", "ConvInteger", "QAttention")
        )
        if integer_ops == 0:
            warnings.append(
                f"quantize_int8_dynamic quantized nothing: no {', '.join(cfg.op_types_to_quantize)} "
                "node with constant weights; the artifact is the FP32 model"
            )
            ctx.reporter.warn(warnings[-1])
        return PassOutput(
            path=ctx.output_path,
            precision=Precision.INT8 if integer_ops else source.precision,
            report={"gemm_rewritten": gemms, "integer_ops": integer_ops, "conv_nodes": convs},
            warnings=warnings,
        )
