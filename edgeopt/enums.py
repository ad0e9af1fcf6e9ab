"""Closed vocabularies. Strings a user writes in YAML or on the command line are parsed into these."""

from __future__ import annotations

from enum import Enum


class Precision(str, Enum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"
    INT4 = "int4"


class RuntimeName(str, Enum):
    ONNXRUNTIME = "onnxruntime"
    OPENVINO = "openvino"
    TFLITE = "tflite"
    TENSORRT = "tensorrt"
    COREML = "coreml"
    NULL = "null"


class Arch(str, Enum):
    X86_64 = "x86_64"
    AARCH64 = "aarch64"
    ARMV7L = "armv7l"


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
