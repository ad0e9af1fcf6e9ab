"""Facts about the host CPU from ``/proc`` and ``/sys``: model, cores, clock and the ISA flags that matter.

Host-side twin of the device agent's ``environment`` module (the host never imports the agent for this). The
``/proc`` and ``/sys`` roots are parameters so tests can point them at fake files.
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..enums import Arch
from ..errors import TargetError

PROC_DIR = Path("/proc")

# ISA features that change inference speed; the full flag list is noise.
# fmt: off
INTERESTING_FLAGS = frozenset({
    "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",  # x86 FP32 SIMD width
    "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",  # x86 INT8 / 16-bit dot products
    "amx_tile", "amx_int8", "amx_bf16",  # Intel AMX tiles
    "neon", "asimd", "asimdhp", "asimddp", "i8mm", "bf16", "sve", "sve2",  # Arm
})
# fmt: on

_ARCH_ALIASES = {
    "x86_64": Arch.X86_64,
    "amd64": Arch.X86_64,
    "aarch64": Arch.AARCH64,
    "arm64": Arch.AARCH64,
    "armv7l": Arch.ARMV7L,
    "armv7": Arch.ARMV7L,
    "armhf": Arch.ARMV7L,
}

# Arm "CPU part" ids seen on edge boards, so an aarch64 /proc/cpuinfo (which has no model name) reads well.
_ARM_PARTS = {
    "0xd03": "Cortex-A53",
    "0xd04": "Cortex-A35",
    "0xd05": "Cortex-A55",
    "0xd07": "Cortex-A57",
    "0xd08": "Cortex-A72",
    "0xd09": "Cortex-A73",
    "0xd0a": "Cortex-A75",
    "0xd0b": "Cortex-A76",
    "0xd0c": "Neoverse-N1",
    "0xd0d": "Cortex-A77",
    "0xd40": "Neoverse-V1",
    "0xd41": "Cortex-A78",
    "0xd42": "Cortex-A78AE",
    "0xd49": "Neoverse-N2",
    "0xd4f": "Neoverse-V2",
}


class CpuFacts(BaseModel):
    """What edgeopt knows about a CPU: enough to estimate its peak rates and to choose INT8 settings."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arch: Arch = Field(description="CPU architecture, normalized from platform.machine().")
    model: str = Field(description="CPU model name (or board + core name on Arm).")
    cores: int = Field(ge=1, description="Logical CPUs (hardware threads); equals os.cpu_count() on Linux.")
    physical_cores: int = Field(
        ge=1, description="Physical cores (logical CPUs when the topology is unknown)."
    )
    mhz: float | None = Field(None, gt=0, description="Maximum clock in MHz, None when no source has it.")
    mhz_source: str = Field(
        "unknown", description="Where the clock came from (sysfs, /proc/cpuinfo, model name)."
    )
    flags: tuple[str, ...] = Field((), description="Sorted subset of the ISA flags in INTERESTING_FLAGS.")

    @property
    def has_vnni(self) -> bool:
        """True when x86 VNNI (AVX-512 or AVX) is present: INT8 kernels then need no ``reduce_range``."""
        return "avx512_vnni" in self.flags or "avx_vnni" in self.flags

    @property
    def has_amx(self) -> bool:
        """True when Intel AMX tiles with INT8 support are present."""
        return "amx_tile" in self.flags and "amx_int8" in self.flags

    @property
    def has_int8_dot(self) -> bool:
        """True when the CPU has an INT8 dot-product instruction (x86 VNNI or Arm ``asimddp``)."""
        return self.has_vnni or "asimddp" in self.flags

    @property
    def simd(self) -> str:
        """Name of the widest FP32 SIMD level the FLOP/cycle estimate is based on."""
        if self.arch is Arch.X86_64:
            if "avx512f" in self.flags:
                return "AVX-512"
            if "avx2" in self.flags and "fma" in self.flags:
                return "AVX2+FMA"
            if "avx" in self.flags:
                return "AVX"
            return "SSE"
        if self.arch is Arch.AARCH64 and "neon" in self.flags:
            return "NEON (aarch64)"
        return "NEON (armv7)" if "neon" in self.flags else "scalar"

    @property
    def flop_per_cycle_fp32(self) -> int:
        """Peak FP32 FLOP per cycle per core for :attr:`simd` (2 FMA units assumed; an upper bound)."""
        return {"AVX-512": 64, "AVX2+FMA": 32, "AVX": 16, "NEON (aarch64)": 16}.get(self.simd, 8)


