"""Issue 33, goal 2 (Q4_K_M decode >= 2.5x F16 at Qwen2-0.5B's shapes): is the shortfall the model's width?

Qwen2-0.5B's hidden size 896 is not a multiple of 256, so llama.cpp's quantizer gives most of a "Q4_K_M" file's
matrices Q5_0 instead of Q4_K. This script builds random Qwen2-shaped models that differ only in width (896, the
real one, and 1024, a multiple of 256; MLP 4864 = 19 x 256 in both, 2 KV heads of 64, the zoo tokenizer's 8,192-id
vocabulary), converts each to F16 and Q4_K_M GGUFs with edgeopt's exporter (llama.cpp's converter and quantizer),
records each file's type mix (the exporter's report), and times decode in one process with llama-bench's loop
(:mod:`benchmarks.llamacpp.plain_loop`): every round runs each GGUF once (a prompt, then ``--gen`` single-token
decodes), in a rotated order.

    python -m benchmarks.research.llamacpp_width [--widths 896,1024] [--layers 24] [--rounds 8] [--gen 32]

Prints a table and writes ``benchmarks/results/llamacpp_width.json`` (``--out``). Builds under
``out/llamacpp-width`` (~3 GB at the peak for two widths; the Hugging Face folders are deleted after conversion).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import REPO, RESULTS, machine_facts, print_table, read_json, write_json

WORK = REPO / "out" / "llamacpp-width"
MLP = 4864


def build(width: int, layers: int) -> dict[str, Any]:
    """F16 and Q4_K_M GGUFs of a random Qwen2 of ``width`` (built once, kept under :data:`WORK`)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from edgeopt.llm.optimize import optimize_llm
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts
    from edgeopt.zoo.tiny_llama import EOS, TinyLlamaConfig, save_folder, train_tokenizer

    root = WORK / f"w{width}-L{layers}"
    done = read_json(root / "build.json")
    if done:
        return done
    shutil.rmtree(root, ignore_errors=True)
    heads = width // 64
    cfg = TinyLlamaConfig(vocab_size=8192, hidden_size=width, intermediate_size=MLP, num_hidden_layers=layers,
                          num_attention_heads=heads, num_key_value_heads=2, max_position_embeddings=4096)
    tok = train_tokenizer(split_texts(corpus_texts())[0], cfg.vocab_size)
    torch.manual_seed(0)
    hf = Qwen2Config(vocab_size=8192, hidden_size=width, intermediate_size=MLP, num_hidden_layers=layers,
                     num_attention_heads=heads, num_key_value_heads=2, max_position_embeddings=4096,
                     bos_token_id=tok.token_to_id(EOS), eos_token_id=tok.token_to_id(EOS), tie_word_embeddings=True)
    src = root / ".hf"
    save_folder(Qwen2ForCausalLM(hf).eval(), tok, src, cfg, {"trained": False, "shapes": f"Qwen2 width {width}"})
    doc: dict[str, Any] = {"width": width, "layers": layers}
    for level, recipe in (("f16", "gguf-f16"), ("q4_k_m", "q4_k_m")):
        t0 = time.perf_counter()
        art = optimize_llm(src, target="local", recipe=recipe, out_dir=root / level).artifacts[0]
        got = Path(art.path)
        doc[level] = {"gguf": str(got / "model.gguf" if got.is_dir() else got),
                      "tensor_types": art.report.get("tensor_types"), "matrices": art.report.get("matrices")}
        print(f"  width {width} {level}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    shutil.rmtree(src)
    write_json(root / "build.json", doc)
    return doc


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
    built = {w: build(w, args.layers) for w in widths}
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
                "q4_k_m_types": built[w]["q4_k_m"]["tensor_types"]}
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
