"""``quantize_int8``: static post-training INT8 in QDQ format with onnxruntime, calibrated on the user's data.

Defaults are the measured fast and sound path on an AVX2 CPU (docs/passes.md): U8 activations, S8 symmetric
per-channel weights, ``reduce_range`` on x86 without VNNI, and only the weight ops (Conv, MatMul, Gemm) plus the
activations that fold into them (Relu, Clip, MaxPool) quantized. onnxruntime's own defaults (S8 activations,
per-tensor, every op) made every real model tried slower than FP32 and hurt a detector's output.
"""

from __future__ import annotations

import tempfile
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from ..targets.schema import Target
from .base import Artifact, Pass, PassConfig, PassContext, PassError, PassOutput
from .int8_target import QuantTypeName, int8_defaults
from .onnx_io import SINGLE_FILE_LIMIT_BYTES, check, load, opset
from .quiet import quiet_ort

# Weight ops, plus Relu/Clip (folded into the preceding quantized output's range) and MaxPool (exact in int8):
# they remove Q/DQ pairs between convs at no accuracy cost. Sensitive ops (Sigmoid, Softmax, Concat, Resize, the
# Mul/Add/Div of detection heads) stay float. Measured in docs/passes.md.
DEFAULT_OP_TYPES = ("Conv", "MatMul", "Gemm", "Relu", "Clip", "MaxPool")


class CalibrationMethodName(str, Enum):
    MINMAX = "minmax"
    ENTROPY = "entropy"
    PERCENTILE = "percentile"


class QuantizeInt8Advanced(PassConfig):
    percentile: float = Field(default=99.999, gt=90, le=100, description="Percentile kept by the 'percentile' method.")
    num_bins: int = Field(default=2048, ge=128, description="Histogram bins of the 'entropy'/'percentile' methods.")
    weight_symmetric: bool = Field(
        default=True, description="Symmetric weights (zero point 0), as INT8 kernels expect."
    )
    moving_average: bool = Field(default=False, description="MinMax over a moving average of per-batch ranges.")
    min_opset: int = Field(default=13, ge=13, description="Refuse models below this opset (per-channel needs 13).")
    calibration_cache: str | None = Field(
        default=None, description="onnxruntime calibration cache (JSON of per-tensor ranges): read when it exists "
        "(no calibration run), written after calibrating when it does not; one file per calibration method. Needs "
        "onnxruntime with quantize_static(calibration_cache_path=...).")


class TensorRange(PassConfig):
    """An activation tensor's calibrated range, overriding the calibration method's (onnxruntime's
    ``TensorQuantOverrides`` rmin/rmax): the accuracy-aware INT8 search's per-tensor range repair."""

    rmin: float = Field(description="Lowest real value of the tensor's quantization range.")
    rmax: float = Field(description="Highest real value of the tensor's quantization range.")


class QuantizeInt8Config(PassConfig):
    calibration_method: CalibrationMethodName = Field(
        default=CalibrationMethodName.MINMAX, description="How activation ranges are calibrated."
    )
    calibration_samples: int = Field(default=64, ge=1, description="Most calibration samples used.")
    per_channel: bool = Field(default=True, description="One scale per output channel of each weight.")
    activation_type: QuantTypeName | None = Field(
        default=None, description="u8 or s8 activations; None: chosen from the target (u8 on CPUs, s8 for TensorRT)."
    )
    activation_symmetric: bool | None = Field(
        default=None, description="Symmetric activation ranges; None: from the target (True only for TensorRT)."
    )
    weight_type: QuantTypeName = Field(default=QuantTypeName.S8, description="Weight type (s8: the fast u8s8 kernels).")
    reduce_range: bool | None = Field(
        default=None, description="7-bit weights; None: from the target's CPU (True on x86 without VNNI)."
    )
    op_types_to_quantize: list[str] = Field(
        default_factory=lambda: list(DEFAULT_OP_TYPES),
        description="Op types to quantize: the weight ops plus the activations that fold into them losslessly; "
        "[] means every op onnxruntime can quantize (slower and lossy on real models here).",
    )
    nodes_to_exclude: list[str] = Field(default_factory=list, description="Node names left in float.")
    tensor_ranges: dict[str, TensorRange] = Field(
        default_factory=dict, description="Activation tensor name -> the range used instead of the calibrated one "
        "(e.g. another calibration method's range for that tensor; docs/sweep.md, range repair).")
    advanced: QuantizeInt8Advanced = Field(default_factory=QuantizeInt8Advanced, description="Rare options.")


