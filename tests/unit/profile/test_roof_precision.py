"""Issue 23 item 11: a layer's compute roof is the peak of the precision its kernel ran in. A bf16 convolution on an
AMX Xeon was shown at 120-135 % of a roof that was the FP32 peak; the local target's peaks now follow the CPU flags
(AVX-512 FP32, AVX512_BF16 x2 / AMX-BF16 x16, VNNI x4 / AMX-INT8 x32) and the profile says which peak it used."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.enums import Bound, Precision
from edgeopt.profile.graph import load_graph
from edgeopt.profile.join import join_layers, roof_peaks_note
from edgeopt.targets.detect import detect_local
from edgeopt.targets.schema import Target
from edgeopt_agent.runtimes.layer_events import layer_event
from tests.profile_models import big_conv_model

BASE = "fpu sse sse2 avx avx2 fma f16c avx512f avx512bw avx512vl avx512_vnni"
AMX = BASE + " avx512_bf16 amx_tile amx_bf16 amx_int8"


def _target(tmp_path: Path, flags: str) -> Target:
    """A detected local target on a fake 2-core 3.2 GHz Xeon (FP32 peak 0.4096 TFLOP/s), a stated 1 TB/s bandwidth
    so that the big convolution sits under its compute roof."""
    proc = tmp_path / flags.split()[-1] / "proc"
    proc.mkdir(parents=True)
    (proc / "cpuinfo").write_text("".join(
        f"processor\t: {n}\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\ncpu MHz\t\t: 3200.000\n"
        f"physical id\t: 0\ncore id\t\t: {n}\nflags\t\t: {flags}\n\n" for n in range(2)))
    base = Target.model_validate({
        "name": "local", "description": "placeholder", "arch": "x86_64", "accelerator": "cpu", "runtimes": ["openvino"],
        "precisions": ["fp32"], "detect": True, "memory_bandwidth_gbps": {"value": 1000, "source": "test"}})
    return detect_local(base, proc_dir=proc, machine="x86_64")


def _conv(precision: str, us: float) -> dict:
    event = layer_event("big_conv/WithoutBiases", op_type="Convolution", impl="brgconv_avx512_amx", provider="CPU",
                        precision=precision, duration_us=us, original_names=["big_conv"])
    return {**event, "median_us": us, "p90_us": us, "mean_us": us, "share": 1.0, "calls": 1, "order": 0}


def test_the_local_peaks_follow_the_cpu_flags(tmp_path: Path) -> None:
    amx = _target(tmp_path, AMX)
    fp32 = amx.peak_ops_per_s(Precision.FP32)[0]
    assert fp32 == pytest.approx(0.4096e12)
    bf16, source = amx.peak_ops_per_s(Precision.BF16)
    assert bf16 == pytest.approx(16 * fp32) and source.startswith("peak_bf16_tflops") and "AMX-BF16" in source
    assert amx.peak_ops_per_s(Precision.INT8)[0] == pytest.approx(32 * fp32)
    avx = _target(tmp_path, BASE + " avx512_bf16")
    assert avx.peak_ops_per_s(Precision.BF16)[0] == pytest.approx(2 * fp32)
    assert avx.peak_ops_per_s(Precision.INT8)[0] == pytest.approx(4 * fp32)  # VNNI, no AMX
    plain = _target(tmp_path, BASE)
    assert plain.peak_bf16_tflops is None and plain.peak_ops_per_s(Precision.BF16)[0] == pytest.approx(fp32)


def test_a_bf16_layer_is_judged_against_the_bf16_peak(tmp_path: Path) -> None:
    graph = load_graph(big_conv_model(tmp_path / "big.onnx"))
    target = _target(tmp_path, AMX)
    # 0.4 ms for 231.6 M ops: 579 GOP/s, 141 % of the 409.6 GOP/s FP32 peak; 8.8 % of the bf16 (AMX) one
    (bf16,), _ = join_layers([_conv("bf16", 400.0)], graph, target)
    assert bf16.bound is Bound.COMPUTE and bf16.achieved_gops == pytest.approx(579, rel=0.01)
    assert bf16.roof_gops == pytest.approx(16 * 409.6, rel=1e-3) and bf16.roof_fraction < 0.1
    (fp32,), _ = join_layers([_conv("fp32", 4000.0)], graph, target)
    assert fp32.roof_gops == pytest.approx(409.6, rel=1e-3) and 0.1 < fp32.roof_fraction < 1
    note = roof_peaks_note([bf16, fp32], target)
    assert note is not None and "precision each layer ran in" in note
    assert "bf16 layers 6,554 GOP/s (peak_bf16_tflops" in note and "fp32 layers 410 GOP/s (peak_fp32_tflops" in note
