"""Issue 33, goal 2 (Q4_K_M decode >= 2.5x F16 at Qwen2-0.5B's shapes): is the shortfall the model's width?

Qwen2-0.5B's hidden size 896 is not a multiple of 256, so llama.cpp's quantizer gives most of a "Q4_K_M" file's
matrices Q5_0 instead of Q4_K. This script builds random Qwen2-shaped models that differ only in width (896, the
real one, and 1024, a multiple of 256; MLP 4864 = 19 x 256 in both, 2 KV heads of 64, the zoo tokenizer's 8,192-id
vocabulary), converts each to F16 and Q4_K_M GGUFs with edgeopt's exporter (llama.cpp's converter and quantizer),
records each file's type mix (the exporter's report), and times decode in one process with llama-bench's loop
(:mod:`benchmarks.llamacpp.plain_loop`): every round runs each GGUF once (a prompt, then ``--gen`` single-token
decodes), in a rotated order.

    python -m benchmarks.research.llamacpp_width [--widths 896,1024] [--layers 24] [--rounds 8] [--gen 32]

Prints a table and writes ``benchmarks/results/llamacpp_width.json`` (``--out``). The GGUFs are the goals
benchmark's (:func:`benchmarks.llamacpp.models.qwen_ggufs`, cached under ``out/llamacpp-goals``; width 896 is its
Qwen2-0.5B-shaped model).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.common import RESULTS, machine_facts, print_table, write_json
from benchmarks.llamacpp.models import qwen_ggufs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="896,1024")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--prompt", type=int, default=64)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=RESULTS / "llamacpp_width.json")
    args = ap.parse_args()
    from benchmarks.llamacpp.plain_loop import PlainLoop

    widths = [int(w) for w in args.widths.split(",")]
    built = {w: qwen_ggufs(args.layers, w)["levels"] for w in widths}
    files = {(w, lv): Path(built[w][lv]["gguf"]) for w in widths for lv in ("f16", "q4_k_m")}
    loops = {k: PlainLoop(str(p), 512, 512, args.threads) for k, p in files.items()}
    rng = np.random.default_rng(0)
    keys = list(loops)
    for k in keys:  # one untimed repetition each
        loops[k].rep([int(t) for t in rng.integers(2, 8192, size=args.prompt)], args.gen, rng)
    tg: dict[tuple[int, str], list[float]] = {k: [] for k in keys}
    for r in range(args.rounds):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            row = loops[k].rep([int(t) for t in rng.integers(2, 8192, size=args.prompt)], args.gen, rng)
            tg[k].append((args.gen - 1) / row["wall_tg_s"])
    for loop in loops.values():
        loop.close()
    rows, out = [], []
    for w in widths:
        ratios = [q / f for q, f in zip(tg[(w, "q4_k_m")], tg[(w, "f16")], strict=True)]
        item = {"width": w, "f16_tok_s": float(np.median(tg[(w, "f16")])),
                "q4_k_m_tok_s": float(np.median(tg[(w, "q4_k_m")])), "ratio_median": float(np.median(ratios)),
                "ratio_range": [float(min(ratios)), float(max(ratios))],
                "f16_bytes": files[(w, "f16")].stat().st_size, "q4_k_m_bytes": files[(w, "q4_k_m")].stat().st_size,
                "q4_k_m_types": built[w]["q4_k_m"]["report"]["tensor_types"]}
        out.append(item)
        rows.append([w, f"{item['f16_tok_s']:.1f}", f"{item['q4_k_m_tok_s']:.1f}",
                     f"{item['ratio_median']:.2f}x ({item['ratio_range'][0]:.2f}-{item['ratio_range'][1]:.2f})",
                     f"{item['f16_bytes'] / item['q4_k_m_bytes']:.2f}x", item["q4_k_m_types"]])
    print_table(["width", "F16 tok/s", "Q4_K_M tok/s", "Q4_K_M / F16 decode", "bytes F16 / Q4_K_M",
                 "Q4_K_M matrices by type"], rows)
    write_json(args.out, {"benchmark": "llamacpp_width", "machine": machine_facts("llama-cpp-python", "gguf"),
                          "layers": args.layers, "rounds": args.rounds, "prompt": args.prompt, "gen": args.gen,
                          "threads": args.threads, "widths": out})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
