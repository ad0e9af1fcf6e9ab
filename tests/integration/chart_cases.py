"""Synthetic inputs for every chart kind edgeopt draws, at a chosen number of points (issue 24).

Each case returns one inline ``<svg>`` string built by the real chart code from inputs shaped like the tool's
(long recipe and layer names, values spanning several decades, markers close together), so the label test and the
docs screenshots render exactly what a user would see, in milliseconds instead of a sweep or a profile.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from edgeopt.profile.schema import (
    KernelPrecision,
    LayerDelta,
    LayerOrigin,
    LayerRecord,
    ProfileComparison,
    ProfileResult,
)
from edgeopt.reports import profile_html, svg
from edgeopt.reports.charts.pareto import pareto as pareto_plain
from edgeopt.sweep.report import write_plot
from edgeopt.sweep.result import Level, Recommendation

RECIPES = ("fp32", "fp16", "bf16", "int8", "int4", "prune30-int8", "int8-search", "int8-per-channel-symmetric",
           "prune50-int8", "int8-search+float-head")
RUNTIMES = ("onnxruntime", "openvino", "tensorrt", "tflite")


SPEED = {"fp32": 40.0, "fp16": 26.0, "bf16": 27.0, "int8": 12.0, "int4": 9.0, "prune30-int8": 10.0,
         "int8-search": 13.0, "int8-per-channel-symmetric": 11.0, "prune50-int8": 8.0, "int8-search+float-head": 14.0}
RUNTIME_FACTOR = {"onnxruntime": 1.0, "openvino": 0.8, "tensorrt": 0.45, "tflite": 1.7}


def levels(n: int, *, fps: float | None = 30.0, min_retention: float = 0.99) -> list[Level]:
    """``n`` sweep levels: many on the retention-1.0 row (fp32, fp16 on every runtime), the faster ones losing
    accuracy, some failing, one no-change, three ranked with intervals (as :mod:`edgeopt.sweep.rank.recommend` does)."""
    out = []
    for i in range(n):
        recipe, runtime = RECIPES[i % len(RECIPES)], RUNTIMES[(i // len(RECIPES)) % len(RUNTIMES)]
        base = recipe
        if i >= len(RECIPES) * len(RUNTIMES):
            recipe = f"{recipe}-v{i}"
        lossless = base in ("fp32", "fp16", "bf16")
        lost = 0.003 * SPEED["fp32"] / SPEED[base] + 0.001 * ((i * 7) % 3) + 0.02 * (base == "int4")
        retention = 1.0 if lossless else round(1.0 - lost, 4)  # the faster, the more it loses
        latency = SPEED[base] * RUNTIME_FACTOR[runtime] * (1.0 + 0.04 * (i % 5))
        p99 = latency * 1.3
        ranked = i in (3, 6, 9)  # passing candidates, as the ranking picks them
        meets = retention >= min_retention
        budget = fps is None or p99 <= 1000.0 / fps
        out.append(Level(
            recipe=recipe, runtime=runtime, runtime_version="1.0", artifact=f"/out/{recipe}-{runtime}.onnx",
            size_bytes=int(25e6 / (1 + i % 4)), latency_ms=latency, latency_ms_p99=p99, memory_mb_peak=120.0,
            energy_mj=latency * 10.0, energy_source="estimate", metric="top1", metric_value=retention,
            retention=retention, meets_retention=meets, meets_budget=budget, passed=meets and budget, valid=True,
            cached=False, no_change=(i == 1),
            latency_ms_round_median=latency * 1.01 if ranked else None,
            latency_ms_low=latency * 0.95 if ranked else None, latency_ms_high=latency * 1.08 if ranked else None,
            latency_rounds=5 if ranked else 0))
    return out


def _recommendation(lvs: list[Level]) -> Recommendation | None:
    ok = [lv for lv in lvs if lv.passed and not lv.no_change]
    if not ok:
        return None
    b = min(ok, key=lambda lv: lv.latency_ms)
    return Recommendation(recipe=b.recipe, runtime=b.runtime, artifact=b.artifact, retention=b.retention,
                          latency_ms=b.latency_ms, size_bytes=b.size_bytes)


def pareto_svg(n: int, tmp: Path) -> str:
    """The sweep's ``pareto.svg`` of ``n`` levels, with the sweep's threshold, budget and recommendation when the
    chart code takes them."""
    lvs = levels(n)
    extra = {"min_retention": 0.99, "fps": 30.0, "recommendation": _recommendation(lvs)}
    accepted = inspect.signature(write_plot).parameters
    path = write_plot(lvs, "latency", tmp / f"pareto-{n}.svg", **{k: v for k, v in extra.items() if k in accepted})
    text = path.read_text()
    return text[text.index("<svg"):]


def qualify_pareto_svg(n: int) -> str:
    """The qualify report's sweep chart (labels and points only)."""
    return pareto_plain([(f"{lv.recipe}/{lv.runtime}", lv.latency_ms, lv.retention) for lv in levels(n)])


