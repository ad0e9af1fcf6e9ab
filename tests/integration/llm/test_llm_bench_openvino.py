"""``bench LLM_FOLDER`` on an OpenVINO GenAI folder: real ``LLMPipeline`` of a tiny stateful IR, timed by a
streamer, with OpenVINO's own PerfMetrics beside edgeopt's numbers."""

from __future__ import annotations

import subprocess
import sys

import openvino as ov

from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.bench.llm.stats import kv_cache_bytes
from edgeopt_agent.runtimes.ovgenai_rt import _kv_precision, paged_capacity
from tests.llm_models import HEADS, HIDDEN, KV_HEADS, LAYERS, build_hf_llama


def _openvino_cache_bytes(folder, runs) -> list[int]:  # noqa: ANN001
    """OpenVINO's own accounting: ContinuousBatchingPipeline's kv_cache_size_in_bytes after each (prompt tokens,
    new tokens) generation of ``runs``."""
    import numpy as np
    import openvino_genai as genai

    # (INFERENCE_NUM_THREADS=1 makes OpenVINO GenAI 2026.4's paged kernel die of SIGFPE: the default threads)
    pipe = genai.ContinuousBatchingPipeline(str(folder), genai.SchedulerConfig(), "CPU")
    sizes = []
    for prompt, new in runs:
        config = genai.GenerationConfig()
        config.max_new_tokens = config.min_new_tokens = new
        config.ignore_eos = True
        pipe.generate([ov.Tensor(np.arange(3, 3 + prompt, dtype=np.int64)[None])], [config])
        sizes.append(pipe.get_metrics().kv_cache_size_in_bytes)
    return sizes


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
    assert cell.kv_dtype_bytes == kind.bitwidth // 8
    per_token = LAYERS * KV_HEADS * (2 * (HIDDEN // HEADS) * (kind.bitwidth // 8)
                                     + (4 + 8 if kind.is_integral() else 0))  # u8: key by channel (x86), value by token
    assert cell.kv_cache_bytes == per_token * 20
    # the paged cache holds whole 32-token blocks: min(2 x 8, 8 + 12) = 16 tokens -> one block
    assert cell.kv_cache_bytes_allocated == per_token * 32
    # the runtime's own numbers come along; edgeopt's TTFT includes its own generate() call, so it is not smaller
    assert cell.runtime_ttft_ms_mean is not None and cell.runtime_tpot_ms_mean is not None
    assert cell.ttft_ms_p50 > 0.5 * cell.runtime_ttft_ms_mean
    # depth: a first chat turn fills the cache, the timed prompt runs on it (slower, a bigger cache)
    assert deep.valid, deep.invalid_reasons
    assert deep.tokens_out == 12 and deep.kv_cache_bytes > cell.kv_cache_bytes



def test_openvino_kv_formula_matches_the_plugins_own_cache_size(tmp_path):
    # the CPU plugin's u8 cache: the value keeps an f32 scale and zero point per token and head, the key (x86)
    # per channel and 32-token block; the formula must equal OpenVINO's accounting of its blocks (head 16 here,
    # where the two layouts differ: a per-token key would be 192 B/token, the plugin's is 176). The paged
    # pipeline needs a traced export (edgeopt's converter, ~10 s), not the hand-built test IR.
    out = tmp_path / "ov"
    subprocess.run([sys.executable, "-m", "edgeopt.llm.ov_convert", str(build_hf_llama(tmp_path / "hf")), str(out),
                    "--weights", "fp32", "--report", str(tmp_path / "report.json")], check=True, capture_output=True)
    facts = {"layers": LAYERS, "kv_heads": KV_HEADS, "head_size": HIDDEN // HEADS}
    kv = _kv_precision("CPU", HIDDEN // HEADS)
    per_token = kv_cache_bytes(facts, 32, 1, kv.get("dtype_bytes", 4), kv.get("key_extra_bytes_per_token_head", 0),
                               kv.get("value_extra_bytes_per_token_head", 0)) / 32
    # and its size: whole blocks for min(2 x prompt, prompt + new) tokens, grown 256 tokens at a time
    runs = [(8, 4), (16, 300), (100, 8)]
    own = _openvino_cache_bytes(out, runs)
    assert own[0] == per_token * 32
    assert own == [per_token * paged_capacity(p, n) for p, n in runs]  # 32, 544 and 128 tokens
