"""``to_tflite``: ONNX -> TFLite/LiteRT (fp32, fp16, dynamic-range INT8, full-integer INT8) for Raspberry Pi
and Coral, with onnx2tf + TensorFlow run in edgeopt's isolated tool env (``edgeopt tools install tflite``).

Full-integer INT8 calibrates on ``ctx.calibration`` (the user's --calib data, never downloaded sample images).
For Coral (``edgetpu: true``) the I/O is uint8/int8 as the Edge TPU needs, then ``edgetpu_compiler`` runs when
it is on PATH and the report gives the share of ops mapped to the TPU; without it the CPU-ready full-int8 model
ships and a warning says so. 4-D inputs become NHWC (TFLite's layout); validation transposes NCHW feeds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from enum import Enum
from pathlib import Path

import numpy as np
from pydantic import Field

from ..enums import AcceleratorKind, Precision
from ..targets.schema import Target
from .base import Artifact, ArtifactFormat, PassConfig, PassContext, PassError, PassOutput
from .convert_base import ConvertPass


class TfliteQuant(str, Enum):
    AUTO = "auto"  # from the input: int8 -> full_int8, fp16 -> fp16, fp32 -> fp32
    FP32 = "fp32"
    FP16 = "fp16"
    DYNAMIC_INT8 = "dynamic_int8"
    FULL_INT8 = "full_int8"


class TfliteIo(str, Enum):
    FLOAT32 = "float32"
    INT8 = "int8"
    UINT8 = "uint8"


CHECK_SAMPLES = 4  # samples onnx2tf's output check gets when no representative dataset is needed


class ToTfliteConfig(PassConfig):
    quantization: TfliteQuant = Field(default=TfliteQuant.AUTO, description="TFLite precision; auto: from input.")
    io_dtype: TfliteIo = Field(default=TfliteIo.FLOAT32, description="I/O type of a full_int8 model (Coral: uint8).")
    edgetpu: bool = Field(default=False, description="Compile for the Coral Edge TPU (edgetpu_compiler on PATH).")
    calibration_samples: int = Field(default=64, ge=1, description="Representative samples for full_int8.")
    timeout_s: float = Field(default=1800, gt=0, description="Limit on the converter subprocess, in seconds.")


_PRECISION = {
    TfliteQuant.FP32: Precision.FP32,
    TfliteQuant.FP16: Precision.FP16,
    TfliteQuant.DYNAMIC_INT8: Precision.INT8,
    TfliteQuant.FULL_INT8: Precision.INT8,
}


class ToTflitePass(ConvertPass):
    name = "to_tflite"
    summary = "ONNX -> TFLite (fp32/fp16/dynamic/full INT8, Coral Edge TPU) via the isolated tflite tool env"
    config_class = ToTfliteConfig
    output_format = ArtifactFormat.TFLITE
    suffix = ".tflite"

    @classmethod
    def availability(cls) -> str | None:
        from ..tools import tool_status

        status = tool_status("tflite")
        if not status.installed or status.stale:
            return (
                f"to_tflite needs the TFLite converter environment ({status.path}); run: edgeopt tools install tflite"
            )
        return None

    @property
    def needs_calibration(self) -> bool:  # type: ignore[override]
        # Full INT8 needs a representative dataset; every mode gives onnx2tf a few real samples for its own
        # output check, which otherwise downloads sample images for 3-channel image inputs.
        return True

    def for_target(self, target: Target) -> ToTflitePass:
        if target.accelerator_kind is AcceleratorKind.EDGETPU:
            return ToTflitePass(
                self.config.model_copy(
                    update={
                        "quantization": TfliteQuant.FULL_INT8,
                        "edgetpu": True,
                        "io_dtype": TfliteIo.UINT8
                        if self.config.io_dtype is TfliteIo.FLOAT32
                        else self.config.io_dtype,
                    }
                )
            )
        return self

    def for_source(self, precision: Precision) -> ToTflitePass:
        """Pin the quantization a recipe result of ``precision`` needs (the converter starts from an FP32 ONNX)."""
        return ToTflitePass(self.config.model_copy(update={"quantization": self.quant_for(precision)}))

    def quant_for(self, precision: Precision) -> TfliteQuant:
        """The quantization this pass applies to an input of ``precision``."""
        q = self.config.quantization
        if q is not TfliteQuant.AUTO:
            return TfliteQuant(q)
        return {Precision.INT8: TfliteQuant.FULL_INT8, Precision.FP16: TfliteQuant.FP16}.get(
            precision, TfliteQuant.FP32
        )

    def output_precision(self, input_precision: Precision) -> Precision:
        return _PRECISION[self.quant_for(input_precision)]

    def run(self, source: Artifact, ctx: PassContext) -> PassOutput:
        from ..tools import run_tool
        from ..tools.manager import ToolError

        cfg: ToTfliteConfig = self.config
        quant = self.quant_for(source.precision)
        calib = self._calibration(source, ctx, full_int8=quant is TfliteQuant.FULL_INT8)
        request: dict[str, object] = {
            "onnx": source.path,
            "work_dir": str(ctx.work_dir / "tflite"),
            "quantization": quant.value,
            "calib": calib,
            "io_dtype": cfg.io_dtype.value,
        }
        try:
            reply = run_tool("tflite", request, timeout_s=cfg.timeout_s)
        except ToolError as exc:
            raise PassError(f"TFLite conversion of {source.path} failed: {exc}") from exc
        out = ctx.output_path.with_suffix(".tflite")
        shutil.copyfile(str(reply["tflite"]), out)
        report: dict[str, object] = {
            "quantization": quant.value,
            "io_dtype": cfg.io_dtype.value,
            "converter": reply.get("versions"),
        }
        warnings: list[str] = []
        if cfg.edgetpu:
            out = self._edgetpu(out, ctx, report, warnings)
        return PassOutput(
            path=out, precision=_PRECISION[quant], format=ArtifactFormat.TFLITE, report=report, warnings=warnings
        )

    def _calibration(self, source: Artifact, ctx: PassContext, *, full_int8: bool) -> dict[str, str]:
        """Samples as NHWC ``.npy`` files by input name: the representative dataset for full INT8, else a few
        samples for onnx2tf's output check."""
        if not full_int8 and (ctx.calibration is None or ctx.calibration.is_random):
            return {}  # the driver gives onnx2tf's output check seeded random images itself
        if ctx.calibration is None:
            raise PassError("to_tflite full_int8 needs calibration data; pass --calib (never downloaded images)")
        limit = self.config.calibration_samples if full_int8 else CHECK_SAMPLES
        samples = ctx.calibration.samples(Path(source.path), limit)
        if ctx.calibration.is_random and full_int8:
            ctx.reporter.warn("to_tflite: full-int8 calibrated on random inputs; pass --calib for real accuracy")
        paths: dict[str, str] = {}
        for name in samples[0]:
            data = np.concatenate([np.asarray(s[name], dtype=np.float32) for s in samples])
            if data.ndim == 4:
                data = data.transpose(0, 2, 3, 1)  # onnx2tf takes NHWC representative data
            path = ctx.work_dir / f"calib_{len(paths)}.npy"
            np.save(path, data)
            paths[name] = str(path)
        return paths

    def _edgetpu(self, model: Path, ctx: PassContext, report: dict[str, object], warnings: list[str]) -> Path:
        compiler = shutil.which("edgetpu_compiler")
        if compiler is None:
            report["edgetpu"] = "not compiled: edgetpu_compiler not on PATH"
            warnings.append(
                "edgetpu_compiler is not on PATH (x86-64 Debian/Ubuntu only): shipping the CPU-ready "
                "full-int8 model; compile it with edgetpu_compiler for the Edge TPU"
            )
            return model
        out_dir = ctx.work_dir / "edgetpu"
        out_dir.mkdir(exist_ok=True)
        proc = subprocess.run(
            [compiler, "-s", "-o", str(out_dir), str(model)], capture_output=True, text=True, timeout=600, check=False
        )
        if proc.returncode != 0:
            raise PassError(f"edgetpu_compiler failed on {model.name}: {' '.join(proc.stdout.split())[-300:]}")
        report.update(parse_edgetpu_log(proc.stdout))
        compiled = out_dir / f"{model.stem}_edgetpu.tflite"
        final = model.with_name(f"{model.stem}_edgetpu.tflite")
        shutil.copyfile(compiled, final)
        return final


def parse_edgetpu_log(text: str) -> dict[str, object]:
    """Ops mapped to the Edge TPU vs the CPU from ``edgetpu_compiler -s`` output (its operation table)."""
    tpu = cpu = 0
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+(\d+)\s+(.+)$", line)
        if not m:
            continue
        count, status = int(m.group(2)), m.group(3)
        if "Mapped to Edge TPU" in status:
            tpu += count
        elif status.strip():
            cpu += count
    total = tpu + cpu
    return {"edgetpu_ops": tpu, "cpu_ops": cpu, "edgetpu_fraction": round(tpu / total, 4) if total else None}
