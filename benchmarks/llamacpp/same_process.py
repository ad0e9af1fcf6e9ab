"""Goal 1 without the process boundary: edgeopt's token loop (the agent's ``llama_cpp`` runtime, the code that times
every edgeopt generation) and llama-bench's loop (:class:`.plain_loop.PlainLoop`) on the same GGUF, in one process,
alternating generation by generation (the order flipped each pair). Two processes on this VM differ by 4-11 % in
llama.cpp's own counters (session 19), more than the 3 % goal; in one process the machine's drift hits both sides of
a pair alike, so the paired ratio is the code's difference: edgeopt's per-token read of the logits and their argmax
(the agent's ``_Argmax``) and its Python loop against llama-bench's bare decode + synchronize."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.llamacpp.plain_loop import PlainLoop
from benchmarks.llamacpp.timing import paired, within


def same_process_goal(gguf: Path, args: argparse.Namespace, pairs: int) -> dict[str, Any]:
    """``pairs`` generations of each loop (after one warm-up each), alternating; per pair the ratios edgeopt / plain
    of pp and tg tokens/s (wall clock, as each loop's caller sees it)."""
    from edgeopt_agent.runtimes.llamacpp_rt import LlamaCppRuntime

    plain = PlainLoop(str(gguf), args.n_ctx, args.n_batch, args.threads)
    rt = LlamaCppRuntime()
    rt.load(str(gguf), {"n_ctx": args.n_ctx, "n_batch": args.n_batch}, args.threads)
    rng = np.random.default_rng(args.seed)

    def mine(prompt: list[int]) -> tuple[float, float]:
        g = rt.generate_once([prompt], [[]], args.gen)
        return args.prompt / (g["ttft_ns"] / 1e9), len(g["token_ns"]) / (sum(g["token_ns"]) / 1e9)

    def theirs(prompt: list[int]) -> tuple[float, float]:
        r = plain.rep(prompt, args.gen, rng)
        return args.prompt / r["wall_pp_s"], (args.gen - 1) / r["wall_tg_s"]

    sides: dict[str, list[tuple[float, float]]] = {"edgeopt": [], "plain": []}
    t0 = time.perf_counter()
    try:
        for i in range(pairs + 1):
            prompt = [int(t) for t in rng.integers(2, plain.n_vocab, size=args.prompt)]
            order = [("edgeopt", mine), ("plain", theirs)]
            for name, run in order if i % 2 == 0 else order[::-1]:
                got = run(prompt)
                if i > 0:  # pair 0 warms both up
                    sides[name].append(got)
    finally:
        rt.close_generation()
        plain.close()
    out: dict[str, Any] = {"gguf": gguf.name, "pairs": pairs, "seconds": round(time.perf_counter() - t0, 1)}
    for k, key in enumerate(("pp", "tg")):
        ratio = paired([m[k] for m in sides["edgeopt"]], [p[k] for p in sides["plain"]], args.seed)
        out[key] = {"edgeopt_tokens_per_s": round(float(np.median([m[k] for m in sides["edgeopt"]])), 1),
                    "plain_loop_tokens_per_s": round(float(np.median([p[k] for p in sides["plain"]])), 1),
                    "ratio": ratio, "verdict": within(ratio, 0.03)}
    return out
