"""``edgeopt bench LLM_FOLDER`` on a real onnxruntime-genai session of a tiny int4 Llama (local runner)."""

from __future__ import annotations

import json

import pytest

from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.bench.llm.stats import kv_cache_bytes
from edgeopt.cli.main import main
from tests.llm_models import HEADS, HIDDEN, KV_HEADS, LAYERS


def test_two_cells_give_ttft_tpot_decode_rate_fixed_length_and_kv_bytes(tiny_ortgenai):
    work = LlmWorkload(prompt_tokens=(8, 32), gen_tokens=(12,), repetitions=10, warmup=1)
    result = bench_llm(tiny_ortgenai, work)
    assert result.kind == "llm_bench" and result.runtime["name"] == "onnxruntime_genai" and result.runner == "local"
    assert [(c.prompt_tokens, c.gen_tokens) for c in result.cells] == [(8, 12), (32, 12)]
    for cell in result.cells:
        assert cell.valid, cell.invalid_reasons
        assert cell.repetitions == 10 and cell.tokens_out == 12  # EOS ignored: exactly gen_tokens
        assert 0 < cell.ttft_ms_p50 <= cell.ttft_ms_p90 and cell.prefill_tokens_per_s > 0
        assert 0 < cell.tpot_ms_p50 <= cell.tpot_ms_p90 <= cell.tpot_ms_p99
        assert len(cell.tpot_trace_ms) == 11  # one per token after the first
        # decode rate = tokens over their own time (median over repetitions): about 1 / TPOT; a preempted token
        # (2 shared cores) lengthens a repetition's time, so the product sits at or below 1
        assert 0.2 < cell.decode_tokens_per_s * cell.tpot_ms_p50 / 1000.0 < 1.5
        context = cell.prompt_tokens + cell.gen_tokens
        head = HIDDEN // HEADS
        assert cell.kv_cache_bytes == LAYERS * 2 * KV_HEADS * head * context * 4  # fp32 cache on the CPU
        assert cell.kv_cache_bytes_allocated == cell.kv_cache_bytes  # the runtime's own allocation agrees
        assert cell.peak_rss_mb is None or cell.peak_rss_mb > 0
    assert result.valid and result.loads[0].load_ms > 0
    assert result.model.layers == LAYERS and result.model.kv_heads == KV_HEADS


def test_too_few_tokens_for_p99_is_invalid_with_the_reason(tiny_ortgenai):
    result = bench_llm(tiny_ortgenai, LlmWorkload(prompt_tokens=(8,), gen_tokens=(4,), repetitions=2, warmup=0))
    (cell,) = result.cells
    assert not cell.valid and not result.valid
    assert any(r.startswith("tpot p99 needs >= 100 token latencies") and r.endswith("got 6")
               for r in cell.invalid_reasons), cell.invalid_reasons
    assert any(r.startswith("ttft p90 needs >= 10 repetitions") for r in cell.invalid_reasons)
    assert cell.tpot_ms_p50 > 0  # the numbers are kept, only marked


