"""Typed result of a sweep (also ``sweep.json``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Level(BaseModel):
    """One (recipe, runtime) configuration measured on the target."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: str = Field(description="Recipe name; 'fp32' is the original model; 'int8-search' the tuned INT8.")
    runtime: str
    runtime_version: str
    artifact: str = Field(description="Model file measured.")
    size_bytes: int
    latency_ms: float = Field(description="p50 latency on the target, ms.")
    latency_ms_p99: float
    memory_mb_peak: float | None
    energy_mj: float | None = Field(description="Energy per inference, mJ (measured or estimate).")
    energy_source: str | None
    metric: str
    metric_value: float = Field(description="The metric of this config (vs labels or the reference).")
    retention: float = Field(description="metric(optimized) / metric(reference); docs/sweep.md.")
    meets_retention: bool
    meets_budget: bool = Field(description="Valid run and within the FPS budget (when one is set).")
    passed: bool = Field(description="meets_retention and meets_budget.")
    valid: bool
    cached: bool = Field(description="Read from the cache instead of re-run.")
    details: dict[str, Any] = Field(default_factory=dict, description="Extra facts (e.g. INT8 search choices).")


class Recommendation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: str
    runtime: str
    artifact: str
    retention: float
    latency_ms: float
    size_bytes: int


class SweepResult(BaseModel):
    """The table, the frontier, and the recommendation (null with ``reason`` when nothing meets the constraints)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    model_sha256: str
    target: str
    runner: str
    metric: str
    output: str
    eval_samples: int
    min_retention: float
    fps: float | None
    objective: str
    runtimes: list[str]
    levels: list[Level]
    pareto: list[Level]
    recommendation: Recommendation | None
    reason: str | None = Field(description="Why there is no recommendation: the binding constraint.")
    int8_search: dict[str, Any] | None = Field(description="What the accuracy-aware INT8 search tried, when it ran.")
    plot: str | None
    out_dir: str
    seconds: float
    warnings: list[str]
    metric_params: dict[str, Any] = Field(
        default_factory=dict, description="The metric's parameters in effect (axis, score_threshold, ...: defaults "
        "filled in); part of every level's cache key.")
