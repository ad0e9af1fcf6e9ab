"""The typed result of ``edgeopt bench LLM_FOLDER``: one row per workload cell, units in the field names."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...metrics.result import DeploymentRef
from ...registry.kind_spec import GENERATIVE
from .workload import LlmWorkload

LLM_SCHEMA_VERSION = "1.0"


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LlmModelFacts(_Frozen):
    """Decoder facts the KV-cache formula uses, as the runtime read them."""

    layers: int
    kv_heads: int
    head_size: int
    vocab_size: int | None = None
    context_length: int | None = Field(None, description="Max tokens the model takes; null/0: unknown.")
    source: str = Field(description="Where they were read (genai_config.json, config.json, the IR).")


class LlmSamples(_Frozen):
    """A cell's raw readings in run order: what percentiles and comparisons are computed from."""

    ttft_ms: list[float] = Field(description="One per repetition.")
    tpot_ms: list[float] = Field(description="Every token latency after the first, repetition after repetition.")
    decode_tokens_per_s: list[float] = Field(description="One per repetition.")


class LlmCell(_Frozen):
    """One workload cell; metrics are null for an unsupported cell (then ``invalid_reasons`` says why)."""

    prompt_tokens: int
    gen_tokens: int
    context_depth: int
    batch: int
    threads: int = Field(description="0: the runtime's default.")
    repetitions: int = Field(description="Timed generations kept.")
    tokens_out: int | None = Field(None, description="New tokens per sequence, the least over repetitions.")
    load_ms: float | None = Field(None, description="Model load for this threads value.")
    ttft_ms_p50: float | None = Field(None, description="Time to first token (prefill + first sampling), median.")
    ttft_ms_p90: float | None = None
    prefill_tokens_per_s: float | None = Field(None, description="batch x prompt tokens / prefill time, median.")
    tpot_ms_p50: float | None = Field(None, description="Per-output-token latency after the first, all tokens.")
    tpot_ms_p90: float | None = None
    tpot_ms_p99: float | None = None
    tpot_ms_mean: float | None = None
    tpot_trace_ms: list[float] = Field(default_factory=list, description="Median TPOT at each output position "
                                       "(token 2..gen_tokens) over the repetitions: drift as the cache fills.")
    decode_tokens_per_s: float | None = Field(None, description="batch x decode tokens / decode time, median.")
    e2e_ms_p50: float | None = Field(None, description="Prompt in to last token out, median.")
    peak_rss_mb: float | None = Field(None, description="Peak resident memory of the agent during the cell "
                                      "(VmHWM reset per generation; null where it cannot be reset).")
    rss_growth_mb: float | None = Field(None, description="RSS after minus before one generation, median.")
    kv_cache_bytes: int | None = Field(None, description="layers x 2 x kv_heads x head_size x context x dtype "
                                       "bytes x batch, context = depth + prompt + gen tokens.")
    kv_dtype_bytes: int | None = Field(None, description="Bytes per KV element (from the allocated cache; "
                                       "assumed 4 when the runtime does not expose it).")
    kv_cache_bytes_allocated: int | None = Field(None, description="Bytes of the KV cache as the runtime "
                                                 "allocated it (from its shape), where readable.")
    rss_in_use_mb: float | None = Field(None, description="Memory in use after one untimed generation of the cell "
                                        "(run after the timed ones, its state alive): RSS right after glibc's "
                                        "malloc_trim(0); null off glibc (rss_in_use_note).")
    rss_in_use_growth_mb: float | None = Field(None, description="rss_in_use_mb minus the same reading before that "
                                               "generation: what it holds, without the allocator's freed pages.")
    rss_in_use_note: str | None = Field(None, description="Why the in-use readings are null, else null.")
    kv_bytes_per_token_predicted: float | None = Field(None, description="The KV formula per context token and "
                                                       "sequence (kv_cache_bytes / context / batch).")
    kv_bytes_per_token_measured: float | None = Field(None, description="Measured KV bytes per token and sequence: "
                                                      "the slope of the memory in use in the load's KV probe.")
    kv_measured_ratio: float | None = Field(None, description="kv_bytes_per_token_predicted / measured.")
    kv_measured_method: Literal["decode_growth", "upfront_allocation"] | None = Field(
        None, description="decode_growth: the cache grows as it decodes (OpenVINO GenAI); upfront_allocation: the "
        "whole cache is allocated when generation starts (onnxruntime-genai), measured over max_length.")
    kv_measured_note: str | None = Field(None, description="How the slope was measured, or why it is null.")
    energy_prefill_mj_per_token: float | None = Field(None, description="Energy of the prefill phase per prompt "
                                                      "token (batch x prompt tokens), mJ.")
    energy_decode_mj_per_token: float | None = Field(None, description="Energy of the decode phase per output "
                                                     "token after the first (batch x (gen_tokens - 1)), mJ.")
    energy_source: Literal["measured", "estimate"] | None = Field(None, description="measured: split from a "
                                                                  "power sensor's readings; estimate: the "
                                                                  "target's TDP x phase time (no sensor).")
    samples: LlmSamples | None = Field(None, description="Raw per-repetition readings (history, compare and "
                                       "qualify gates at any percentile); dropped from --json unless --samples.")
    runtime_ttft_ms_mean: float | None = Field(None, description="The runtime's own TTFT (OpenVINO PerfMetrics).")
    runtime_tpot_ms_mean: float | None = Field(None, description="The runtime's own TPOT (OpenVINO PerfMetrics).")
    valid: bool
    invalid_reasons: list[str] = Field(default_factory=list)


