"""Fill a ``detect: true`` target (the ``local`` one) with this machine's numbers, each marked as measured,
estimated or assumed, so a roofline built on them says how far to trust it."""

from __future__ import annotations

from pathlib import Path

from .cpuinfo import PROC_DIR, CpuFacts, cpu_facts
from .schema import Sourced, Target

__all__ = ["CpuFacts", "cpu_facts", "detect_local", "memory_total_gb"]

# Used only when no clock can be read at all (some VMs and containers); flagged in the source note.
ASSUMED_MHZ = 2000.0
ASSUMED_BANDWIDTH_GBPS = 20.0
ASSUMED_WATTS_PER_CORE = 10.0
_OVERRIDE = "override with a targets YAML"


def detect_local(
    base: Target,
    *,
    proc_dir: Path = PROC_DIR,
    sys_dir: Path | None = None,
    machine: str | None = None,
) -> Target:
    """Return a copy of ``base`` filled from this machine.

    ``arch`` and ``description`` always come from the machine. A hardware number the YAML already states is
    kept, so a user target with ``detect: true`` can pin, say, a measured memory bandwidth; missing numbers
    are filled with measurements (memory size) or estimates (peak rates, bandwidth, power).

    Args:
        base: the target as loaded from YAML.
        proc_dir: root of the proc file system; tests point it at fake files.
        sys_dir: root of sysfs; default: the ``sys`` next to ``proc_dir``.
        machine: ``platform.machine()`` value to use; default: this machine's.

    Returns:
        A validated copy of ``base`` with the detected fields set.

    Raises:
        TargetError: the machine's architecture is not one edgeopt targets.
    """
    facts = cpu_facts(proc_dir, sys_dir, machine)
    fp32 = _peak_fp32(facts)
    filled: dict[str, Sourced | None] = {
        "peak_fp32_tflops": fp32,
        "peak_int8_tops": _peak_int8(facts, fp32),
        "peak_bf16_tflops": _peak_bf16(facts, fp32),
        "memory_gb": memory_total_gb(proc_dir),
        "memory_bandwidth_gbps": Sourced(
            value=ASSUMED_BANDWIDTH_GBPS, source=f"assumption: not measured; {_OVERRIDE}"
        ),
        "tdp_w": Sourced(
            value=facts.physical_cores * ASSUMED_WATTS_PER_CORE,
            source=f"assumption: {ASSUMED_WATTS_PER_CORE:g} W x {facts.physical_cores} physical cores; "
            f"not measured; {_OVERRIDE}",
        ),
    }
    data = base.model_dump()
    data.update({key: value for key, value in filled.items() if getattr(base, key) is None})
    data["arch"] = facts.arch
    data["description"] = f"local: {facts.model}, {facts.cores} cores"
    return Target.model_validate(data)


def memory_total_gb(proc_dir: Path = PROC_DIR) -> Sourced | None:
    """Installed memory from ``MemTotal`` in ``/proc/meminfo``, in GiB (as datasheets count GB), or None."""
    try:
        text = (proc_dir / "meminfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "MemTotal:" and parts[1].isdigit() and int(parts[1]) > 0:
            return Sourced(value=round(int(parts[1]) / 1024**2, 2), source="measured: /proc/meminfo MemTotal")
    return None


def _peak_fp32(facts: CpuFacts) -> Sourced:
    mhz, mhz_source = (facts.mhz, facts.mhz_source) if facts.mhz else (ASSUMED_MHZ, "assumed, no clock found")
    ghz = mhz / 1000.0
    flop = facts.flop_per_cycle_fp32
    tflops = facts.physical_cores * ghz * flop / 1000.0
    return Sourced(
        value=_round(tflops),
        source=f"estimate: {facts.physical_cores} physical cores x {ghz:.2f} GHz ({mhz_source}) "
        f"x {flop} FLOP/cycle ({facts.simd}, 2 FMA units)",
    )


# AMX per core and cycle: one tile multiply (16x16 output, K = 32 bf16 / 64 int8 pairs) per 16 cycles = 1024 BF16
# FLOP or 2048 INT8 ops; AVX-512 FP32 with two FMA units does 64 FLOP (the FP32 peak's FLOP/cycle).
AMX_BF16_FACTOR = 16
AMX_INT8_FACTOR = 32


def _peak_bf16(facts: CpuFacts, fp32: Sourced) -> Sourced | None:
    """BF16 peak: AMX tiles (x16 the AVX-512 FP32 rate), AVX512_BF16 dot products (x2), else none (the FP32 rate
    then applies: a CPU without BF16 arithmetic converts to FP32)."""
    if "amx_bf16" in facts.flags and "amx_tile" in facts.flags:
        factor, why = AMX_BF16_FACTOR, "AMX-BF16 tiles, 1024 FLOP/cycle/core"
    elif "avx512_bf16" in facts.flags:
        factor, why = 2, "AVX512_BF16 vdpbf16ps, two bf16 products per fp32 lane"
    else:
        return None
    return Sourced(value=_round(fp32.value * factor), source=f"estimate: FP32 peak x {factor} ({why})")


def _peak_int8(facts: CpuFacts, fp32: Sourced) -> Sourced:
    if facts.has_amx:
        factor, why = AMX_INT8_FACTOR, "AMX-INT8 tiles, 2048 ops/cycle/core"
    elif "avx512_vnni" in facts.flags:
        factor, why = 4, "AVX-512 VNNI"
    elif "avx_vnni" in facts.flags:
        factor, why = 4, "AVX-VNNI"
    elif "asimddp" in facts.flags:
        factor, why = 4, "Arm dot product (asimddp)"
    elif "avx2" in facts.flags:
        factor, why = 2, "AVX2 int8 multiply-add, no VNNI"
    elif "neon" in facts.flags:
        factor, why = 2, "NEON int8 multiply-add, no dot product"
    else:
        factor, why = 1, "no int8 SIMD dot product"
    return Sourced(value=_round(fp32.value * factor), source=f"estimate: FP32 peak x {factor} ({why})")


def _round(value: float) -> float:
    """Four decimals (0.1 GFLOPS resolution) but never zero, which :class:`Sourced` rejects."""
    return max(round(value, 4), 1e-4)
