"""The typed result of ``edgeopt sweep LLM_DIR`` (``<out>/sweep.json``): one row per level, the recommendation.

Same discipline as the ONNX sweep's result (docs/result-schema.md): ``kind`` and ``schema_version`` first, unknown
keys refused on read, units in the field names.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..deploy import ShippedCheck
from .retention import LlmRetention, RetentionSettings

LLM_SWEEP_SCHEMA_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LlmSweepLevel(_Frozen):
    """One level: how it was built, its retention against its runtime's FP32 reference, its bench cell."""

    name: str = Field(description="Level name, e.g. int4-b32-rtn (docs/llm.md).")
    runtime: str = Field(description="onnxruntime_genai or openvino_genai.")
    folder: str = Field(description="The level's runtime folder.")
    settings: dict[str, Any] = Field(description="Export settings (recipe block fields).")
    reference: bool = Field(description="True for the runtime's FP32 reference.")
    size_bytes: int = Field(description="Bytes of the folder's files.")
    reused: bool = Field(description="The folder was already built with these settings (not re-exported).")
    retention: LlmRetention
    passed: bool = Field(description="retention >= min_retention.")
    runtime_version: str = ""
    decode_tokens_per_s: float | None = Field(description="Bench cell's decode tokens/s (median).")
    tpot_ms_p50: float | None = Field(description="Per-output-token latency, median, ms.")
    rank_tokens_per_s: float | None = Field(description="1000 / tpot_ms_p50: the decode rate the ranking uses (the "
                                            "median token gap: one descheduled token on a busy machine does not "
                                            "move it, unlike the mean-based decode_tokens_per_s).")
    ttft_ms_p50: float | None = Field(description="Time to first token, median, ms.")
    peak_rss_mb: float | None = None
    bench_valid: bool = Field(description="The bench cell met its validity rule (enough tokens and repetitions).")
    cpu: str = Field(default="", description="CPU model the agent reported.")
    runtime_options: dict[str, Any] = Field(
        default_factory=dict, description="The runtime's own options at the values its agent reported for the bench "
                                          "(llama.cpp: n_ctx, n_batch, cache_type, flash_attn, use_mmap, n_gpu_layers; "
                                          "OpenVINO GenAI: device): the deployment records them (docs/llm.md).")
    cpu_flags: list[str] = Field(default_factory=list, description="The agent's CPU flags that decide kernels "
                                                                   "(what a deployment is checked against).")
    rounds_tpot_ms: list[list[float]] = Field(
        default_factory=list, description="Token latencies (ms) of each interleaved ranking round, rounds in the "
                                          "order they ran (empty: not ranked in rounds; docs/llm.md).")


class LlmRecommendation(_Frozen):
    name: str
    runtime: str
    folder: str
    retention: float
    decode_tokens_per_s: float = Field(description="Its rank_tokens_per_s (1000 / TPOT p50).")
    reason: str
    deployment: str | None = Field(default=None, description="<out>/recommended (deployment.json inside).")
    shipped_check: ShippedCheck | None = Field(
        default=None, description="<out>/recommended re-scored from its files alone (the one-pass sweep's record; "
                                  "null: not re-checked, the warnings say why).")


class LlmSweepResult(_Frozen):
    """``sweep.json`` of an LLM sweep."""

    kind: Literal["llm_sweep"] = "llm_sweep"
    schema_version: int = LLM_SWEEP_SCHEMA_VERSION
    edgeopt_version: str
    model: str = Field(description="The Hugging Face folder swept.")
    model_sha256: str
    target: str
    runner: str
    eval_text: str
    eval_text_sha256: str
    metric: str
    min_retention: float
    retention_settings: RetentionSettings
    workload: dict[str, Any] = Field(description="The bench cell every level ran (prompt/gen tokens, repetitions).")
    cpu: str = ""
    levels: list[LlmSweepLevel]
    pareto: list[str] = Field(description="Levels (name@runtime) on the decode-speed/retention frontier.")
    recommendation: LlmRecommendation | None
    binding_constraint: str | None = Field(description="Why nothing was recommended (None when something was).")
    plot: str | None = None
    out_dir: str
    seconds: float
    history_run_ids: list[int] = Field(default_factory=list, description="Its levels' runs in the history (kind "
                                       "sweep; --history-db), in the levels' order; empty when not recorded.")
    warnings: list[str] = Field(default_factory=list)
