"""An LLM bench result as cells of metric series (the generative kind's ``cells`` function): one cell per
workload combination, with its TTFT, TPOT and decode-rate readings and the summaries the bench reported."""

from __future__ import annotations

from ...metrics.cells import ResultCell, series
from .raw_check import DEVICE_REPORTED
from .result import LlmBenchResult, LlmCell

_MIB = float(1 << 20)


def cell_key(c: LlmCell) -> str:
    """How a cell is named and matched between runs: ``p{prompt} g{gen} d{depth} b{batch} t{threads}``."""
    return f"p{c.prompt_tokens} g{c.gen_tokens} d{c.context_depth} b{c.batch} t{c.threads}"


def llm_cell(c: LlmCell) -> ResultCell:
    """One LLM workload cell as a :class:`ResultCell`."""
    s = c.samples
    parts = (
        series("ttft_ms", "ms", s.ttft_ms if s else (), p50=c.ttft_ms_p50, p90=c.ttft_ms_p90),
        series("tpot_ms", "ms", s.tpot_ms if s else (), p50=c.tpot_ms_p50, p90=c.tpot_ms_p90, p99=c.tpot_ms_p99,
               mean=c.tpot_ms_mean),
        series("decode_tokens_per_s", "tokens/s", s.decode_tokens_per_s if s else (), value=c.decode_tokens_per_s),
        series("prefill_tokens_per_s", "tokens/s", value=c.prefill_tokens_per_s),
        series("kv_cache_mb", "MiB", value=c.kv_cache_bytes / _MIB if c.kv_cache_bytes is not None else None),
        series("memory_mb", "MiB", value=c.peak_rss_mb),
        series("energy_per_token_mj", "mJ", value=c.energy_decode_mj_per_token),
    )
    axes = {"prompt_tokens": c.prompt_tokens, "gen_tokens": c.gen_tokens, "context_depth": c.context_depth,
            "batch": c.batch, "threads": c.threads}
    return ResultCell(key=cell_key(c), axes=axes, series=tuple(p for p in parts if p is not None),
                      impossible=tuple(r for r in c.invalid_reasons if r.startswith(DEVICE_REPORTED)))


def llm_cells(result: LlmBenchResult) -> tuple[ResultCell, ...]:
    """Every cell of an LLM bench result, in the bench's order."""
    return tuple(llm_cell(c) for c in result.cells)
