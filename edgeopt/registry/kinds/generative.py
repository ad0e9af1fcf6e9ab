"""Decoder LLMs (onnxruntime-genai and OpenVINO GenAI folders, and their Hugging Face source): timed per token
over workload cells by the agent's ``generate`` command, ranked by decode speed (TPOT)."""

from __future__ import annotations

from ..kind_spec import KindDescriptor, KindHelp, MetricSpec

_PCT = ("p50", "p90", "p99")

DESCRIPTOR = KindDescriptor(
    name="generative",
    summary="decoder LLM (text in, tokens out), timed per token over workload cells",
    agent_command="generate",
    metrics=(
        MetricSpec(name="ttft_ms", unit="ms", percentiles=_PCT, min_exclusive=True, sampled=True, min_readings=5),
        MetricSpec(name="tpot_ms", unit="ms", percentiles=_PCT, min_exclusive=True, sampled=True, min_readings=5),
        MetricSpec(name="decode_tokens_per_s", unit="tokens/s", higher_is_better=True, min_exclusive=True,
                   sampled=True, min_readings=5),
        MetricSpec(name="prefill_tokens_per_s", unit="tokens/s", higher_is_better=True, min_exclusive=True),
        MetricSpec(name="kv_cache_mb", unit="MiB"),
        MetricSpec(name="memory_mb", unit="MiB"),
        MetricSpec(name="energy_per_token_mj", unit="mJ"),
        MetricSpec(name="retention", unit="ratio", higher_is_better=True, max_value=2.0),
        MetricSpec(name="load_ms", unit="ms"),
        MetricSpec(name="power_w", unit="W"),
    ),
    rank_metric="tpot_ms",
    gates=("ttft_ms", "tpot_ms", "decode_tokens_per_s", "kv_cache_mb", "energy_per_token", "memory", "retention"),
    model_word="an LLM folder",
    run_word="an LLM bench run",
    result_kind="llm_bench",  # LlmBenchResult.kind: version-1 history rows are told by it (history/migrate.py)
    engine="generative",
    cells="edgeopt.bench.llm.cells:llm_cells",
    history_row="edgeopt.bench.llm.history_row:llm_facts",
    history_result="edgeopt.bench.llm.history_row:llm_result_of",
    workload="edgeopt.bench.llm.workload:LlmWorkload",  # its flagged fields: bench's --prompt-tokens ...
    sweep_options="edgeopt.llm.sweep_options:LlmSweepOptions",  # its flagged fields: sweep's --levels
    bench_cli="edgeopt.llm.cli.bench:bench_generative",
    bench_api="edgeopt.bench.llm.api:benchmark_generative",
    qualify="edgeopt.qualify.llm_engine:run_llm_qualification",
    qualify_check="edgeopt.qualify.llm_kind:generative_problem",
    sweep_cli="edgeopt.llm.cli.sweep:sweep_generative",
    sweep_api="edgeopt.llm.sweep_api:sweep_generative",
    optimize_cli="edgeopt.llm.cli.optimize:optimize_generative",
    optimize_api="edgeopt.llm.optimize:optimize_generative",
    cli_help=KindHelp(
        bench="MODEL may be an LLM folder (onnxruntime-genai or OpenVINO GenAI): TTFT, TPOT, tokens/s and memory per "
              "workload cell of --prompt-tokens x --gen-tokens x --context-depth x --batch x --threads "
              "(docs/llm-bench.md).",
        optimize="MODEL may be a Hugging Face decoder LLM folder: the recipe is then an LLM recipe (recipes/llm/: "
                 "int4, int8, fp16, fp32...) and the result is runtime folders (docs/llm.md).",
        optimize_calib="for an LLM recipe that is data-aware (int4-awq), a UTF-8 text file",
        sweep_eval="for an LLM folder a held-out .txt file",
        sweep_metric="LLM folders: top1_clear (default), top1, topk, kl, ppl or pkg.mod:fn",
        sweep_calib="LLM folders: calibration text for the int4-awq level (never the --eval text; without it "
                    "int4-awq is not tried)",
        compare="Two LLM bench runs are compared per workload cell on TTFT, TPOT and decode tokens/s "
                "(docs/llm-bench.md).",
    ),
)
