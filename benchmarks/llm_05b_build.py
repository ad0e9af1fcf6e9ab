"""Issue 22's memory and timing checks at Qwen2-0.5B's shapes: the shared model building and plumbing.

The checks are one script each, run one after the other, each under the heavy-job lock, each well under 15 minutes:

- ``llm_05b_build.py`` (this file): a random-weight Qwen2 at Qwen2-0.5B's shapes (hidden 896, 24 layers, 14 heads,
  2 KV heads, head 64, MLP 4864, vocab 151,936, tied embeddings: 494 M parameters) with the zoo's BPE tokenizer
  (8,192 ids; the model's extra vocabulary rows are never produced by it, random prompts draw from the whole
  vocabulary), then ``optimize_llm`` with ``--recipes`` (fp32, int8, int4) into ``--work``: the onnxruntime-genai
  and OpenVINO GenAI folders. Export times are recorded. ``--shapes kv-probe`` builds a small model with the SAME
  KV-cache layout (24 layers, 2 KV heads, head 64; hidden 128, MLP 256, vocab 8,192) so that long decodes for the
  KV check take seconds, not minutes.
- ``llm_05b_kv.py``: measured KV-cache bytes per context token vs edgeopt's prediction, on both runtimes.
- ``llm_05b_timing.py``: edgeopt's TTFT/TPOT vs onnxruntime-genai's ``benchmark_e2e.py`` timing, same generations.
- ``llm_05b_scaling.py``: ``edgeopt bench`` (agent subprocess) on every built folder.
- ``llm_05b_report.py``: the markdown rows of docs/benchmarks.md from the results; runs nothing.

Usage: python -m benchmarks.llm_05b_build [--work /tmp/edgeopt-05b] [--layers 24] [--shapes qwen2-0.5b|kv-probe]
       [--recipes fp32,int8,int4] [--out benchmarks/results/llm_05b.json]
Results of every script merge into ``--out`` (one key per step; ``--key`` overrides it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, machine_facts, read_json, write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

QWEN05B = {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
           "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 4096}
# Qwen2-0.5B's KV layout (24 layers x 2 KV heads x head 64) on a model small enough to decode thousands of tokens
# in seconds: the cache, the runtimes' cache allocation and growth are the same as at 0.5 B.
KV_PROBE = {"vocab_size": 8192, "hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 24,
            "num_attention_heads": 2, "num_key_value_heads": 2, "max_position_embeddings": 8192}
SHAPES = {"qwen2-0.5b": QWEN05B, "kv-probe": KV_PROBE}


def merge(out: Path, key: str, value: Any) -> None:
    """Write ``value`` under ``key`` of the results file (other keys kept), with the machine."""
    doc = read_json(out) or {"benchmark": "llm_05b"}
    doc["machine"] = machine_facts("onnxruntime-genai", "openvino", "openvino-genai")
    doc[key] = value
    write_json(out, doc)


def folder_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def parser(description: str) -> argparse.ArgumentParser:
    """The options every step shares."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--work", type=Path, default=Path("/tmp/edgeopt-05b"))
    ap.add_argument("--recipes", default="fp32,int8,int4")
    ap.add_argument("--key", help="result key (default: the step name)")
    ap.add_argument("--out", type=Path, default=RESULTS / "llm_05b.json")
    return ap


def run_step(step: str, fn: Callable[[argparse.Namespace], dict[str, Any]], args: argparse.Namespace) -> int:
    """Run one step, time it, merge its result into ``--out`` and print it."""
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = fn(args)
    result["step_s"] = round(time.perf_counter() - t0, 1)
    merge(args.out, args.key or step, result)
    print(json.dumps(result, indent=1, default=str))
    return 0


def build(args: argparse.Namespace) -> dict[str, Any]:
    """The HF folder and one optimize_llm output per recipe; seconds of each."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from edgeopt.llm.optimize import optimize_llm
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts
    from edgeopt.zoo.tiny_llama import EOS, TinyLlamaConfig, save_folder, train_tokenizer

    src = args.work / "hf"
    shapes = {**SHAPES[args.shapes], "num_hidden_layers": args.layers}
    times: dict[str, float] = {}
    if not (src / "config.json").exists():
        t0 = time.perf_counter()
        tok = train_tokenizer(split_texts(corpus_texts())[0], 8192)
        torch.manual_seed(0)
        hf = Qwen2Config(**shapes, bos_token_id=tok.token_to_id(EOS), eos_token_id=tok.token_to_id(EOS),
                         tie_word_embeddings=True, torch_dtype="float32")
        cfg = TinyLlamaConfig(**shapes)
        facts = save_folder(Qwen2ForCausalLM(hf).eval(), tok, src, cfg,
                            {"trained": False, "shapes": args.shapes, "architecture": "Qwen2ForCausalLM"})
        times["hf_folder_s"] = round(time.perf_counter() - t0, 1)
        print(f"hf folder: {facts['parameters']} parameters, {times['hf_folder_s']} s", file=sys.stderr)
    facts = json.loads((src / "zoo_llm.json").read_text())
    for recipe in args.recipes.split(","):
        t0 = time.perf_counter()
        optimize_llm(src, target="local", recipe=recipe, out_dir=args.work / recipe)
        times[f"{recipe}_s"] = round(time.perf_counter() - t0, 1)
        print(f"{recipe}: {times[f'{recipe}_s']} s", file=sys.stderr)
    sizes = {f"{r}/{rt}": round(folder_size(args.work / r / rt) / 2**20, 1)
             for r in ("fp32", "int8", "int4") for rt in ("onnxruntime_genai", "openvino_genai")
             if (args.work / r / rt).is_dir()}
    old = json.loads(args.out.read_text()).get(args.key or "build", {}) if args.out.exists() else {}
    return {"parameters": facts["parameters"], "shapes": shapes, "seconds": {**old.get("seconds", {}), **times},
            "sizes_mb": sizes}


def main() -> int:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--shapes", choices=sorted(SHAPES), default="qwen2-0.5b")
    return run_step("build", build, ap.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())
