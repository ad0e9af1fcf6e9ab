"""``bench LLM_FOLDER`` on an OpenVINO GenAI folder: real ``LLMPipeline`` of a tiny stateful IR, timed by a
streamer, with OpenVINO's own PerfMetrics beside edgeopt's numbers."""

from __future__ import annotations

import openvino as ov

from edgeopt.bench.llm import LlmWorkload, bench_llm
from tests.llm_models import HEADS, HIDDEN, KV_HEADS, LAYERS


def test_ov_genai_cells_time_tokens_and_compare_with_perf_metrics(tiny_ovgenai):
    result = bench_llm(tiny_ovgenai, LlmWorkload(prompt_tokens=(8,), gen_tokens=(12,), context_depth=(0, 16),
                                                 repetitions=10, warmup=1))
    assert result.model_format == "openvino_genai" and result.runtime["name"] == "openvino_genai"
    assert result.model.layers == LAYERS and result.model.kv_heads == KV_HEADS and result.model.source.endswith(".xml")
    cell, deep = result.cells
    assert cell.valid, cell.invalid_reasons
    assert cell.tokens_out == 12 and len(cell.tpot_trace_ms) == 11  # ignore_eos + min_new_tokens: fixed length
    assert cell.ttft_ms_p50 > 0 and 0 < cell.tpot_ms_p50 <= cell.tpot_ms_p99 and cell.decode_tokens_per_s > 0
    # the cache's element type is the plugin's KV_CACHE_PRECISION (u8 on x86 CPUs), not the model's f32; an
    # integer cache adds an f32 scale and zero point per token and head (group = head): OpenVINO's own accounting
    kind = ov.Core().get_property("CPU", "KV_CACHE_PRECISION")
    head = HIDDEN // HEADS
    per_token = LAYERS * 2 * KV_HEADS * (head * (kind.bitwidth // 8) + (8 if kind.is_integral() else 0))
    assert cell.kv_dtype_bytes == kind.bitwidth // 8
    assert cell.kv_cache_bytes == per_token * 20
    # the runtime's own numbers come along; edgeopt's TTFT includes its own generate() call, so it is not smaller
    assert cell.runtime_ttft_ms_mean is not None and cell.runtime_tpot_ms_mean is not None
    assert cell.ttft_ms_p50 > 0.5 * cell.runtime_ttft_ms_mean
    # depth: a first chat turn fills the cache, the timed prompt runs on it (slower, a bigger cache)
    assert deep.valid, deep.invalid_reasons
    assert deep.tokens_out == 12 and deep.kv_cache_bytes > cell.kv_cache_bytes

