"""``to_openvino``: ONNX -> OpenVINO IR (``.xml`` + ``.bin``) with ``openvino.convert_model`` + ``save_model``.

Precision: an FP32 model is saved with FP16-compressed weights by default (``compress_to_fp16``, OpenVINO's own
default: half the file, the plugin decompresses or runs FP16 as the device prefers). An INT8 QDQ ONNX model keeps
its QuantizeLinear/DequantizeLinear pairs as FakeQuantize, which the CPU/GPU plugins run in INT8. ``int8: nncf``
quantizes an FP32 model here with NNCF post-training quantization on the calibration data (``[nncf]`` extra).
"""

from __future__ import annotations

import importlib.util
from enum import Enum
from pathlib import Path

import numpy as np
from pydantic import Field

from ..enums import Precision
from ..errors import first_line
from .base import Artifact, ArtifactFormat, PassConfig, PassContext, PassError, PassOutput
from .convert_base import ConvertPass


class OpenVinoInt8(str, Enum):
    KEEP = "keep"  # convert what the ONNX has (QDQ -> FakeQuantize; FP32 stays FP32)
    NNCF = "nncf"  # quantize an FP32 model with nncf.quantize on the calibration data


class ToOpenVinoConfig(PassConfig):
    compress_to_fp16: bool = Field(
        default=True, description="Store FP32 weights as FP16 in the .bin (OpenVINO's default; halves the file)."
    )
    int8: OpenVinoInt8 = Field(
        default=OpenVinoInt8.KEEP, description="keep: convert as is (QDQ stays INT8); nncf: quantize with NNCF."
    )
    calibration_samples: int = Field(default=64, ge=1, description="Calibration samples NNCF uses (int8: nncf).")


class ToOpenVinoPass(ConvertPass):
    name = "to_openvino"
    summary = "ONNX -> OpenVINO IR (.xml/.bin); FP16 weights, QDQ kept as INT8, or INT8 via NNCF"
    config_class = ToOpenVinoConfig
    output_format = ArtifactFormat.OPENVINO_IR
    suffix = ".xml"

    @property
    def needs_nncf(self) -> bool:
        return bool(self.config.int8 is OpenVinoInt8.NNCF)

    @classmethod
    def availability(cls) -> str | None:
        if importlib.util.find_spec("openvino") is None:
            return "to_openvino needs OpenVINO: pip install 'edgeopt[openvino]'"
        return None

    def unavailable(self) -> str | None:
        if self.needs_nncf and importlib.util.find_spec("nncf") is None:
            return "to_openvino int8: nncf needs NNCF: pip install 'edgeopt[openvino,nncf]'"
        return type(self).availability()

    def output_precision(self, input_precision: Precision) -> Precision:
        return Precision.INT8 if self.needs_nncf else input_precision

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        import openvino as ov

        cfg: ToOpenVinoConfig = self.config
        out = ctx.output_path.with_suffix(".xml")
        try:
            model = ov.convert_model(source.path)
        except Exception as exc:  # OpenVINO raises its own GeneralFailure/OpConversionFailure types
            first = first_line(exc)
            raise PassError(
                f"OpenVINO could not convert {source.path} ({first}); run 'edgeopt inspect' for unsupported "
                "ops, or deliver ONNX (formats: [onnx]) which OpenVINO also loads"
            ) from exc
        precision = source.precision
        report: dict[str, object] = {"openvino_version": ov.__version__}
        if self.needs_nncf:
            model = self._nncf(model, source, ctx)
            precision = Precision.INT8
        ov.save_model(model, str(out), compress_to_fp16=cfg.compress_to_fp16 and not self.needs_nncf)
        ops = [op.get_type_name() for op in model.get_ordered_ops()]
        report.update(
            ops=len(ops),
            fake_quantize_ops=ops.count("FakeQuantize"),
            compressed_to_fp16=cfg.compress_to_fp16,
            int8=cfg.int8.value,
        )
        warnings = []
        if precision is Precision.INT8 and not ops.count("FakeQuantize"):
            warnings.append(f"{out.name}: INT8 input but no FakeQuantize op survived conversion; it runs in FP32")
        return PassOutput(path=out, precision=precision, format=ArtifactFormat.OPENVINO_IR, report=report,
                          warnings=warnings)

    def _nncf(self, model: object, source: Artifact, ctx: PassContext) -> object:
        if importlib.util.find_spec("nncf") is None:
            raise PassError("to_openvino int8: nncf needs NNCF: pip install 'edgeopt[nncf]' (or use int8: keep "
                            "on a QDQ model from quantize_int8)")
        if source.precision is not Precision.FP32:
            raise PassError(f"to_openvino int8: nncf takes an fp32 model but {source.name} is "
                            f"{source.precision.value}; drop quantize_int8 from the recipe or use int8: keep")
        if ctx.calibration is None:
            raise PassError("to_openvino int8: nncf needs calibration data; pass --calib")
        import nncf

        samples = ctx.calibration.samples(Path(source.path), self.config.calibration_samples)
        if ctx.calibration.is_random:
            ctx.reporter.warn("to_openvino: NNCF calibrated on random inputs; pass --calib for real accuracy")
        feeds = [{k: np.asarray(v) for k, v in s.items()} for s in samples]
        dataset = nncf.Dataset(feeds)
        try:
            return nncf.quantize(model, dataset, subset_size=len(feeds))
        except Exception as exc:  # NNCF raises many internal types
            first = first_line(exc)
            raise PassError(f"NNCF quantization of {source.path} failed ({first}); use int8: keep with "
                            "quantize_int8 instead") from exc
