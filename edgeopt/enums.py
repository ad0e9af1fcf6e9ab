"""Closed vocabularies. Strings a user writes in YAML or on the command line are parsed into these.

``ModelFormat`` and ``RuntimeName`` name the built-in formats and runtimes; a plug-in adds its own through the
registry (:mod:`edgeopt.registry`), and the enum then accepts that name too (``RuntimeName("myrt")`` returns a
member made on first use), so targets, recipes and results validate plug-in names with no change here. To list
what exists, ask the registry: iterating the enum gives the built-ins only.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class Precision(str, Enum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"
    INT4 = "int4"


def _plugin_member(cls: Any, value: object, registered: bool) -> Any:
    """The member for a plug-in's ``value`` (made once, then found like a built-in), or None."""
    if not isinstance(value, str) or not registered:
        return None
    member = str.__new__(cls, value)
    member._name_ = value.upper()
    member._value_ = value
    return cls._value2member_map_.setdefault(value, member)


class RuntimeName(str, Enum):
    """A runtime the agent runs models with; plug-in runtimes (``edgeopt.runtimes`` entry points) are accepted."""

    ONNXRUNTIME = "onnxruntime"
    OPENVINO = "openvino"
    TFLITE = "tflite"
    TENSORRT = "tensorrt"
    COREML = "coreml"
    NULL = "null"

    @classmethod
    def _missing_(cls, value: object) -> Any:
        from .registry import runtime_names

        return _plugin_member(cls, value, isinstance(value, str) and value in runtime_names())


class ModelFormat(str, Enum):
    """What a model file (or an optimize artifact) is; decides which runtimes load it and how it is converted.

    One enum for the files ``bench`` detects and the artifacts passes exchange (``passes.base.ArtifactFormat`` is
    this enum). Plug-in formats (``edgeopt.formats`` entry points) are accepted.
    """

    ONNX = "onnx"
    PYTORCH = "pytorch"  # a .pt2 ExportedProgram, a TorchScript file, or a "package.module:factory" spec
    OPENVINO_IR = "openvino_ir"  # model.xml + model.bin
    TFLITE = "tflite"
    COREML = "coreml"  # .mlpackage directory or .mlmodel file
    TENSORRT_ONNX = "tensorrt_onnx"  # ONNX prepared for TensorRT (explicit QDQ, S8/S8)
    TENSORRT_ENGINE = "tensorrt_engine"  # a serialized engine: specific to one GPU and TensorRT version

    @classmethod
    def _missing_(cls, value: object) -> Any:
        from .registry import format_names

        return _plugin_member(cls, value, isinstance(value, str) and value in format_names())


class AcceleratorKind(str, Enum):
    """What kind of accelerator a target has: picks execution providers, install hints and delegates."""

    CPU = "cpu"
    NVIDIA_GPU = "nvidia_gpu"  # CUDA / TensorRT (Jetson, discrete NVIDIA GPUs)
    INTEL_GPU = "intel_gpu"  # Intel integrated or discrete GPU (OpenVINO GPU plugin)
    OTHER_GPU = "other_gpu"  # a GPU no runtime here has a dedicated provider for (Mali, Adreno...)
    EDGETPU = "edgetpu"  # Google Coral Edge TPU
    APPLE_NPU = "apple_npu"  # Apple Neural Engine (Core ML)
    OTHER_NPU = "other_npu"


class Arch(str, Enum):
    X86_64 = "x86_64"
    AARCH64 = "aarch64"
    ARMV7L = "armv7l"


class CpuVendor(str, Enum):
    """CPU vendor of a target, checked against the ``cpu`` string the agent reports."""

    ARM = "arm"  # Arm-licensed cores (Cortex-A, Carmel, Neoverse) in Pi, Jetson, Coral and phones
    INTEL = "intel"
    AMD = "amd"
    APPLE = "apple"


class PowerSensor(str, Enum):
    """How a board reports power: decides which energy reader the agent uses."""

    NONE = "none"
    INA3221 = "ina3221"  # Jetson on-module INA3221 rails (iio or hwmon layout)
    RAPL = "rapl"  # Intel RAPL energy counters under /sys/class/powercap
    RPI5_PMIC = "rpi5_pmic"  # Raspberry Pi 5 `vcgencmd pmic_read_adc`
    HWMON = "hwmon"  # generic hwmon power*_input


class Bound(str, Enum):
    """Which roofline limit bounds a model on a target."""

    COMPUTE = "compute"
    MEMORY = "memory"