def latency_samples(n: int = 5000) -> list[float]:
    """A long-tailed latency distribution (1 ms body, tail past 30 ms): more than 10x from min to p99.9."""
    rng = np.random.default_rng(0)
    body = rng.lognormal(0.0, 0.15, int(n * 0.97))
    tail = rng.uniform(5.0, 40.0, n - body.size)
    return [float(v) for v in np.concatenate([body, tail])]


def _markers(samples: list[float]) -> list[svg.Marker]:
    """What the report draws, in its order: p50, p99, the latency gate, the FPS budget (here near p99 and p50)."""
    p50, p99 = (float(np.percentile(samples, q)) for q in (50, 99))
    return [svg.Marker("p50", p50), svg.Marker("p99", p99), svg.Marker(f"gate p99 <= {p99 * 1.05:.3g} ms", p99 * 1.05,
                                                                       True),
            svg.Marker(f"{1000 / (p50 * 1.1):.3g} FPS budget", p50 * 1.1, True)]


def histogram_svg(n: int) -> str:
    s = latency_samples(n)
    return svg.histogram(s, markers=_markers(s))


def cdf_svg(n: int) -> str:
    s = latency_samples(n)
    return svg.cdf(s, markers=_markers(s))


def memory_bars_svg(n: int) -> str:
    """The report's memory bars (three in the tool; ``n`` bars here), long labels, values over three decades."""
    names = ["baseline (before load)", "peak (process)", "model (peak - baseline)"]
    items = [(names[i] if i < 3 else f"extra measurement number {i} of the process", 2.0 * 10 ** (i % 4) + i)
             for i in range(n)]
    return svg.bars(items, unit="MiB", limit=1500.0, limit_label="gate (process)", judged=1, title="Memory (VmHWM)")


def tradeoff_svg(n: int) -> str:
    """``bench --batch ... --threads ...``: ``n`` (threads, batch) points (the tool allows 32)."""
    pts = []
    for i in range(n):
        batch, threads = 2 ** (i % 8), 1 + i // 8
        lat = 0.8 * batch ** 0.85 / threads ** 0.5
        pts.append((f"b={batch} t={threads}", lat * 1.2, batch / lat * 1000.0))
    best_lat = min(range(n), key=lambda i: pts[i][1])
    best_thr = max(range(n), key=lambda i: pts[i][2])
    return svg.tradeoff(pts, best=[best_lat, best_thr])


def _layer(i: int) -> LayerRecord:
    ms = 5.0 / (1 + i) ** 1.3
    name = f"/backbone/stage{i // 4}/block{i % 4}/conv_{i}/Conv_output_0_quantized_fused_with_relu_and_bias"
    name = f"/MODEL/WIDE_MW_BLOCK_{i}/QUANTIZE_DEQUANTIZE_FUSED_MMMM" if i % 5 == 0 else name  # wide letters
    return LayerRecord.model_construct(
        kernel=name, op_type="QLinearConv", impl="jit_avx512_amx_int8", provider="CPUExecutionProvider",
        precision=KernelPrecision.INT8 if i % 3 else KernelPrecision.FP32,
        origin=LayerOrigin.INSERTED if i % 11 == 5 else LayerOrigin.ONNX, onnx_nodes=[name], onnx_op_types=["Conv"],
        primary_op="Conv", executed=True, order=i, calls=1, median_ms=ms, p90_ms=ms * 1.1, mean_ms=ms,
        share=ms / 20.0, achieved_gops=None, arithmetic_intensity=None, bound=None, roof_fraction=None)


def profile(n: int) -> ProfileResult:
    return ProfileResult.model_construct(layers=[_layer(i) for i in range(n)], per_op_type=[], notes=[])


def profile_bars_svg(n: int) -> str:
    return profile_html.layer_chart(profile(n), top=n)


