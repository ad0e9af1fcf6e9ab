"""``bench LLM_FOLDER`` on an OpenVINO GenAI folder: real ``LLMPipeline`` of a tiny stateful IR, timed by a
streamer, with OpenVINO's own PerfMetrics beside edgeopt's numbers."""

from __future__ import annotations

from pathlib import Path

import openvino as ov
import pytest

from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.bench.llm.stats import kv_cache_bytes
from edgeopt_agent.runtimes.ovgenai_rt import _kv_precision, paged_capacity
from tests.llm_models import HEADS, HIDDEN, KV_HEADS, LAYERS


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


def _glibc() -> bool:
    import ctypes

    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "malloc_trim")
    except OSError:
        return False


@pytest.fixture(scope="module")
def wide_kv_ov(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight Llama whose KV cache is wide (8 layers x 4 KV heads x head 64: 4,864 B/token in OpenVINO's
    u8 cache, 1.2 MB per 256-token growth) and the rest small, traced by edgeopt's converter (fp32, ~15 s once per
    checkout and converter source: tests/llm_models.py's cache): at the test model's 176 B/token the per-token
    bookkeeping of a generation (~200 B/token) would swamp the cache."""
    pytest.importorskip("torch", reason="the wide-KV Llama is built with torch (pip install 'edgeopt[llm,torch]')")
    from tests.llm_models import shared_wide_kv_ov

    return shared_wide_kv_ov(tmp_path_factory.mktemp("wide-kv"))


def test_openvino_kv_formula_matches_the_plugins_own_cache_size(wide_kv_ov):
    # the CPU plugin's u8 cache: the value keeps an f32 scale and zero point per token and head, the key (x86)
    # per channel and 32-token block; the formula must equal OpenVINO's accounting of its blocks (head 64 here,
    # where the two layouts differ: a per-token key would be 4,608 B/token, the plugin's is 4,864).
    out = wide_kv_ov
    facts = {"layers": 8, "kv_heads": 4, "head_size": 64}
    kv = _kv_precision("CPU", 64)
    per_token = kv_cache_bytes(facts, 32, 1, kv.get("dtype_bytes", 4), kv.get("key_extra_bytes_per_token_head", 0),
                               kv.get("value_extra_bytes_per_token_head", 0)) / 32
    # and its size: whole blocks for min(2 x prompt, prompt + new) tokens, grown 256 tokens at a time
    runs = [(8, 4), (16, 300), (100, 8)]
    own = _openvino_cache_bytes(out, runs)
    assert own[0] == per_token * 32
    assert own == [per_token * paged_capacity(p, n) for p, n in runs]  # 32, 544 and 128 tokens


def test_memory_in_use_and_the_measured_kv_slope_on_openvino_genai(wide_kv_ov):
    """After the timed repetitions, one untimed generation per cell is read raw and in use (glibc malloc_trim
    first), and a KV probe in a fresh pipeline measures the dynamic cache's bytes per token from the memory in
    use at known cache sizes (800 ... 1,568 tokens): within a loose band of the formula."""
    if not _glibc():
        pytest.skip("in-use readings need glibc's malloc_trim (this libc has none)")
    result = bench_llm(wide_kv_ov, LlmWorkload(prompt_tokens=(8,), gen_tokens=(12,), repetitions=2, warmup=1))
    cell, load = result.cells[0], result.loads[0]
    assert cell.rss_in_use_note is None and cell.rss_in_use_mb is not None and cell.rss_in_use_growth_mb is not None
    probe = load.kv_probe
    assert probe is not None and probe.method == "decode_growth", probe
    assert [p[0] for p in probe.points] == [800, 1056, 1312, 1568]  # cache tokens after the 2nd..5th growth
    for _, in_use, raw in probe.points:
        assert in_use <= raw + 64  # KiB: the trimmed reading is not above the raw one (a page or two may move)
    kind = ov.Core().get_property("CPU", "KV_CACHE_PRECISION")
    per_token = 8 * 4 * (2 * 64 * (kind.bitwidth // 8) + (16 + 8 if kind.is_integral() else 0))
    assert cell.kv_bytes_per_token_predicted == per_token  # 4,864 B/token for u8
    assert cell.kv_measured_method == "decode_growth" and cell.kv_bytes_per_token_measured > 0
    assert 0.75 < cell.kv_measured_ratio < 1.25, probe
    print("predicted / measured", cell.kv_measured_ratio, "raw slope", probe.raw_bytes_per_token, probe.points)
