"""The benchmark result: the schema every later stage (gates, reports, history) reads.

Documented field by field in ``docs/result-schema.md``; bump ``SCHEMA_VERSION`` on incompatible change.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..registry.kind_spec import TENSOR
from .budget import FpsBudget
from .deadline import DeadlineStats
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
    energy: dict[str, Any] = Field(default_factory=dict, description="Energy settings sent to the agent.")
    pacing_fps: float | None = Field(None, description="Frame-paced load at this FPS; null: back-to-back inferences.")


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


class Energy(_Frozen):
    """Energy per inference: measured from a power sensor, or estimated from the target's TDP (and marked so)."""

    source: Literal["measured", "estimate"] = Field(
        description="measured: a power sensor was read during the run; estimate: from the target's TDP.")
    sensor: str | None = Field(description="Power reader used (ina3221, rapl, rpi5_pmic, hwmon); null for estimates.")
    rails: list[str] = Field(description="Rails/zones whose sum is the reported power.")
    idle_power_w: float | None = Field(description="Average power in the idle window before warm-up, W.")
    active_power_w: float | None = Field(description="Average power during the timed phase, W (TDP for estimates).")
    energy_per_inference_mj: float | None = Field(
        description="active_power_w x timed wall time / timed inferences, mJ (per call, i.e. per batch).")
    energy_per_inference_above_idle_mj: float | None = Field(
        description="(active_power_w - idle_power_w) x timed wall time / timed inferences, mJ; null without idle.")
    inferences_per_joule: float | None = Field(description="1000 / energy_per_inference_mj.")
    tops_per_watt: float | None = Field(
        description="Model ops per inference x inferences per second / active_power_w / 1e12.")
    samples: int | None = Field(None, description="Power readings in the timed phase; null for estimates.")
    note: str = Field(description="How the numbers were obtained and what they leave out.")


class RunInfo(_Frozen):
    samples: int = Field(description="Timed inferences (all streams).")
    timed_s: float = Field(description="Wall time of the timed phase.")
    warmup_iterations: int
    warmup_s: float
    truncated: bool = Field(description="True when the watchdog ended the timed phase early.")
    started_at: str = Field(description="UTC ISO-8601 time the run started.")


class DeploymentRef(_Frozen):
    """The deployment a run measured (``edgeopt bench DEPLOYMENT``; docs/bench.md, "Deployments")."""

    path: str = Field(description="The deployment folder.")
    name: str = Field(description="The deployment's name (its sweep level).")
    sha256: str = Field(description="SHA-256 of its deployment.json (the files' hashes are in it).")


class BenchResult(_Frozen):
    """Everything one benchmark run produced, with the settings and machine that produced it."""

    model_kind: ClassVar[str] = TENSOR  # the kind that measured it (not JSON): the history records it as that kind

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
    energy: Energy | None = Field(None, description="Energy per inference; null when energy is disabled.")
    run: RunInfo
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    valid: bool
    invalid_reasons: list[str]
    warnings: list[str]
    environment: dict[str, Any]
    target_mismatch: list[str] = Field(
        default_factory=list, description="Why the device the agent ran on is not the target's hardware (arch, CPU "
        "vendor, core count, accelerator); empty when it matches. A mismatched run is judged on the wrong numbers.")
    samples_ms: list[float] | None = Field(None, description="Raw per-inference latencies; only when requested.")
    deadline: DeadlineStats | None = Field(None, description="Frame-paced runs only: deadline misses at the FPS.")
    deployment: DeploymentRef | None = Field(
        default=None, description="The deployment run (its settings applied); null when a plain model file was given.")

    @property
    def passed(self) -> bool:
        """True when the run is valid and any FPS budget passed."""
        return self.valid and (self.fps_budget is None or self.fps_budget.passed)
