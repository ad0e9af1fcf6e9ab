"""``quantize_int4``: weight-only 4-bit blockwise quantization of MatMul weights (onnxruntime MatMulNBits).

Every Gemm with a constant weight (every exported ``nn.Linear``) is first rewritten to MatMul + Add: the stock
quantizer handles only MatMul and would silently skip them. The report says how many MatMuls were quantized
and how many weight bytes those layers took before and after. MatMulNBits is an onnxruntime contrib op: the
artifact runs on onnxruntime only.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper
from pydantic import Field, field_validator

from ..enums import Precision
from ..errors import first_line
from ..names import RuntimeName
from ..targets.schema import Target
from .base import Artifact, Pass, PassConfig, PassContext, PassError, PassOutput
from .graph_edit import gemm_to_matmul, initializers
from .onnx_io import check, load, save
from .quiet import quiet_ort


class QuantizeInt4Advanced(PassConfig):
    accuracy_level: int | None = Field(
        default=None,
        ge=0,
        le=4,
        description="MatMulNBits compute type: None/0 unset, 1 fp32, 2 fp16, 3 bf16, 4 int8 activations (fastest).",
    )


class QuantizeInt4Config(PassConfig):
    block_size: int = Field(default=32, ge=16, description="Weights per scale along K; a power of two >= 16.")
    symmetric: bool = Field(default=True, description="Symmetric blocks (no zero points).")
    rewrite_gemm: bool = Field(default=True, description="Rewrite Gemm with constant B to MatMul + Add first.")
    nodes_to_exclude: list[str] = Field(default_factory=list, description="MatMul node names left in FP32.")
    advanced: QuantizeInt4Advanced = Field(default_factory=QuantizeInt4Advanced, description="Rare options.")

    @field_validator("block_size")
    @classmethod
    def _power_of_two(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"block_size {value} is not a power of two (use 16, 32, 64 or 128)")
        return value


class QuantizeInt4Pass(Pass[QuantizeInt4Config]):
    name = "quantize_int4"
    summary = "weight-only INT4 (MatMulNBits) for MatMul/Gemm-heavy models; Gemm rewritten so none is skipped"
    config_class = QuantizeInt4Config

    def output_precision(self, input_precision: Precision) -> Precision:
        return Precision.INT4

    def target_problem(self, target: Target, input_precision: Precision) -> str | None:
        if Precision.INT4 not in target.precisions and Precision.FP32 not in target.precisions:
            return (
                f"pass 'quantize_int4' needs int4 or fp32 compute (weights are dequantized) but target "
                f"'{target.name}' runs only {', '.join(p.value for p in target.precisions)}"
            )
        if RuntimeName.ONNXRUNTIME not in target.runtimes:
            return (
                f"pass 'quantize_int4' writes onnxruntime MatMulNBits ops but target '{target.name}' runs "
                f"{', '.join(r.value for r in target.runtimes)}; pick an int8 or fp16 recipe"
            )
        return None

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        cfg = self.config
        model = load(source)
        gemms = gemm_to_matmul(model) if cfg.rewrite_gemm else 0
        candidates = _constant_matmuls(model)
        fp32_bytes = sum(w.size * 4 for _, w in candidates)
        quantizer = MatMulNBitsQuantizer(
            model,
            bits=4,
            block_size=cfg.block_size,
            is_symmetric=cfg.symmetric,
            accuracy_level=cfg.advanced.accuracy_level,
            nodes_to_exclude=list(cfg.nodes_to_exclude),
        )
        try:
            with quiet_ort():
                quantizer.process()
        except Exception as exc:  # the quantizer raises assorted errors for unsupported weights
            first = first_line(exc, limit=None)
            raise PassError(f"quantize_int4 failed: {first}; exclude the failing node with nodes_to_exclude") from exc
        out: onnx.ModelProto = quantizer.model.model
        nbits = [n for n in out.graph.node if n.op_type == "MatMulNBits"]
        inits = initializers(out.graph)
        int4_bytes = sum(
            int(np.prod(inits[name].dims)) * _itemsize(inits[name])
            for n in nbits
            for name in n.input[1:]
            if name in inits
        )
        warnings = []
        if not nbits:
            warnings.append(
                "quantize_int4 quantized no MatMul (none has a constant 2-D weight); the artifact is the FP32 model"
            )
            ctx.reporter.warn(warnings[-1])
        elif len(nbits) < len(candidates):
            warnings.append(
                f"quantize_int4 quantized {len(nbits)} of {len(candidates)} MatMuls with constant "
                "weights (the rest were excluded or unsupported)"
            )
        save(out, ctx.output_path)
        check(ctx.output_path, self.name)
        report = {
            "gemm_rewritten": gemms,
            "matmuls_with_constant_weights": len(candidates),
            "matmuls_quantized": len(nbits),
            "weight_bytes_fp32": fp32_bytes,
            "weight_bytes_int4": int4_bytes,
            "weight_size_ratio": round(int4_bytes / fp32_bytes, 4) if fp32_bytes and nbits else None,
        }
        return PassOutput(
            path=ctx.output_path,
            precision=Precision.INT4 if nbits else source.precision,
            report=report,
            warnings=warnings,
        )


def _constant_matmuls(model: onnx.ModelProto) -> list[tuple[str, np.ndarray]]:
    inits = initializers(model.graph)
    out = []
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in inits and len(inits[node.input[1]].dims) == 2:
            out.append((node.name, numpy_helper.to_array(inits[node.input[1]])))
    return out


def _itemsize(tensor: onnx.TensorProto) -> int:
    return int(np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize)
