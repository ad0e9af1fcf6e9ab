"""Closed vocabularies. Strings a user writes in YAML or on the command line are parsed into these.

Runtime and format names are open (a plug-in adds its own): they are registry-checked strings in
:mod:`edgeopt.names` (``RuntimeName``, ``ModelFormat``), not enums.
"""

from __future__ import annotations

from enum import Enum


class Precision(str, Enum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"
    INT4 = "int4"


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
