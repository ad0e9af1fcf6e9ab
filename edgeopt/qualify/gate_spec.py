"""The gates of a qualification spec: one typed block per gate (latency, fps, ..., the LLM gates and the generic
``metric`` gate of plug-in kinds) and :class:`Gates`, which holds at most one of each.

Which gates apply to which kind of model is the kind's declaration (``edgeopt/registry/kinds``, ``gates``); the
spec that holds them is :mod:`.spec`. Reference with examples: ``docs/qualify.md``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from ..metrics.latency import percentile_key
from ..settings import MAX_FPS, MAX_ITERATIONS


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every number finite (.inf: exit 2)


def _percentile(value: str) -> str:
    try:
        return percentile_key(str(value))
    except ValueError as exc:
        raise ValueError(str(exc)) from None


# -- gates -------------------------------------------------------------------------------------------------------
class LatencyGate(StrictModel):
    """Latency at a percentile must be at most ``max_ms``."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999.")
    max_ms: float = Field(gt=0, description="Largest allowed latency at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class FpsGate(StrictModel):
    """Latency at a percentile must fit one frame at ``fps`` (``1000 / fps`` ms)."""

    fps: float = Field(gt=0, description="Frames per second to sustain.")
    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999.")

    _pct = field_validator("percentile")(_percentile)


class DeadlineMissGate(StrictModel):
    """Under frame-paced load at ``fps``, at most ``max_pct`` % of frames may finish after their deadline."""

    fps: float = Field(gt=0, le=MAX_FPS,
                       description="Frame rate of the paced load; each frame's deadline is 1000/fps ms.")
    max_pct: float = Field(ge=0, le=100, description="Largest allowed share of late frames, percent (the frames it "
                           f"needs, 100/max_pct, at most {MAX_ITERATIONS:,}).")
    frames: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS,
                               description="Frames to issue (default: enough to resolve max_pct, >= 100); fewer than "
                                           "that cannot pass.")


class MemoryGate(StrictModel):
    """Peak memory must be at most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed peak memory, MiB.")
    basis: Literal["model", "process"] = Field(default="model",
        description="model: what loading and running the model added to the process (memory_mb.delta); "
        "process: the whole agent process's peak RSS (memory_mb.peak, includes the interpreter).")


class ModelSizeGate(StrictModel):
    """The qualified model file (external data included) must be at most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed model size on disk, MiB.")


class RetentionGate(StrictModel):
    """metric(optimized) / metric(reference) must be at least ``min_ratio`` (accuracy with labels, else top-1
    agreement with the reference)."""

    min_ratio: float = Field(gt=0, le=2, description="Smallest allowed retention, e.g. 0.99 for 99 %.")


class EnergyGate(StrictModel):
    """Energy per inference must be at most ``max_mj``; a gate on an ESTIMATE says so in its verdict."""

    max_mj: float = Field(gt=0, description="Largest allowed energy per inference, mJ.")
    require_measured: bool = Field(default=False, description="Fail when the energy is an estimate (no power sensor).")


class ColdStartGate(StrictModel):
    """Model load plus first inference must take at most ``max_ms``."""

    max_ms: float = Field(gt=0, description="Largest allowed cold start, ms.")


class ThroughputGate(StrictModel):
    """Throughput must be at least ``min_ips`` items per second."""

    min_ips: float = Field(gt=0, description="Smallest allowed throughput, items per second.")


class RegressionGate(StrictModel):
    """Latency must not regress against a stored baseline beyond ``tolerance_pct`` (docs/history.md)."""

    baseline: str = Field(min_length=1, description="Baseline name in the history (edgeopt baseline set).")
    tolerance_pct: float = Field(default=5.0, ge=0, description="Median slowdown tolerated, percent.")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Significance level of the Mann-Whitney U test.")
    if_missing: Literal["fail", "pass"] = Field(default="fail",
        description="Verdict when the baseline does not exist for a device yet.")
    allow_different: list[Literal["model", "runtime", "target"]] = Field(default_factory=list,
        description="Differences from the baseline run that still allow a comparison (e.g. [model] to check a "
        "retrained model against the last release's run); any other difference in model hash, runtime or target "
        "makes the gate fail as not comparable.")