class LlmEnergy(_Frozen):
    """Power during one load's timed repetitions: measured by a sensor, or an ESTIMATE from the target's TDP."""

    source: Literal["measured", "estimate"]
    sensor: str | None = None
    rails: list[str] = Field(default_factory=list)
    idle_power_w: float | None = Field(None, description="Mean power in the idle window before warm-up.")
    active_power_w: float = Field(description="Mean power over the timed repetitions (estimate: the TDP).")
    samples: int | None = Field(None, description="Power readings in the timed window (null for estimates).")
    note: str = Field(description="How the figures were obtained; an estimate starts with ESTIMATE.")


class LlmTrace(_Frozen):
    """CPU clock and temperature over one load's timed repetitions (edgeopt_agent.trace)."""

    available: bool = Field(description="False: the device exposes no cpufreq or thermal files.")
    rate_hz: float
    points: list[list[float | None]] = Field(default_factory=list, description="[seconds since the timed "
                                             "window opened, highest CPU MHz, lowest CPU MHz, hottest zone degC].")
    clock_mhz_min: float | None = Field(None, description="Lowest 'highest CPU clock' seen: throttling shows here.")
    clock_mhz_max: float | None = None
    temperature_c_max: float | None = None


class LlmKvProbe(_Frozen):
    """The load's KV probe: untimed generations after the timed ones, the memory in use read at known cache sizes."""

    method: Literal["decode_growth", "upfront_allocation"] | None = Field(description="null: no probe (note).")
    points: list[list[float | None]] = Field(default_factory=list, description="[cache tokens, in-use KiB, raw "
                                             "RSS KiB] per reading.")
    bytes_per_token: float | None = Field(None, description="Least-squares slope of the in-use bytes over the "
                                          "cache tokens (>= 2 points).")
    raw_bytes_per_token: float | None = Field(None, description="The same slope of raw RSS (the allocator's kept "
                                              "pages included).")
    seconds: float | None = Field(None, description="Time the probe took.")
    note: str


class LlmLoad(_Frozen):
    threads: int
    load_ms: float | None = Field(description="Model load time, ms; null when the device reported an impossible one "
                                  "(its cells are invalid and say why).")
    rss_growth_mb: float | None = Field(None, description="RSS the load added (weights, sessions).")
    kv_probe: LlmKvProbe | None = Field(None, description="Null from agents before session 9.")
    energy: LlmEnergy | None = Field(None, description="Null with energy disabled, or no sensor and no TDP.")
    trace: LlmTrace | None = None


class LlmBenchResult(_Frozen):
    """What ``edgeopt bench LLM_FOLDER`` measured; ``valid`` only when every cell is."""

    model_kind: ClassVar[str] = GENERATIVE  # the kind that measured it (not JSON): the history records it as that kind

    kind: Literal["llm_bench"] = "llm_bench"
    schema_version: str = LLM_SCHEMA_VERSION
    model_path: str
    model_format: str
    runtime: dict[str, Any] = Field(description="name, version and runtime details from the agent.")
    runner: str
    target: str = Field(default="local", description="Target name (its TDP backs an energy estimate).")
    target_mismatch: list[str] = Field(default_factory=list, description="Why the device is not the target's "
                                       "hardware (empty when it matches); qualify fails such a device unless allowed.")
    model: LlmModelFacts
    workload: LlmWorkload
    loads: list[LlmLoad]
    cells: list[LlmCell]
    truncated: bool = Field(description="The watchdog stopped repetitions early.")
    environment: dict[str, Any] = Field(default_factory=dict)
    valid: bool
    deployment: DeploymentRef | None = Field(
        default=None, description="The deployment run (its settings applied); null when a plain folder was given.")
    warnings: list[str] = Field(default_factory=list, description="What the reader must know (a deployment "
                                                                   "measured on another machine).")

    def without_samples(self) -> LlmBenchResult:
        """A copy without the cells' raw readings (what --json prints unless --samples)."""
        return self.model_copy(update={"cells": [c.model_copy(update={"samples": None}) for c in self.cells]})
