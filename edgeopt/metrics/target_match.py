"""Was a run made on the hardware its target describes? The agent's machine facts against the target's.

A result judged against the wrong target's peak, power and FPS budget looks trustworthy and is not: a run of
``-t rpi5`` on an x86 workstation. Each mismatch is a one-line reason; the result carries them in
``target_mismatch``, every report shows them, and ``qualify`` fails unless the spec sets
``allow_target_mismatch: true``. The ``local`` target (``detect: true``) describes the machine it runs on and is
never mismatched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..enums import AcceleratorKind, Arch, CpuVendor
from ..targets.schema import Target

_ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "armv8l": "aarch64", "armv7": "armv7l"}
# Keywords of the agent's ``cpu`` string -> vendor; first match wins (Arm boards often report the SoC or core).
_VENDOR_KEYWORDS: tuple[tuple[CpuVendor, tuple[str, ...]], ...] = (
    (CpuVendor.INTEL, ("intel",)),
    (CpuVendor.AMD, ("amd", "ryzen", "epyc")),
    (CpuVendor.APPLE, ("apple",)),
    (CpuVendor.ARM, ("cortex", "arm", "neoverse", "carmel", "denver", "bcm2", "aarch64")),
)
# Accelerator kinds the agent can see evidence of (environment["accelerators"]).
_DETECTABLE = {AcceleratorKind.NVIDIA_GPU, AcceleratorKind.EDGETPU, AcceleratorKind.INTEL_GPU,
               AcceleratorKind.APPLE_NPU}


def cpu_vendor(cpu: str) -> CpuVendor | None:
    """The vendor a CPU model string names, or None when it names none edgeopt knows."""
    text = cpu.lower()
    for vendor, keywords in _VENDOR_KEYWORDS:
        if any(k in text for k in keywords):
            return vendor
    return None


def target_mismatch(target: Target, environment: Mapping[str, Any]) -> list[str]:
    """Why the machine the agent ran on is not ``target`` (empty when it matches or cannot be told apart).

    Args:
        target: the target the result is judged against.
        environment: the agent's machine facts (``machine``, ``cpu``, ``cores``, ``accelerators``).

    Returns:
        One reason per mismatch: architecture, CPU vendor, core count (under half or over twice the target's),
        an accelerator the machine shows no sign of.
    """
    if target.detect:
        return []
    reasons: list[str] = []
    machine = str(environment.get("machine") or "").lower()
    machine = _ARCH_ALIASES.get(machine, machine)
    if machine and machine != target.arch.value and not _compatible(machine, target.arch):
        reasons.append(f"architecture: the device is {machine}, target {target.name} is {target.arch.value}")
    vendor = cpu_vendor(str(environment.get("cpu") or ""))
    if target.cpu_vendor is not None and vendor is not None and vendor is not target.cpu_vendor:
        reasons.append(f"CPU vendor: the device's CPU is {vendor.value} ({environment.get('cpu')}), "
                       f"target {target.name} has a {target.cpu_vendor.value} CPU")
    cores = environment.get("cores")
    if target.cpu_cores is not None and isinstance(cores, int) and cores > 0 and (
            cores * 2 < target.cpu_cores or cores > target.cpu_cores * 2):
        reasons.append(f"cores: the device has {cores} CPUs, target {target.name} has {target.cpu_cores}")
    seen = environment.get("accelerators")
    kind = target.accelerator_kind
    if isinstance(seen, list) and kind in _DETECTABLE and kind.value not in seen:
        reasons.append(f"accelerator: target {target.name} has a {kind.value} accelerator and the device shows "
                       f"none ({', '.join(seen) or 'no accelerator found'})")
    return reasons


def _compatible(machine: str, arch: Arch) -> bool:
    """A 64-bit Arm device can run a 32-bit Arm target's software; nothing else crosses."""
    return arch is Arch.ARMV7L and machine == "aarch64"


def mismatch_note(reasons: list[str], target: str) -> str:
    """The loud one-line warning every report prints for a mismatched run."""
    return (f"TARGET MISMATCH: this run was not made on {target} hardware ({'; '.join(reasons)}); its verdicts, "
            f"% of peak and energy estimate use {target}'s numbers and do not describe that device")