def test_context_depth_fills_the_cache_before_the_timed_prompt(tiny_ortgenai):
    result = bench_llm(tiny_ortgenai, LlmWorkload(prompt_tokens=(8,), gen_tokens=(4,), context_depth=(0, 64),
                                                  repetitions=2, warmup=0))
    shallow, deep = result.cells
    assert deep.kv_cache_bytes - shallow.kv_cache_bytes == LAYERS * 2 * KV_HEADS * (HIDDEN // HEADS) * 64 * 4
    assert deep.kv_cache_bytes_allocated == deep.kv_cache_bytes and deep.tokens_out == 4


def test_cli_json_row_per_cell_and_exit_code(tiny_ortgenai, capsys):
    code = main(["bench", str(tiny_ortgenai), "--prompt-tokens", "8", "--gen-tokens", "4", "--threads", "1,2",
                 "--repetitions", "2", "--gen-warmup", "0", "--json"])
    out = capsys.readouterr().out
    assert code == 1, out  # 2 repetitions cannot support TTFT p90: invalid, exit 1
    doc = json.loads(out)
    assert doc["kind"] == "llm_bench" and [c["threads"] for c in doc["cells"]] == [1, 2]
    keys = {"ttft_ms_p50", "tpot_ms_p99", "decode_tokens_per_s", "kv_cache_bytes", "peak_rss_mb"}
    assert keys <= set(doc["cells"][0])


def test_kv_formula():
    facts = {"layers": 24, "kv_heads": 2, "head_size": 64}
    assert kv_cache_bytes(facts, context=1024, batch=1, dtype_bytes=2) == 24 * 2 * 2 * 64 * 1024 * 2


def test_a_folder_that_is_not_an_llm_is_an_input_error(tmp_path):
    from edgeopt.errors import InputError

    with pytest.raises(InputError, match="not an LLM folder"):
        bench_llm(tmp_path)


def test_html_on_an_llm_folder_is_refused_plainly_and_devices_go_to_the_fleet(tiny_ortgenai, tmp_path, capsys):
    code = main(["bench", str(tiny_ortgenai), "--html", str(tmp_path / "r.html"), "--gen-tokens", "4"])
    err = capsys.readouterr().err
    assert code == 2 and "is an LLM folder: --mlflow and --html do not apply" in err
    # --devices is the LLM fleet bench (tests/integration/ssh/test_fleet_llm.py): a selection that matches nothing
    # in the inventory is exit 2 before any device work
    inventory = tmp_path / "devices.yaml"
    inventory.write_text("devices: []\n")
    code = main(["bench", str(tiny_ortgenai), "--devices", "pi-*", "--inventory", str(inventory), "--gen-tokens", "4"])
    assert code == 2 and "pi-*" in capsys.readouterr().err


def test_onnxruntime_genai_kv_is_measured_as_its_upfront_allocation(tiny_ortgenai, capsys):
    # the cache is allocated for max_length when the generator is made (no decode-phase growth): the probe
    # measures the memory in use held by generators of 4 lengths instead, and says so; --no-kv-probe skips it
    result = bench_llm(tiny_ortgenai, LlmWorkload(prompt_tokens=(8,), gen_tokens=(4,), repetitions=2, warmup=0))
    cell, probe = result.cells[0], result.loads[0].kv_probe
    assert probe is not None and probe.method == "upfront_allocation" and "max_length" in probe.note
    assert [p[0] for p in probe.points] == [144, 272, 400, 528]
    assert cell.kv_bytes_per_token_predicted == LAYERS * KV_HEADS * 2 * (HIDDEN // HEADS) * 4  # f32: 512 B/token
    assert cell.kv_measured_method == "upfront_allocation" and 0.5 < cell.kv_measured_ratio < 2.0, probe
    assert cell.rss_in_use_mb is not None and cell.rss_in_use_mb <= cell.peak_rss_mb + 1
    # a second thread count reuses the first load's readings (the KV per token does not depend on threads)
    two = bench_llm(tiny_ortgenai, LlmWorkload(prompt_tokens=(8,), gen_tokens=(4,), repetitions=2, warmup=0,
                                               threads=(1, 2), kv_probe=True))
    first, second = (ld.kv_probe for ld in two.loads)
    assert first is not None and second is not None and first.seconds and first.seconds > 0
    assert second.points == first.points and second.seconds == 0 and "threads=1" in second.note
    assert {c.kv_bytes_per_token_measured for c in two.cells} == {first.bytes_per_token}
    main(["bench", str(tiny_ortgenai), "--prompt-tokens", "8", "--gen-tokens", "4", "--repetitions", "2",
          "--gen-warmup", "0", "--no-kv-probe", "--json", "--no-history"])
    off = json.loads(capsys.readouterr().out)
    assert off["workload"]["kv_probe"] is False and off["cells"][0]["kv_bytes_per_token_measured"] is None
    assert off["loads"][0]["kv_probe"]["note"].startswith("disabled") and off["cells"][0]["rss_in_use_mb"] is None


def test_the_public_api_benchmarks_an_llm_folder_through_its_kind_with_a_typed_workload(tiny_ortgenai, tmp_path):
    # issue 30 item 4: edgeopt.benchmark accepts every kind (it raised TypeError on workload= and measured an LLM
    # folder as a one-pass model): the LLM folder's kind runs bench_llm, the workload typed or as a mapping
    import edgeopt
    from edgeopt.bench.llm.result import LlmBenchResult
    from edgeopt.errors import InputError

    typed = LlmWorkload(prompt_tokens=(8,), gen_tokens=(4,), repetitions=2, warmup=0, kv_probe=False)
    result = edgeopt.benchmark(tiny_ortgenai, workload=typed, threads=1, energy=False)
    assert isinstance(result, LlmBenchResult) and result.runtime["name"] == "onnxruntime_genai"
    assert [(c.prompt_tokens, c.gen_tokens, c.threads, c.repetitions) for c in result.cells] == [(8, 4, 1, 2)]
    assert result.cells[0].tokens_out == 4
    # today's keywords keep their meaning: threads, batch, seed and max_duration_s become the workload's
    mapped = edgeopt.benchmark(tiny_ortgenai, workload={"prompt_tokens": [8], "gen_tokens": [4], "repetitions": 2,
                                                        "warmup": 0, "kv_probe": False}, threads=2, seed=3)
    assert mapped.workload.threads == (2,) and mapped.workload.seed == 3 and mapped.workload.batch == (1,)
    assert [c.threads for c in mapped.cells] == [2]
    with pytest.raises(InputError, match="workload prompt_tokens"):
        edgeopt.benchmark(tiny_ortgenai, workload={"prompt_tokens": []})
    with pytest.raises(InputError, match="workload= sets the workload of an LLM folder.*one-pass model"):
        edgeopt.benchmark(tmp_path / "model.onnx", workload=typed)
