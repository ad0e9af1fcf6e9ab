"""The typed model of a device target, validated from one YAML file per device in ``targets/``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..enums import AcceleratorKind, Arch, CpuVendor, PowerSensor, Precision
from ..names import RuntimeName

# Only for a target YAML without ``accelerator_kind`` (written before the field existed): keywords of its name
# or accelerator text -> the kind, first match wins. Shipped targets state the kind.
_LEGACY_KIND_KEYWORDS: tuple[tuple[AcceleratorKind, tuple[str, ...]], ...] = (
    (AcceleratorKind.EDGETPU, ("edgetpu", "coral")),
    (AcceleratorKind.NVIDIA_GPU, ("jetson", "nvidia", "cuda", "ampere", "maxwell", "volta")),
    (AcceleratorKind.INTEL_GPU, ("intel", "iris", "openvino")),
    (AcceleratorKind.APPLE_NPU, ("apple", "neural engine")),
)


def legacy_accelerator_kind(name: str, accelerator: str) -> AcceleratorKind:
    """The accelerator kind of a target YAML that does not state it, from its name and accelerator text."""
    text = f"{name} {accelerator}".lower()
    for kind, keywords in _LEGACY_KIND_KEYWORDS:
        if any(k in text for k in keywords):
            return kind
    accel = accelerator.lower()
    if accel.startswith("gpu"):
        return AcceleratorKind.OTHER_GPU
    return AcceleratorKind.OTHER_NPU if accel.startswith("npu") else AcceleratorKind.CPU


class Sourced(BaseModel):
    """A number with the note saying where it comes from (a datasheet, a measurement, an estimate)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0, description="The number, in the unit named by the field that holds it.")
    source: str = Field(min_length=3, description="Where the number comes from: datasheet, measurement, estimate.")


class Target(BaseModel):
    """One device class edgeopt can optimize for and benchmark on.

    A target with ``detect: true`` (the ``local`` target) has its hardware numbers filled from the machine at
    run time; every other target must state them, each with a source note.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", description="Target id; equals the YAML file's stem.")
    description: str = Field(min_length=3, description="Human-readable device name.")
    arch: Arch = Field(description="CPU architecture of the device.")
    accelerator: str = Field(description="Main inference accelerator: cpu, gpu (Ampere, Maxwell...), edgetpu, npu.")
    accelerator_kind: AcceleratorKind = Field(
        description="Kind of the main accelerator: picks execution providers, install hints and delegates "
        "(cpu, nvidia_gpu, intel_gpu, other_gpu, edgetpu, apple_npu, other_npu). Optional in YAML: when left "
        "out it is guessed from the name and accelerator text."
    )
    cpu_vendor: CpuVendor | None = Field(None, description="CPU vendor (arm, intel, amd, apple); a run on "
                                         "another vendor's CPU is flagged as a target mismatch.")
    cpu_cores: int | None = Field(None, ge=1, description="Logical CPUs of the device; a run on a machine with "
                                  "under half or over twice as many is flagged as a target mismatch.")
    peak_int8_tops: Sourced | None = Field(None, description="Peak dense INT8 throughput in TOPS.")
    peak_fp16_tflops: Sourced | None = Field(None, description="Peak dense FP16 throughput in TFLOPS.")
    peak_bf16_tflops: Sourced | None = Field(None, description="Peak dense BF16 throughput in TFLOPS (CPUs with "
                                             "AVX512_BF16 or AMX); without it BF16 uses the FP16, then FP32 rate.")
    peak_fp32_tflops: Sourced | None = Field(None, description="Peak FP32 throughput in TFLOPS.")
    memory_gb: Sourced | None = Field(None, description="Device memory in GB (shared CPU/GPU on SoCs).")
    memory_bandwidth_gbps: Sourced | None = Field(None, description="Peak DRAM bandwidth in GB/s.")
    tdp_w: Sourced | None = Field(None, description="Module power budget (TDP or max power mode) in W.")
    runtimes: list[RuntimeName] = Field(min_length=1, description="Runtimes in order of preference.")
    precisions: list[Precision] = Field(min_length=1, description="Precisions the device runs efficiently.")
    power_sensor: PowerSensor = Field(PowerSensor.NONE, description="How the board reports power.")
    default_fps: float | None = Field(None, gt=0, description="Default real-time budget in frames per second.")
    detect: bool = Field(False, description="Fill hardware numbers from the machine at run time (local target).")
    default_input_shape: list[int] | None = Field(
        None, min_length=1,
        description="Input shape of the device's usual feed, e.g. [1, 3, 640, 640] for a camera pipeline: inspect "
        "counts MACs at it for an input with open dims when the rank and fixed dims fit (docs/inspect.md).")

    @model_validator(mode="before")
    @classmethod
    def _kind_from_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("accelerator_kind") is None and "accelerator" in data:
            kind = legacy_accelerator_kind(str(data.get("name", "")), str(data["accelerator"]))
            data = {**data, "accelerator_kind": kind}
        return data

    @model_validator(mode="after")
    def _numbers_present(self) -> Target:
        if self.detect:
            return self
        missing = [
            name for name in ("memory_gb", "memory_bandwidth_gbps", "tdp_w") if getattr(self, name) is None
        ]
        if not any((self.peak_int8_tops, self.peak_fp16_tflops, self.peak_bf16_tflops, self.peak_fp32_tflops)):
            missing.append("peak_int8_tops|peak_fp16_tflops|peak_fp32_tflops")
        if missing:
            raise ValueError(f"missing hardware numbers: {', '.join(missing)} (or set detect: true)")
        return self

    def peak_ops_per_s(self, precision: Precision) -> tuple[float, str] | None:
        """Peak arithmetic rate (ops/s) for ``precision`` and its source note, falling back to wider types."""
        order = {
            Precision.INT8: ("peak_int8_tops", "peak_fp16_tflops", "peak_fp32_tflops"),
            Precision.INT4: ("peak_int8_tops", "peak_fp16_tflops", "peak_fp32_tflops"),
            Precision.FP16: ("peak_fp16_tflops", "peak_fp32_tflops"),
            Precision.BF16: ("peak_bf16_tflops", "peak_fp16_tflops", "peak_fp32_tflops"),
            Precision.FP32: ("peak_fp32_tflops", "peak_fp16_tflops"),
        }[precision]
        for field in order:
            value: Sourced | None = getattr(self, field)
            if value is not None:
                return value.value * 1e12, f"{field}: {value.source}"
        return None
