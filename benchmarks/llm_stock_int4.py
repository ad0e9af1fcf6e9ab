"""onnxruntime-genai: edgeopt's int4 vs the builder's stock int4 (``-p int4``) at Qwen2-0.5B shapes, paired rounds.

Issue 22's goal "edgeopt's int4 at least as fast as the runtime's stock int4": at 16.9 M parameters (llm_goals.py)
a token takes 0.15 ms and 3 rounds could not tell 3 %; at 0.5 B a token takes ~50 ms. Needs the folders
``benchmarks/llm_05b_build.py`` leaves in ``--work`` (``hf``, ``int4``); builds the stock folder there once. Six
rounds, each running both folders (3 generations of 32 tokens after a 128-token prompt, order alternated); the
answer is the median of the per-round paired ratios. Writes ``benchmarks/results/llm_stock_int4_05b.json``. Run it
alone (docs/benchmarks.md, "LLM goals").

Usage: python -m benchmarks.llm_stock_int4 [--work /tmp/edgeopt-05b] [--rounds 6]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import llm_goals as g
from benchmarks.common import RESULTS, machine_facts, write_json

KEYS = ("decode_tokens_per_s", "prefill_tokens_per_s")


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/edgeopt-05b"))
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--out", type=Path, default=RESULTS / "llm_stock_int4_05b.json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    stock = args.work / "stock" / "onnxruntime_genai"
    if not (stock / "genai_config.json").is_file():
        g.stock_ort_int4(args.work / "hf", stock)
    build_s = round(time.perf_counter() - t0, 1)
    mine = args.work / "int4" / "onnxruntime_genai"
    rows: dict[str, list[dict[str, Any]]] = {"edgeopt_int4": [], "stock_int4": []}
    ratios: list[dict[str, float]] = []
    for r in range(args.rounds):
        order = [("edgeopt_int4", mine), ("stock_int4", stock)]
        got = {}
        for name, folder in (order if r % 2 == 0 else order[::-1]):
            got[name] = g.edgeopt_run(folder, 128, 32, 3, r, "onnxruntime_genai")
            rows[name].append(got[name])
        ratios.append({k: got["edgeopt_int4"][k] / got["stock_int4"][k] for k in KEYS if got["stock_int4"].get(k)})
        print(r, ratios[-1], file=sys.stderr, flush=True)
    doc = {"machine": machine_facts("onnxruntime-genai"), "build_s": build_s, "rounds": rows, "paired_ratios": ratios,
           "median_ratio": {k: statistics.median(x[k] for x in ratios) for k in ratios[0]},
           "min_max_ratio": {k: (min(x[k] for x in ratios), max(x[k] for x in ratios)) for k in ratios[0]},
           "sizes_mb": {"edgeopt_int4": _size_mb(mine), "stock_int4": _size_mb(stock)}}
    print(json.dumps({k: doc[k] for k in ("median_ratio", "min_max_ratio", "sizes_mb")}, indent=1))
    write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