# -- LLM gates (a spec whose model is an LLM folder; docs/qualify.md "LLM specs") ---------------------------------
class TtftGate(StrictModel):
    """Time to first token at a percentile must be at most ``max_ms`` in every workload cell."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999 over the repetitions.")
    max_ms: float = Field(gt=0, description="Largest allowed TTFT at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class TpotGate(StrictModel):
    """Time per output token (after the first) at a percentile must be at most ``max_ms`` in every cell."""

    percentile: str = Field(default="p99", description="p50, p90, p95, p99 or p999 over every token latency.")
    max_ms: float = Field(gt=0, description="Largest allowed TPOT at that percentile, ms.")

    _pct = field_validator("percentile")(_percentile)


class DecodeRateGate(StrictModel):
    """Decode tokens per second (median over repetitions) must be at least ``min_tokens_per_s`` in every cell."""

    min_tokens_per_s: float = Field(gt=0, description="Smallest allowed decode rate, tokens/s.")


class KvCacheGate(StrictModel):
    """The KV cache the largest cell needs (layers x 2 x kv_heads x head_size x context x dtype x batch) must be at
    most ``max_mb`` MiB."""

    max_mb: float = Field(gt=0, description="Largest allowed KV-cache size, MiB.")


class EnergyPerTokenGate(StrictModel):
    """Energy per token of a phase must be at most ``max_mj`` in every cell; an ESTIMATE says so in its verdict."""

    max_mj: float = Field(gt=0, description="Largest allowed energy per token, mJ.")
    phase: Literal["decode", "prefill"] = Field(default="decode",
        description="decode: per output token; prefill: per prompt token.")
    require_measured: bool = Field(default=False, description="Fail when the energy is an estimate (no sensor).")


def is_unset(value: object) -> bool:
    return value is None


class MetricGate(StrictModel):
    """A gate on one declared metric of a plug-in model kind (its KindDescriptor's ``metrics``), held in every cell
    (the worst cell decides). ``stat``: a percentile the metric declares (computed from the raw readings, so the
    run must support it), ``mean``, or ``value`` (a single-valued metric)."""

    stat: str = Field(default="p50", description="p50, p90, p99, ... (of the metric's percentiles), mean or value.")
    max: float | None = Field(default=None, description="Largest allowed value, in the metric's unit.")
    min: float | None = Field(default=None, description="Smallest allowed value, in the metric's unit.")

    @model_validator(mode="after")
    def _one_bound(self) -> MetricGate:
        if (self.max is None) == (self.min is None):
            raise ValueError("give exactly one of 'max' or 'min'")
        return self


class MetricGates(RootModel[dict[str, MetricGate]]):
    """The ``metric`` gate: metric name -> its gate, e.g. ``{rtf: {stat: p99, max: 0.5}}``."""

    model_config = ConfigDict(frozen=True)

    @field_validator("root")
    @classmethod
    def _named(cls, value: dict[str, MetricGate]) -> dict[str, MetricGate]:
        bad = [k for k in value if not re.fullmatch(r"[a-z0-9][a-z0-9_]*", k)]
        if bad or not value:
            raise ValueError(f"metric names are lower-case words, e.g. rtf (got {bad or 'none'})")
        return value


class Gates(StrictModel):
    """At most one gate of each kind; a profile's gate is overridden key by key, or removed with ``null``."""

    latency: LatencyGate | None = None
    fps: FpsGate | None = None
    deadline_miss: DeadlineMissGate | None = None
    memory: MemoryGate | None = None
    model_size: ModelSizeGate | None = None
    retention: RetentionGate | None = None
    energy: EnergyGate | None = None
    cold_start: ColdStartGate | None = None
    throughput: ThroughputGate | None = None
    regression: RegressionGate | None = None
    ttft_ms: TtftGate | None = None
    tpot_ms: TpotGate | None = None
    decode_tokens_per_s: DecodeRateGate | None = None
    kv_cache_mb: KvCacheGate | None = None
    energy_per_token: EnergyPerTokenGate | None = None
    metric: MetricGates | None = Field(default=None, exclude_if=is_unset,
                                            description="Gates on a plug-in kind's own metrics (docs/qualify.md).")

    def active(self) -> list[str]:
        """Names of the gates that are set, in a fixed order."""
        return [name for name in type(self).model_fields if getattr(self, name) is not None]


GATE_KINDS: tuple[str, ...] = tuple(Gates.model_fields)
# Which gates apply to which kind of model is the kind's declaration (edgeopt/registry/kinds, ``gates``).
