"""The benchmark result: the schema every later stage (gates, reports, history) reads.

Documented field by field in ``docs/result-schema.md``; bump ``SCHEMA_VERSION`` on incompatible change.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .budget import FpsBudget
from .latency import LatencyStats, PercentileSupport

SCHEMA_VERSION = "1.0"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelInfo(_Frozen):
    path: str
    sha256: str
    size_bytes: int = Field(description="File size plus external data.")
    params: int


class RuntimeInfo(_Frozen):
    model_config = ConfigDict(extra="allow", frozen=True)
    name: str
    version: str


class Settings(_Frozen):
    """Measurement settings, echoed from the request the agent ran."""

    warmup: int
    warmup_s: float
    iterations: int
    min_duration_s: float
    max_duration_s: float
    batch: int
    threads: int
    streams: int
    seed: int
    shapes: dict[str, list[int]]
    inputs_npz: str | None
    runtime_options: dict[str, Any]


class ColdStart(_Frozen):
    load: float = Field(description="Model load (session creation) in ms.")
    first_inference: float = Field(description="First inference after load in ms.")
    total: float = Field(description="load + first_inference in ms.")


class MemoryMb(_Frozen):
    baseline: float | None = Field(description="Process peak RSS (VmHWM) before the model was loaded, MiB.")
    peak: float | None = Field(description="Process peak RSS (VmHWM) at the end of the run, MiB.")
    delta: float | None = Field(description="peak - baseline, MiB: what loading and running the model cost.")


class Compute(_Frozen):
    flops_per_inference: int = Field(description="Model FLOPs for one inference at the run's shapes (inspect).")
    achieved_gflops: float = Field(description="flops_per_inference x inferences per second / 1e9.")
    peak_gflops: float | None = Field(description="The target's peak for the model's precision.")
    peak_source: str | None
    pct_of_peak: float | None


class RunInfo(_Frozen):
    samples: int = Field(description="Timed inferences (all streams).")
    timed_s: float = Field(description="Wall time of the timed phase.")
    warmup_iterations: int
    warmup_s: float
    truncated: bool = Field(description="True when the watchdog ended the timed phase early.")
    started_at: str = Field(description="UTC ISO-8601 time the run started.")


class BenchResult(_Frozen):
    """Everything one benchmark run produced, with the settings and machine that produced it."""

    schema_version: str = SCHEMA_VERSION
    edgeopt_version: str
    model: ModelInfo
    target: str
    runner: str = Field(description="local or ssh:<host>.")
    runtime: RuntimeInfo
    settings: Settings
    latency_ms: LatencyStats
    percentiles_supported: dict[str, PercentileSupport]
    throughput_ips: float = Field(description="Items per second: timed inferences x batch / timed wall time.")
    cold_start_ms: ColdStart
    memory_mb: MemoryMb
    fps_budget: FpsBudget | None
    compute: Compute | None
    run: RunInfo
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    valid: bool
    invalid_reasons: list[str]
    warnings: list[str]
    environment: dict[str, Any]
    samples_ms: list[float] | None = Field(None, description="Raw per-inference latencies; only when requested.")

    @property
    def passed(self) -> bool:
        """True when the run is valid and any FPS budget passed."""
        return self.valid and (self.fps_budget is None or self.fps_budget.passed)
