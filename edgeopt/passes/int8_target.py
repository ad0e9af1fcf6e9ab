"""INT8 settings the target decides: activation type and symmetry, and ``reduce_range``.

Measured on this project's AVX2 machine (AMD EPYC Zen 3, no VNNI; docs/passes.md has the numbers): U8
activations with S8 per-channel weights is onnxruntime's fast u8s8 path, S8 activations ran 2.5x slower on a
detector, and without ``reduce_range`` (7-bit weights) the u8s8 AVX2 kernel's 16-bit accumulation saturates:
per-channel INT8 then lost 2.7 accuracy points. VNNI CPUs and Arm dot-product cores do not saturate, and
TensorRT wants symmetric S8/S8 QDQ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..enums import Arch
from ..registry import get_runtime
from ..targets.cpuinfo import CpuFacts, cpu_facts
from ..targets.schema import Target


class QuantTypeName(str, Enum):
    """8-bit integer types onnxruntime quantizes to."""

    U8 = "u8"
    S8 = "s8"


@dataclass(frozen=True)
class Int8Defaults:
    """What the target chooses for INT8, with the reason recorded in the artifact report."""

    activation_type: QuantTypeName
    activation_symmetric: bool
    reduce_range: bool
    reason: str


def int8_defaults(target: Target, facts: Callable[[], CpuFacts] = cpu_facts) -> Int8Defaults:
    """The INT8 defaults for ``target``; ``facts`` reads this machine's CPU for a ``detect: true`` target."""
    preferred = get_runtime(target.runtimes[0]) if target.runtimes else None
    if preferred is not None and preferred.int8_symmetric:  # the runtime the target prefers decides (TensorRT)
        return Int8Defaults(QuantTypeName.S8, True, False, f"{preferred.display_name} target: symmetric S8/S8 QDQ")
    if target.arch is Arch.X86_64:
        if target.detect:
            cpu = facts()
            if cpu.has_vnni:
                return Int8Defaults(QuantTypeName.U8, False, False, f"local x86 CPU with VNNI ({cpu.model})")
            return Int8Defaults(
                QuantTypeName.U8,
                False,
                True,
                f"local x86 CPU without VNNI ({cpu.model}): reduce_range avoids u8s8 saturation",
            )
        return Int8Defaults(
            QuantTypeName.U8,
            False,
            True,
            f"x86 target '{target.name}' does not state VNNI: reduce_range is safe on any x86 CPU; "
            "set reduce_range: false for a VNNI CPU",
        )
    return Int8Defaults(QuantTypeName.U8, False, False, f"{target.arch.value} target: no u8s8 saturation on Arm")