def normalize_arch(machine: str) -> Arch:
    """Map a ``platform.machine()`` string onto :class:`Arch`.

    Raises:
        TargetError: the architecture is not one edgeopt targets.
    """
    arch = _ARCH_ALIASES.get(machine.strip().lower())
    if arch is None:
        known = ", ".join(a.value for a in Arch)
        raise TargetError(
            f"cannot detect the local target: CPU architecture '{machine}' is not one of {known}; "
            "describe this machine in a targets YAML instead (--targets-dir DIR)"
        )
    return arch


def cpu_facts(proc_dir: Path = PROC_DIR, sys_dir: Path | None = None, machine: str | None = None) -> CpuFacts:
    """Read the CPU facts of this machine (or of fake ``/proc`` and ``/sys`` trees in tests).

    Args:
        proc_dir: root of the proc file system (``cpuinfo`` and ``device-tree/model`` are read).
        sys_dir: root of sysfs for ``cpufreq`` max clocks; default: the ``sys`` next to ``proc_dir``.
        machine: ``platform.machine()`` value to use; default: this machine's.

    Returns:
        The facts; missing pieces fall back to ``os.cpu_count()`` and ``platform`` values.

    Raises:
        TargetError: the architecture is not one of :class:`Arch`.
    """
    sys_root = proc_dir.parent / "sys" if sys_dir is None else sys_dir
    arch = normalize_arch(platform.machine() if machine is None else machine)
    blocks = _cpuinfo_blocks(_read(proc_dir / "cpuinfo") or "")
    first = blocks[0] if blocks else {}
    cores = sum(1 for b in blocks if "processor" in b) or os.cpu_count() or 1
    pairs = {(b.get("physical id", "0"), b["core id"]) for b in blocks if "core id" in b}
    raw_flags = set((first.get("flags") or first.get("Features") or "").split())
    if arch is Arch.AARCH64 and "asimd" in raw_flags:
        raw_flags.add("neon")  # Advanced SIMD is NEON on aarch64; the kernel only says "asimd"
    mhz, mhz_source = _max_mhz(blocks, sys_root)
    return CpuFacts(
        arch=arch,
        model=_model_name(first, proc_dir),
        cores=cores,
        physical_cores=len(pairs) or cores,
        mhz=mhz,
        mhz_source=mhz_source,
        flags=tuple(sorted(raw_flags & INTERESTING_FLAGS)),
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _cpuinfo_blocks(text: str) -> list[dict[str, str]]:
    """Split /proc/cpuinfo into one dict per blank-line separated block (first value of a key wins)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in [*text.splitlines(), ""]:
        key, sep, value = line.partition(":")
        if not line.strip():
            if current:
                blocks.append(current)
            current = {}
        elif sep:
            current.setdefault(key.strip(), value.strip())
    return blocks


def _model_name(first: dict[str, str], proc_dir: Path) -> str:
    if first.get("model name"):
        return first["model name"]
    board = (_read(proc_dir / "device-tree" / "model") or "").strip("\x00 \n")
    core = _ARM_PARTS.get(first.get("CPU part", "").lower(), "")
    named = " ".join(p for p in (board, f"({core})" if board and core else core) if p)
    return named or first.get("Hardware") or platform.processor() or "unknown CPU"


def _max_mhz(blocks: list[dict[str, str]], sys_root: Path) -> tuple[float | None, str]:
    """Highest clock: cpufreq max (true turbo) first, then cpuinfo MHz, then the '@ 2.40GHz' in the model."""
    khz = []
    for path in sorted((sys_root / "devices" / "system" / "cpu").glob("cpu[0-9]*/cpufreq/cpuinfo_max_freq")):
        text = (_read(path) or "").strip()
        if text.isdigit() and int(text) > 0:
            khz.append(int(text))
    if khz:
        return max(khz) / 1000.0, "sysfs cpuinfo_max_freq"
    mhz = [_float(b.get("cpu MHz", "")) for b in blocks]
    if any(mhz):
        return max(m for m in mhz if m), "/proc/cpuinfo cpu MHz"
    match = re.search(r"@\s*([\d.]+)\s*GHz", blocks[0].get("model name", "") if blocks else "")
    if match and _float(match.group(1)):
        return float(match.group(1)) * 1000.0, "model name"
    return None, "unknown"


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        return 0.0
    return value if value > 0 else 0.0
