"""``edgeopt profile`` end to end on real onnxruntime and OpenVINO sessions: the layer known to be heavy comes
first, names map back to the ONNX graph, fp32 vs int8 flags the layers whose precision changed, runtimes without a
profiler are exit 2 naming those with one, and ``--json`` prints only JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import onnx
import pytest

from edgeopt.profile import ProfileUnsupportedError, compare_profiles, profile, profile_vs
from edgeopt.profile.schema import Headline, KernelPrecision, LayerOrigin, ProfileComparison, ProfileResult
from edgeopt.reports.profile_html import profile_section
from tests.cli_here import edgeopt_here
from tests.profile_models import BIG, TINY, big_conv_model, quantize_qdq

RUNTIMES = ["onnxruntime", "openvino"]
CAN = "runtimes that can: onnxruntime, openvino, tensorrt"


def edgeopt(*args: str) -> subprocess.CompletedProcess[str]:
    """``edgeopt ARGS`` in this process (tests/cli_here.py: no interpreter start, ~1 CPU-s less each)."""
    return edgeopt_here(*args)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("profile-models")
    fp32 = big_conv_model(root / "big.onnx")
    return fp32, quantize_qdq(fp32, root / "big.int8.onnx")


@pytest.fixture(scope="module", params=RUNTIMES)
def pair(request: pytest.FixtureRequest, models: tuple[Path, Path]) -> tuple[ProfileResult, ProfileResult]:
    pytest.importorskip(request.param)
    # OpenVINO in f32 on every CPU: its default bf16 on AMX CPUs makes the conv so fast that a reorder can rank first
    precision = {"inference_precision": "f32"} if request.param == "openvino" else {}
    options = dict(runtime=request.param, iterations=12, warmup=3, runtime_options=precision)
    return profile(models[0], **options), profile(models[1], **options)


def test_the_big_conv_is_ranked_first_with_most_of_the_time(pair):
    fp32, _ = pair
    top = fp32.top(1)[0]
    # dominant, not necessarily a majority: on AMX CPUs OpenVINO runs the conv in bf16 tiles beside the reorders
    # and converts bf16 adds (shares of 0.43-0.49 seen on a Xeon with AMX)
    assert BIG in top.onnx_nodes and top.primary_op == "Conv" and top.share > 0.35
    assert top.flops == 2 * 64 * 64 * 9 * 56 * 56 + 64 * 56 * 56 and top.achieved_gops > 0 and top.bytes_moved > 0
    assert fp32.unprofiled_p50_ms > 0 and fp32.profiled_ms > 0 and fp32.overhead > 0
    assert fp32.per_op_type[0].op_type == "Conv" and fp32.per_op_type[0].share > 0.35
    assert fp32.settings.profiled_iterations == 12 and fp32.trace and fp32.runtime["version"]


def test_layer_names_map_back_to_the_onnx_graph(pair, models):
    fp32, int8 = pair
    for result, path in ((fp32, models[0]), (int8, models[1])):
        names = {n.name for n in onnx.load(str(path)).graph.node}
        covered = {n for layer in result.layers for n in layer.onnx_nodes}
        assert covered <= names and result.unmapped_onnx_nodes == []
        assert covered | set(result.unmapped_onnx_nodes) == names  # every node is covered by some layer
        assert all(layer.onnx_nodes == [] for layer in result.layers if layer.origin is LayerOrigin.INSERTED)
    assert set(TINY) - {"act"} <= {n for layer in int8.layers for n in layer.onnx_nodes}


def test_fp32_vs_int8_flags_the_layers_whose_precision_changed(pair):
    fp32, int8 = pair
    c = compare_profiles(fp32, int8)
    assert BIG in c.precision_changed
    row = next(r for r in c.layers if BIG in r.onnx_nodes)
    assert KernelPrecision(row.b_precision) is KernelPrecision.INT8 and KernelPrecision(row.a_precision).is_float
    assert row.b_quantized_in_onnx and not row.b_float_kernel
    assert any(e.side == "b" and e.kind in ("quantize", "inserted") for e in c.extra)  # QuantizeLinear of x at least
    assert c.speedup > 0 and c.explanation and "B is" in c.explanation[0]
    assert ProfileComparison.model_validate_json(c.model_dump_json()) == c


def test_runtimes_without_a_profiler_are_refused_with_the_list(models):
    for runtime, why in (("tflite", "no per-op profiler"), ("coreml", "no per-layer times"), ("null", "no layers")):
        with pytest.raises(ProfileUnsupportedError, match=why) as info:
            profile(models[0], runtime=runtime)
        assert CAN in str(info.value) and info.value.exit_code == 2


def test_tensorrt_profiling_needs_an_nvidia_gpu(models):
    pytest.importorskip("tensorrt", reason="TensorRT's IProfiler path needs tensorrt, cuda-python and an NVIDIA GPU "
                                           "(a Jetson); none here")
    result = profile(models[0], runtime="tensorrt", iterations=10, warmup=2)
    assert BIG in result.top(1)[0].onnx_nodes


def test_cli_json_prints_only_json_and_writes_trace_and_report(models, tmp_path):
    trace, report = tmp_path / "trace.json", tmp_path / "report"
    # 2 headline rounds, not 5: this test checks the CLI's outputs; the rounds' statistics are
    # test_vs_with_the_int8_model_as_a_explains_a_and_gives_an_interval's
    p = edgeopt("profile", str(models[0]), "--vs", str(models[1]), "-n", "5", "--warmup", "1", "--rounds", "2",
                "--json", "--trace", str(trace), "--report-dir", str(report))
    assert p.returncode == 0, p.stderr
    c = ProfileComparison.model_validate(json.loads(p.stdout))  # stdout is one JSON document, nothing else
    assert c.a.model.path == str(models[0]) and BIG in c.precision_changed
    assert c.headline is not None and c.headline.rounds == 2
    events = json.loads(trace.read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {1, 2} and all(e["dur"] >= 0 for e in spans)
    assert any(BIG in e["args"].get("onnx_nodes", []) for e in spans)
    assert {f.name for f in report.iterdir()} == {"profile.json", "profile.html", "trace.json"}
    p = edgeopt("profile", str(models[0]), "-n", "3", "--warmup", "0", "--top", "3")
    assert p.returncode == 0 and "top 3 layers by time" in p.stdout and "per op type" in p.stdout, p.stderr


def test_cli_runtime_without_profiler_is_exit_2(models):
    p = edgeopt("profile", str(models[0]), "--runtime", "tflite", "--json")
    assert p.returncode == 2
    assert json.loads(p.stdout)["exit_code"] == 2 and CAN in p.stderr and "benchmark_model" in p.stderr


def test_node_times_for_the_int8_search(pair):
    """What the INT8 search reads: each ONNX node's part of its layer's time, fp32 vs int8, keyed by node name."""
    fp32, int8 = pair
    for result in (fp32, int8):
        times = result.node_times_ms()
        mapped = sum(x.median_ms for x in result.layers if x.executed and x.origin is LayerOrigin.ONNX)
        assert sum(times.values()) == pytest.approx(mapped)
        assert BIG in result.by_onnx_node()[BIG].onnx_nodes and times[BIG] > 0
    # FP32: the big conv dominates by construction. (INT8 makes it so cheap on a VNNI CPU that the Q/DQ layers and a
    # runtime's layout Transpose come close, so which is slowest there is left to the measurement.)
    fp32_times = fp32.node_times_ms()
    assert max(fp32_times, key=lambda n: fp32_times[n]) == BIG
    assert int8.node_times_ms()["x_QuantizeLinear"] > 0  # a Q/DQ node alone in its layer carries that layer's time
    assert int8.node_times_ms()["w_DequantizeLinear"] == 0  # fused into the convolution: its time is the Conv's


def _headline(speedup: float, low: float, high: float) -> Headline:
    return Headline(rounds=5, iterations_per_round=10, a_p50_ms=1.0, a_low_ms=0.9, a_high_ms=1.1,
                    b_p50_ms=1.0 / speedup, b_low_ms=0.9 / speedup, b_high_ms=1.1 / speedup, speedup=speedup,
                    speedup_low=low, speedup_high=high, paired=True, within_noise=low <= 1 <= high)


def test_vs_with_the_int8_model_as_a_explains_a_and_gives_an_interval(models):
    """Issue 23 item 10: A = INT8, B = FP32. The int8 sentences are about A (B has no INT8 layer), and the headline
    comes from interleaved rounds with an interval, "within noise" when it covers 1."""
    fp32, int8 = models
    c = profile_vs(int8, fp32, runtime="onnxruntime", iterations=5, warmup=1, rounds=3)
    h = c.headline
    assert h is not None and h.rounds == 3 and h.paired and h.a_p50_ms > 0 and h.b_p50_ms > 0
    assert h.speedup_low <= h.speedup <= h.speedup_high and c.speedup == h.speedup
    assert h.within_noise == (h.speedup_low <= 1 <= h.speedup_high)
    assert "3 interleaved rounds" in c.explanation[0]
    assert not any("B, the quantized side" in line for line in c.explanation)
    # The CPU sentences depend on the CPU's int8 dot-product flags, so both wordings are checked on every machine:
    # the measured profiles with their environment's flags set to a VNNI CPU's and to an AVX2-only one's.
    for vnni in (True, False):
        a, b = (_on_cpu(p, vnni) for p in (c.a, c.b))
        # the int8 side slower beyond noise: the blame goes to A's conversions, never to B (fp32 only)
        slower = compare_profiles(a, b, _headline(0.5, 0.4, 0.6))  # A/B latency 0.5: B (fp32) is the slow one
        assert not any("slowdown" in line or "is slower because" in line for line in slower.explanation)
        a_slower = compare_profiles(a, b, _headline(2.0, 1.8, 2.2))  # B 2x faster: A, the int8 side, is slow
        assert "B is 2.00x faster" in a_slower.explanation[0]
        noise = compare_profiles(a, b, _headline(1.02, 0.95, 1.10))
        assert "within noise" in noise.explanation[0] and "0.95-1.10x" in noise.explanation[0]
        flipped = compare_profiles(b, a, _headline(0.5, 0.4, 0.6))  # B = INT8 the other way round: B is named
        if vnni:
            assert any("outrun fp32" in line for line in slower.explanation)
            assert any("A, the quantized side, is slower" in line for line in a_slower.explanation)
            assert any("not faster beyond noise" in line for line in noise.explanation)
            assert any("B, the quantized side, is slower" in line for line in flipped.explanation)
        else:
            assert any("has no VNNI" in line and "eat into" in line for line in slower.explanation)
            assert any("has no VNNI" in line and "make the model slower" in line for line in a_slower.explanation)
            assert not any("quantized side" in line for line in a_slower.explanation + flipped.explanation)
    assert ProfileComparison.model_validate_json(c.model_dump_json()) == c


def _on_cpu(result, vnni: bool):  # noqa: ANN001, ANN202 - a ProfileResult with its CPU flags replaced
    flags = {f for f in result.environment.get("cpu_flags") or [] if f not in ("avx512_vnni", "avx_vnni", "amx_int8")}
    flags |= {"avx2", "fma"} | ({"avx512_vnni"} if vnni else set())
    env = {**result.environment, "machine": "x86_64", "cpu_flags": sorted(flags)}
    return result.model_copy(update={"environment": env})


def test_html_shows_the_roof_share_and_gops_per_op_type(pair):
    """Issue 23 item 11: the page shows what the terminal does: roof percentage per layer, GOP/s per op type."""
    fp32, _ = pair
    page = profile_section(fp32)
    ops = page.split("<h3>Per op type</h3>")[1]
    assert "<th>GOP/s</th>" in ops and f"<td>{fp32.per_op_type[0].achieved_gops:.1f}</td>" in ops
    top = fp32.top(1)[0]
    assert top.bound is not None and top.roof_fraction is not None
    assert f"<td>{top.bound.value} {top.roof_fraction:.0%}</td>" in page
    assert any("precision each layer ran in" in n for n in fp32.notes)


def test_openvino_bf16_layers_sit_under_the_bf16_roof(models):
    """On a CPU with BF16 (AVX512_BF16/AMX) OpenVINO runs the conv in bf16 by default; its roof is the bf16 peak."""
    pytest.importorskip("openvino")
    result = profile(models[0], runtime="openvino", iterations=5, warmup=1)
    bf16 = [x for x in result.layers if x.precision is KernelPrecision.BF16 and x.roof_fraction is not None]
    if not bf16:
        pytest.skip("OpenVINO ran no bf16 layer on this CPU (no AVX512_BF16/AMX)")
    conv = next(x for x in bf16 if BIG in x.onnx_nodes)
    assert conv.roof_fraction < 1.0  # was 1.2-1.35 against the FP32 peak
    assert any("bf16 layers" in n and "peak_bf16_tflops" in n for n in result.notes)