class QuantizeInt8Pass(Pass[QuantizeInt8Config]):
    name = "quantize_int8"
    summary = "static INT8 (QDQ) calibrated on your data; target-aware defaults"
    config_class = QuantizeInt8Config
    needs_calibration = True

    def for_target(self, target: Target) -> QuantizeInt8Pass:
        cfg = self.config
        if None not in (cfg.activation_type, cfg.activation_symmetric, cfg.reduce_range):
            return self
        d = int8_defaults(target)
        return QuantizeInt8Pass(
            cfg.model_copy(
                update={
                    "activation_type": cfg.activation_type or d.activation_type,
                    "activation_symmetric": d.activation_symmetric
                    if cfg.activation_symmetric is None
                    else cfg.activation_symmetric,
                    "reduce_range": d.reduce_range if cfg.reduce_range is None else cfg.reduce_range,
                }
            )
        )

    def output_precision(self, input_precision: Precision) -> Precision:
        return Precision.INT8

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        cfg = self.for_target(ctx.target).config
        model = load(source)
        if opset(model) < cfg.advanced.min_opset:
            raise PassError(
                f"quantize_int8: {Path(source.path).name} has opset {opset(model)} but QDQ INT8 needs "
                f">= {cfg.advanced.min_opset}; put `- pass: cleanup` with `config: {{min_opset: 17}}` "
                "before it in the recipe"
            )
        if ctx.calibration is None:
            raise PassError("quantize_int8 needs calibration data: pass --calib DATA (see docs/calibration.md)")
        samples = ctx.calibration.samples(Path(source.path), limit=cfg.calibration_samples)
        method = {
            CalibrationMethodName.MINMAX: CalibrationMethod.MinMax,
            CalibrationMethodName.ENTROPY: CalibrationMethod.Entropy,
            CalibrationMethodName.PERCENTILE: CalibrationMethod.Percentile,
        }[cfg.calibration_method]
        extra: dict[str, Any] = {
            "ActivationSymmetric": bool(cfg.activation_symmetric),
            "WeightSymmetric": cfg.advanced.weight_symmetric,
            "CalibMovingAverage": cfg.advanced.moving_average,
        }
        if cfg.calibration_method is not CalibrationMethodName.MINMAX:
            extra["CalibNumBins"] = cfg.advanced.num_bins
        if cfg.calibration_method is CalibrationMethodName.PERCENTILE:
            extra["CalibPercentile"] = cfg.advanced.percentile
        if cfg.tensor_ranges:
            extra["TensorQuantOverrides"] = {t: [{"rmin": np.float32(r.rmin), "rmax": np.float32(r.rmax)}]
                                             for t, r in cfg.tensor_ranges.items()}
        reader = ProgressReader(samples, ctx, "calibrating INT8 ranges")
        cache_path = cfg.advanced.calibration_cache
        entropy = cfg.calibration_method is CalibrationMethodName.ENTROPY
        if entropy and calibration_cache_supported():  # see _entropy_cache
            cache_path = cache_path or str(ctx.work_dir / f"entropy-{Path(source.path).stem}.json")
            _entropy_cache(Path(source.path), Path(cache_path), reader, cfg,
                           model.ByteSize() >= SINGLE_FILE_LIMIT_BYTES)
        cache = _cache_kwargs(cache_path)
        try:
            with quiet_ort():
                quantize_static(
                    model,
                    ctx.output_path,
                    reader,
                    quant_format=QuantFormat.QDQ,
                    op_types_to_quantize=list(cfg.op_types_to_quantize) or None,
                    per_channel=cfg.per_channel,
                    reduce_range=bool(cfg.reduce_range),
                    activation_type=ort_quant_type(cfg.activation_type or QuantTypeName.U8),
                    weight_type=ort_quant_type(cfg.weight_type),
                    nodes_to_exclude=list(cfg.nodes_to_exclude) or None,
                    use_external_data_format=model.ByteSize() >= SINGLE_FILE_LIMIT_BYTES,
                    calibrate_method=method,
                    extra_options=extra,
                    **cache,
                )
        except Exception as exc:  # onnxruntime raises ValueError/RuntimeError/its own Fail for bad graphs
            raise PassError(
                f"quantize_int8 failed on {Path(source.path).name}: {first_line(exc, limit=None)}; run cleanup "
                "first or exclude the failing node with nodes_to_exclude"
            ) from exc
        check(ctx.output_path, self.name)
        report = {
            "calibration_samples": len(samples),
            "random_calibration": ctx.calibration.is_random,
            **count_qdq(ctx.output_path),
            "target_defaults": int8_defaults(ctx.target).reason,
        }
        return PassOutput(path=ctx.output_path, precision=Precision.INT8, report=report)


