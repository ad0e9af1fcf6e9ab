"""The typed result of ``edgeopt bench LLM_FOLDER``: one row per workload cell, units in the field names."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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
    runtime_ttft_ms_mean: float | None = Field(None, description="The runtime's own TTFT (OpenVINO PerfMetrics).")
    runtime_tpot_ms_mean: float | None = Field(None, description="The runtime's own TPOT (OpenVINO PerfMetrics).")
    valid: bool
    invalid_reasons: list[str] = Field(default_factory=list)


class LlmLoad(_Frozen):
    threads: int
    load_ms: float
    rss_growth_mb: float | None = Field(None, description="RSS the load added (weights, sessions).")


class LlmBenchResult(_Frozen):
    """What ``edgeopt bench LLM_FOLDER`` measured; ``valid`` only when every cell is."""

    kind: Literal["llm_bench"] = "llm_bench"
    schema_version: str = LLM_SCHEMA_VERSION
    model_path: str
    model_format: str
    runtime: dict[str, Any] = Field(description="name, version and runtime details from the agent.")
    runner: str
    model: LlmModelFacts
    workload: LlmWorkload
    loads: list[LlmLoad]
    cells: list[LlmCell]
    truncated: bool = Field(description="The watchdog stopped repetitions early.")
    environment: dict[str, Any] = Field(default_factory=dict)
    valid: bool
