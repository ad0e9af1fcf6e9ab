"""Local detection: CPU facts from real and fake /proc files, and the numbers they turn into."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

import pytest

from edgeopt.enums import Arch, Precision
from edgeopt.errors import TargetError
from edgeopt.names import RuntimeName
from edgeopt.targets import Sourced, Target, cpu_facts, detect_local
from edgeopt.targets.cpuinfo import normalize_arch
from edgeopt.targets.detect import memory_total_gb

XEON_FLAGS = "fpu sse sse2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_vnni hypervisor"
PI5_FEATURES = (
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp"
)


def _x86_block(n: int, core: int, flags: str, mhz: str = "2000.000") -> str:
    return (
        f"processor\t: {n}\nvendor_id\t: GenuineIntel\n"
        "model name\t: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz\n"
        f"cpu MHz\t\t: {mhz}\nphysical id\t: 0\ncore id\t\t: {core}\nflags\t\t: {flags}\n"
    )


def _fake_root(tmp_path: Path, cpuinfo: str, max_khz: int | None = None, meminfo: str | None = None) -> Path:
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "cpuinfo").write_text(cpuinfo)
    if meminfo is not None:
        (proc / "meminfo").write_text(meminfo)
    if max_khz is not None:
        freq = tmp_path / "sys" / "devices" / "system" / "cpu" / "cpu0" / "cpufreq"
        freq.mkdir(parents=True)
        (freq / "cpuinfo_max_freq").write_text(f"{max_khz}\n")
    return proc


def _base(**extra: object) -> Target:
    data: dict[str, object] = {
        "name": "local",
        "description": "placeholder",
        "arch": "x86_64",
        "accelerator": "cpu",
        "runtimes": [RuntimeName.ONNXRUNTIME],
        "precisions": [Precision.FP32],
        "detect": True,
    }
    data.update(extra)
    return Target.model_validate(data)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_local_detection_on_this_machine() -> None:
    facts = cpu_facts()
    target = detect_local(_base())
    assert facts.cores == os.cpu_count()
    assert target.arch is normalize_arch(platform.machine())
    assert f"{facts.cores} cores" in target.description
    assert target.memory_gb is not None and target.memory_gb.source.startswith("measured: /proc/meminfo")
    assert target.peak_fp32_tflops is not None and target.peak_fp32_tflops.source.startswith("estimate:")
    assert target.peak_ops_per_s(Precision.INT8) is not None


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86_64 host only")
def test_local_arch_is_x86_64_here() -> None:
    assert detect_local(_base()).arch is Arch.X86_64


def test_fake_avx512_vnni_cpu(tmp_path: Path) -> None:
    cpuinfo = "\n".join(_x86_block(n, n, XEON_FLAGS) for n in range(2))
    proc = _fake_root(tmp_path, cpuinfo, max_khz=3_200_000, meminfo="MemTotal:       16777216 kB\n")
    facts = cpu_facts(proc, machine="x86_64")
    assert facts.has_vnni and not facts.has_amx
    assert facts.flop_per_cycle_fp32 == 64
    assert (facts.cores, facts.physical_cores, facts.mhz) == (2, 2, 3200.0)
    assert facts.mhz_source == "sysfs cpuinfo_max_freq"
    assert "hypervisor" not in facts.flags and "avx512_vnni" in facts.flags

    target = detect_local(_base(), proc_dir=proc, machine="x86_64")
    assert target.peak_fp32_tflops == Sourced(value=0.4096, source=target.peak_fp32_tflops.source)
    assert "2 physical cores x 3.20 GHz" in target.peak_fp32_tflops.source
    assert "64 FLOP/cycle (AVX-512" in target.peak_fp32_tflops.source
    assert target.peak_int8_tops is not None and target.peak_int8_tops.value == pytest.approx(4 * 0.4096)
    assert "VNNI" in target.peak_int8_tops.source
    assert target.memory_gb is not None and target.memory_gb.value == 16.0
    assert target.memory_bandwidth_gbps is not None
    assert target.memory_bandwidth_gbps.source.startswith("assumption: not measured")
    assert (
        target.tdp_w is not None and target.tdp_w.value == 20 and target.tdp_w.source.startswith("assumption")
    )
    assert target.description == "local: Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz, 2 cores"


def test_fake_avx2_cpu_with_smt_and_no_sysfs(tmp_path: Path) -> None:
    flags = "fpu sse sse2 avx avx2 fma"
    cpuinfo = "\n".join(_x86_block(n, n % 2, flags, mhz="2500.000") for n in range(4))
    facts = cpu_facts(_fake_root(tmp_path, cpuinfo), machine="x86_64")
    assert not facts.has_vnni
    assert (facts.cores, facts.physical_cores) == (4, 2)
    assert facts.flop_per_cycle_fp32 == 32
    assert (facts.mhz, facts.mhz_source) == (2500.0, "/proc/cpuinfo cpu MHz")
    target = detect_local(_base(), proc_dir=tmp_path / "proc", machine="x86_64")
    assert target.peak_fp32_tflops is not None and target.peak_fp32_tflops.value == pytest.approx(0.16)
    assert target.peak_int8_tops is not None and target.peak_int8_tops.value == pytest.approx(0.32)
    assert target.memory_gb is None  # no meminfo in the fake tree


@pytest.mark.parametrize(("flags", "expected"), [("avx", 16), ("sse sse2", 8), ("avx avx2", 16)])
def test_x86_flop_per_cycle_levels(tmp_path: Path, flags: str, expected: int) -> None:
    facts = cpu_facts(_fake_root(tmp_path, _x86_block(0, 0, flags)), machine="x86_64")
    assert facts.flop_per_cycle_fp32 == expected


def test_clock_from_model_name_and_assumed(tmp_path: Path) -> None:
    facts = cpu_facts(_fake_root(tmp_path, _x86_block(0, 0, "avx2 fma", mhz="")), machine="x86_64")
    assert (facts.mhz, facts.mhz_source) == (2000.0, "model name")
    (tmp_path / "proc" / "cpuinfo").write_text("processor\t: 0\nflags\t: avx2 fma\n")
    target = detect_local(_base(), proc_dir=tmp_path / "proc", machine="x86_64")
    assert target.peak_fp32_tflops is not None and "assumed" in target.peak_fp32_tflops.source


def test_fake_raspberry_pi5(tmp_path: Path) -> None:
    cpuinfo = "\n".join(
        f"processor\t: {n}\nBogoMIPS\t: 108.00\nFeatures\t: {PI5_FEATURES}\nCPU part\t: 0xd0b\n"
        for n in range(4)
    )
    proc = _fake_root(tmp_path, cpuinfo, max_khz=2_400_000)
    (proc / "device-tree").mkdir()
    (proc / "device-tree" / "model").write_text("Raspberry Pi 5 Model B Rev 1.0\x00")
    facts = cpu_facts(proc, machine="aarch64")
    assert facts.arch is Arch.AARCH64
    assert facts.model == "Raspberry Pi 5 Model B Rev 1.0 (Cortex-A76)"
    assert "neon" in facts.flags and "asimddp" in facts.flags
    assert not facts.has_vnni and facts.has_int8_dot
    assert facts.flop_per_cycle_fp32 == 16
    target = detect_local(_base(), proc_dir=proc, machine="aarch64")
    assert target.arch is Arch.AARCH64
    assert target.peak_fp32_tflops is not None and target.peak_fp32_tflops.value == pytest.approx(0.1536)
    assert target.peak_int8_tops is not None and target.peak_int8_tops.value == pytest.approx(4 * 0.1536)


def test_stated_numbers_are_kept(tmp_path: Path) -> None:
    bandwidth = Sourced(value=41.5, source="measured: STREAM triad on this box")
    proc = _fake_root(tmp_path, _x86_block(0, 0, "avx2 fma"))
    target = detect_local(_base(memory_bandwidth_gbps=bandwidth), proc_dir=proc, machine="x86_64")
    assert target.memory_bandwidth_gbps == bandwidth
    assert target.peak_fp32_tflops is not None


def test_unknown_arch_is_a_target_error(tmp_path: Path) -> None:
    proc = _fake_root(tmp_path, _x86_block(0, 0, "avx2"))
    with pytest.raises(TargetError, match="riscv64.*targets YAML"):
        cpu_facts(proc, machine="riscv64")


@pytest.mark.parametrize(
    ("machine", "arch"), [("AMD64", Arch.X86_64), ("arm64", Arch.AARCH64), ("armv7l", Arch.ARMV7L)]
)
def test_normalize_arch_aliases(machine: str, arch: Arch) -> None:
    assert normalize_arch(machine) is arch


def test_memory_total_gb_handles_missing_and_bad_files(tmp_path: Path) -> None:
    assert memory_total_gb(tmp_path) is None
    (tmp_path / "meminfo").write_text("MemTotal: lots kB\n")
    assert memory_total_gb(tmp_path) is None