# onnxruntime whose quantize_static reads and writes a calibration cache (calibration_cache_path): the oldest version
# checked to have it (older ones calibrate every time: the search's range repair is then skipped).
CACHE_MIN_ORT = (1, 32)


def calibration_cache_supported() -> bool:
    """Whether this onnxruntime's quantize_static takes ``calibration_cache_path`` (``advanced.calibration_cache``)."""
    import onnxruntime

    return tuple(int(p) for p in onnxruntime.__version__.split(".")[:2]) >= CACHE_MIN_ORT


def _cache_kwargs(path: str | None) -> dict[str, Any]:
    """``calibration_cache_path`` for quantize_static, refused with the fix when this onnxruntime lacks it."""
    if path is None:
        return {}
    if not calibration_cache_supported():
        raise PassError(f"quantize_int8: calibration_cache {path} needs an onnxruntime whose quantize_static takes "
                        "calibration_cache_path (1.32 has it); upgrade onnxruntime or leave calibration_cache unset")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return {"calibration_cache_path": path}


def _entropy_cache(model: Path, cache: Path, reader: CalibrationDataReader, cfg: QuantizeInt8Config,
                   external: bool) -> None:
    """onnxruntime's entropy (KL) calibration with ``advanced.num_bins`` histogram bins, saved as its calibration
    cache for quantize_static to read: quantize_static does not pass ``CalibNumBins`` on (onnxruntime 1.32), and
    with its default of 128 bins, as many as the quantized bins, entropy always returns the min-max range."""
    if cache.is_file():
        return
    from onnxruntime.quantization.calibrate import create_calibrator, save_tensors_data

    with tempfile.TemporaryDirectory(prefix="edgeopt-entropy-") as tmp, quiet_ort():
        calibrator = create_calibrator(
            model, list(cfg.op_types_to_quantize) or None, augmented_model_path=str(Path(tmp) / "augmented.onnx"),
            calibrate_method=CalibrationMethod.Entropy, use_external_data_format=external,
            extra_options={"num_bins": cfg.advanced.num_bins, "symmetric": bool(cfg.activation_symmetric)})
        calibrator.collect_data(reader)
        save_tensors_data(calibrator.compute_data(), cache)
    reader.rewind()


class ProgressReader(CalibrationDataReader):
    """An onnxruntime CalibrationDataReader over in-memory samples that reports progress."""

    def __init__(self, samples: list[dict[str, np.ndarray]], ctx: PassContext, task: str) -> None:
        self._samples = samples
        self._ctx = ctx
        self._task = task
        self._i = 0

    def get_next(self) -> dict[str, np.ndarray] | None:
        if self._i >= len(self._samples):
            return None
        self._i += 1
        self._ctx.reporter.progress(self._task, self._i, len(self._samples))
        return self._samples[self._i - 1]

    def rewind(self) -> None:
        self._i = 0

    def __len__(self) -> int:
        return len(self._samples)


def ort_quant_type(name: QuantTypeName) -> QuantType:
    return QuantType.QUInt8 if name is QuantTypeName.U8 else QuantType.QInt8


def count_qdq(path: Path) -> dict[str, int]:
    """How many QuantizeLinear/DequantizeLinear nodes the quantized model has (0 means nothing was quantized)."""
    model = onnx.load_model(str(path), load_external_data=False)
    ops = [n.op_type for n in model.graph.node]
    return {
        "quantize_linear_nodes": ops.count("QuantizeLinear"),
        "dequantize_linear_nodes": ops.count("DequantizeLinear"),
    }
