"""Benchmark results built from synthetic raw runs through the real metrics code (``build_result``).

The raw run is what an agent would send back; everything after it (statistics, support rule, energy, deadline)
is edgeopt's own code, so gates, history and reports are tested on genuine ``BenchResult`` objects without
spending seconds per result on a real measurement.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from typing import Any

import numpy as np

from edgeopt.enums import Precision
from edgeopt.metrics.compute import MetricInputs, build_result
from edgeopt.metrics.result import BenchResult, ModelInfo
from edgeopt.targets.schema import Target
from edgeopt_agent.protocol import RawRun, Request

TARGET = Target(
    name="testboard", description="a test board", arch="aarch64", accelerator="gpu",
    peak_fp16_tflops={"value": 1, "source": "test"}, memory_gb={"value": 4, "source": "test"},
    memory_bandwidth_gbps={"value": 25, "source": "test"}, tdp_w={"value": 10, "source": "datasheet"},
    runtimes=["onnxruntime"], precisions=["fp16", "fp32"],
)

MEASURED_POWER = {"sensor": "ina3221", "kind": "power", "rails": ["VDD_IN"], "rate_hz": 20.0, "rate_hz_used": 20.0,
                  "read_errors": 0, "idle": {"avg_w": 2.0, "samples": 10, "duration_s": 0.5},
                  "active": {"avg_w": 5.0, "samples": 40, "duration_s": 2.0}}
NO_SENSOR = {"sensor": None, "reason": "no power sensor found"}


def samples(n: int = 200, median_ms: float = 1.0, spread: float = 0.05, seed: int = 0) -> list[float]:
    """``n`` log-normal latencies (ms) around ``median_ms``."""
    rng = np.random.default_rng(seed)
    return [float(x) for x in median_ms * np.exp(rng.normal(0.0, spread, n))]


def bench_result(
    samples_ms: Sequence[float] | None = None,
    *,
    truncated: bool = False,
    memory_kb: tuple[int | None, int | None] = (40_960, 61_440),
    power: dict[str, Any] | None = None,
    frames: dict[str, Any] | None = None,
    size_bytes: int = 2 * (1 << 20),
    model_path: str = "/models/net.onnx",
    sha256: str = "ab" * 32,
    runner: str = "local",
    percentile: str = "p99",
    load_ms: float = 50.0,
    first_ms: float = 5.0,
    pacing_fps: float | None = None,
) -> BenchResult:
    """A :class:`BenchResult` of ``samples_ms`` (default: 200 samples around 1 ms), raw samples kept."""
    values = list(samples_ms) if samples_ms is not None else samples()
    ns = [int(round(v * 1e6)) for v in values]
    request = Request(model_path=model_path, iterations=len(ns), min_duration_s=0.0, pacing_fps=pacing_fps)
    raw = RawRun(
        status="ok", request=request.to_dict(), runtime={"name": "onnxruntime", "version": "1.0"}, samples_ns=ns,
        timed_wall_s=sum(ns) / 1e9, timed_inferences=len(ns), warmup_done={"iterations": 10, "duration_s": 0.01},
        load_ms=load_ms, first_inference_ms=first_ms, memory_kb={"baseline": memory_kb[0], "peak": memory_kb[1]},
        truncated=truncated, environment={"cpu": "test cpu", "cores": 4, "python": "3.11", "numpy": "2"},
        power=power if power is not None else {}, frames=frames or {},
    )
    ctx = MetricInputs(
        model=ModelInfo(path=model_path, sha256=sha256, size_bytes=size_bytes, params=1000), target=TARGET,
        runner=runner, edgeopt_version="0.1.0", flops_per_inference=1_000_000, precision=Precision.FP32, fps=None,
        percentile=percentile, started_at=_dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc), keep_samples=True,
    )
    return build_result(raw, ctx)


def frames(fps: float, count: int, misses: int, late_starts: int = 0) -> dict[str, Any]:
    """``RawRun.frames`` of a paced run where ``misses`` of ``count`` frames were late."""
    period = int(1e9 / fps)
    responses = [period // 2] * (count - misses) + [period * 2] * misses
    return {"fps": fps, "period_ns": period, "scheduled": count, "completed": count, "misses": misses,
            "late_starts": late_starts, "max_lateness_ns": period if misses else 0, "response_ns": responses,
            "wall_ns": period * count}