def profile_compare_svg(n: int) -> str:
    rows = []
    for i in range(n):
        a = 5.0 / (1 + i) ** 1.2
        b = a * (0.2 if i % 2 else 1.5)
        rows.append(LayerDelta.model_construct(
            onnx_nodes=[f"/MODEL/WIDE_MW_BLOCK_{i}/CONV_MMMM" if i % 5 == 0
                        else f"/backbone/stage{i // 4}/conv_{i}/Conv"],
            op_type="Conv", a_kernels=["k"],
            b_kernels=["k"], a_ms=a, b_ms=b, delta_ms=b - a, ratio=b / a, a_precision="fp32", b_precision="int8",
            a_impl="jit_avx2", b_impl="jit_avx512_int8", precision_changed=True, b_quantized_in_onnx=True,
            b_float_kernel=False))
    c = ProfileComparison.model_construct(layers=rows, extra=[], explanation=[])
    return profile_html.comparison_chart(c, top=n)


def profile_page(n: int) -> str:
    """``profile --html``'s page of ``n`` layers, one of them with a 300-character name (no spaces to wrap at)."""
    from edgeopt.profile.schema import ModelRef, ProfileSettings
    from edgeopt.reports.profile_html import render_profile_html

    layers = [_layer(i) for i in range(n)]
    layers[0] = layers[0].model_copy(update={"onnx_nodes": ["/very/deep/" + "x" * 300]})
    p = ProfileResult.model_construct(
        layers=layers, per_op_type=[], notes=[], model=ModelRef.model_construct(path="/models/net.onnx"),
        runtime={"name": "onnxruntime", "version": "1.20"}, target="local", runner="local",
        settings=ProfileSettings.model_construct(profiled_iterations=20, warmup=5), profiled_ms=10.0, layers_ms=9.0,
        unprofiled_p50_ms=8.0, overhead=1.25, schema_version="1")
    return render_profile_html(p, top=n)


def tradeoff_page(n: int) -> str:
    """``bench --batch ... --html``'s page of ``n`` points."""
    from edgeopt.bench.tradeoff import TradeoffPoint, TradeoffResult
    from edgeopt.reports.tradeoff_html import render_tradeoff_html

    pts = [TradeoffPoint(batch=2 ** (i % 8), threads=1 + i // 8, latency_ms_p50=1.0 + i, latency_ms_p99=1.5 + i,
                         latency_ms_per_item=(1.0 + i) / 2 ** (i % 8), throughput_ips=1000.0 * 2 ** (i % 8) / (1 + i),
                         valid=True, passed=True) for i in range(n)]
    return render_tradeoff_html(TradeoffResult.model_construct(
        model="/models/" + "m" * 200 + ".onnx", target="local", runner="local", points=pts, best_latency=0,
        best_throughput=n - 1, summary="real time: batch 1; throughput: batch 128", results=[]))


# kind -> (builder of an inline <svg> given the number of points, the largest number of points tested)
def cases(tmp: Path) -> dict[str, tuple[Callable[[int], str], int]]:
    return {
        "pareto": (lambda n: pareto_svg(n, tmp), 40),
        "qualify-pareto": (qualify_pareto_svg, 40),
        "latency-histogram": (histogram_svg, 20000),
        "latency-cdf": (cdf_svg, 20000),
        "memory-bars": (memory_bars_svg, 8),
        "tradeoff": (tradeoff_svg, 32),
        "profile-bars": (profile_bars_svg, 40),
        "profile-compare": (profile_compare_svg, 40),
    }



# The docs' screenshots (docs/charts.md): each kind at the size a typical run produces.
DOCS_POINTS = {"pareto": 13, "qualify-pareto": 8, "latency-histogram": 5000, "latency-cdf": 5000, "memory-bars": 3,
               "tradeoff": 16, "profile-bars": 15, "profile-compare": 10}


def write_docs_screenshots(out_dir: Path, work: Path) -> list[Path]:
    """Render every kind at :data:`DOCS_POINTS` in headless Chromium and save ``<out_dir>/chart-<kind>.png``."""
    from edgeopt.reports.svg import CHART_CSS
    from tests.integration import chromium

    out_dir.mkdir(parents=True, exist_ok=True)
    shots = []
    for kind, (build, _) in cases(work).items():
        chart = build(DOCS_POINTS[kind])
        width, height = (int(v) for v in re.search(r'viewBox="0 0 (\d+) (\d+)"', chart).groups())  # type: ignore[union-attr]
        page = work / f"{kind}.html"
        page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{{margin:0}}{CHART_CSS}'
                        f"</style></head><body>{chart}</body></html>")
        shots.append(chromium.screenshot(page.as_uri(), out_dir / f"chart-{kind}.png", work / "profile",
                                         size=f"{width + 2},{height + 2}"))
    return shots


if __name__ == "__main__":  # python -m tests.integration.chart_cases docs/img
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="edgeopt-charts-") as tmp:
        for shot in write_docs_screenshots(Path(sys.argv[1]), Path(tmp)):
            print(shot)
