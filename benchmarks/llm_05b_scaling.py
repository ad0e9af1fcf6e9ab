"""Issue 22's scaling numbers at Qwen2-0.5B's shapes: ``edgeopt bench`` (agent subprocess, as users run it) on every
folder ``llm_05b_build.py`` built: load, TTFT, TPOT, decode tokens/s, peak RSS; folder sizes.

Usage: python -m benchmarks.llm_05b_scaling [--work /tmp/edgeopt-05b] [--recipes fp32,int8,int4] [--prompt 128]
       [--gen 64] [--scaling-reps 5] [--out benchmarks/results/llm_05b.json]
"""

from __future__ import annotations

import sys
from typing import Any

from benchmarks import llm_05b_build as common


def scaling(args: Any) -> dict[str, Any]:
    """edgeopt bench (agent subprocess) on every built folder: load, TTFT, TPOT, decode tok/s, peak RSS, size."""
    from edgeopt.bench.llm import LlmWorkload, bench_llm

    wl = LlmWorkload(prompt_tokens=(args.prompt,), gen_tokens=(args.gen,), repetitions=args.scaling_reps, warmup=1,
                     max_duration_s=600)
    out = {}
    for recipe in args.recipes.split(","):
        for rt in ("onnxruntime_genai", "openvino_genai"):
            folder = args.work / recipe / rt
            print(f"  scaling {recipe}/{rt}", file=sys.stderr)
            if not folder.is_dir():
                out[f"{recipe}/{rt}"] = {"error": "not built"}
                continue
            try:
                res = bench_llm(folder, wl, runtime=rt)
            except Exception as exc:  # one failed cell must not lose the others
                out[f"{recipe}/{rt}"] = {"error": str(exc)}
                continue
            c = res.cells[0]
            out[f"{recipe}/{rt}"] = {
                "size_mb": round(common.folder_size(folder) / 2**20, 1), "load_ms": round(c.load_ms or 0, 1),
                "load_rss_growth_mb": res.loads[0].rss_growth_mb, "ttft_ms_p50": c.ttft_ms_p50,
                "prefill_tokens_per_s": c.prefill_tokens_per_s, "tpot_ms_p50": c.tpot_ms_p50,
                "tpot_ms_mean": c.tpot_ms_mean, "decode_tokens_per_s": c.decode_tokens_per_s,
                "peak_rss_mb": c.peak_rss_mb, "kv_cache_bytes": c.kv_cache_bytes,
                "kv_cache_bytes_allocated": c.kv_cache_bytes_allocated, "repetitions": c.repetitions,
                "valid": c.valid, "invalid_reasons": c.invalid_reasons}
    return {"prompt": args.prompt, "gen": args.gen, "reps": args.scaling_reps, "threads": "runtime default (2 cores)",
            "cells": out}


def main() -> int:
    ap = common.parser(__doc__.splitlines()[0])
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--scaling-reps", type=int, default=5)
    return common.run_step("scaling", scaling, ap.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
