"""Issue 22's timing goals for generative models, ratios measured in one run on this machine.

1. **Timing method**: edgeopt's TTFT and TPOT vs the runtime's own way of timing the same model:
   - onnxruntime-genai: the loop of its ``benchmark/python/benchmark_e2e.py`` (prompt = ``append_tokens``, sampling
     = the first ``generate_next_token``, token generation = each later ``generate_next_token``), run here in its
     own process, interleaved with ``edgeopt.bench_llm`` runs of the same cell (goal: within 3 %);
   - OpenVINO GenAI: its ``PerfMetrics`` (``get_ttft().mean``, ``get_tpot().mean``) of the very generations edgeopt
     times (the agent returns both).
2. **Stock INT4**: edgeopt's ``int4`` recipe vs each runtime's stock INT4 with default settings (onnxruntime-genai's
   builder ``-p int4``; OpenVINO: NNCF ``compress_weights(mode=INT4_ASYM)`` with its defaults on the same FP32 IR,
   what ``optimum-cli --weight-format int4`` applies), prefill and decode tokens/s interleaved (goal: at least as
   fast).
3. **KV cache**: the predicted KV bytes at two context depths vs the runtime's allocated cache, and the predicted
   difference vs the difference of the measured RSS growth of one generation (RSS after minus before, the generator
   alive) between the depths (goal: within 10 %).

Model: a random-weight Llama built here (``edgeopt.zoo.tiny_llama`` with ``--hidden``/``--layers``: default 512 x 8,
~34 M parameters, so a token takes milliseconds and harness overhead cannot hide in it). ``--qwen05b`` builds a
random Qwen2 at Qwen2-0.5B's shapes (494 M parameters; ~2 GB, minutes to export) for the memory/throughput scaling.
Random weights make retention meaningless: retention goals are in docs/llm.md (trained zoo model).

Usage: python -m benchmarks.llm_goals [--rounds 4] [--prompt 128] [--gen 64] [--qwen05b]
       [--out benchmarks/results/llm_goals.json]
Run it alone: on 2 cores another job moves every number.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import RESULTS, machine_facts, write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.llm.optimize import optimize_llm
from edgeopt.zoo.tiny_llama import TinyLlamaConfig, build_tiny_llama

# benchmark_e2e.py's loop, standalone: one JSON line with the per-repetition times (seconds).
E2E_LOOP = r"""
import json, sys, time
import numpy as np
import onnxruntime_genai as og
folder, prompt_len, gen_len, reps, warmup, seed = sys.argv[1], *map(int, sys.argv[2:7])
model = og.Model(folder)
rng = np.random.default_rng(seed)
vocab = json.load(open(folder + "/genai_config.json"))["model"]["vocab_size"]
out = {"prompt": [], "sampling": [], "token_gen": []}
for rep in range(warmup + reps):
    tokens = rng.integers(2, vocab, size=(1, prompt_len)).astype(np.int32)
    params = og.GeneratorParams(model)
    params.set_search_options(do_sample=False, max_length=prompt_len + gen_len, min_length=prompt_len + gen_len)
    generator = og.Generator(model, params)
    t0 = time.perf_counter(); generator.append_tokens(tokens); t1 = time.perf_counter()
    generator.generate_next_token(); t2 = time.perf_counter()
    gen_times, i = [], 1
    while not generator.is_done() and i < gen_len:
        a = time.perf_counter(); generator.generate_next_token(); gen_times.append(time.perf_counter() - a); i += 1
    if rep >= warmup:
        out["prompt"].append(t1 - t0); out["sampling"].append(t2 - t1); out["token_gen"].extend(gen_times)
    del generator
print(json.dumps(out))
"""


def build_qwen05b(src: Path, layers: int = 24, hidden: int = 896) -> dict[str, Any]:
    """A random Qwen2 at Qwen2-0.5B's shapes (hidden 896, MLP 4864, 14 heads / 2 KV heads, tied embeddings; the
    zoo tokenizer's 8,192-id vocabulary) with ``layers`` layers (24: the real model's) written to ``src``; another
    ``hidden`` keeps the rest (heads of 64: ``hidden // 64`` of them)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts
    from edgeopt.zoo.tiny_llama import EOS, save_folder, train_tokenizer

    heads = hidden // 64
    cfg = TinyLlamaConfig(vocab_size=8192, hidden_size=hidden, intermediate_size=4864, num_hidden_layers=layers,
                          num_attention_heads=heads, num_key_value_heads=2, max_position_embeddings=4096)
    tok = train_tokenizer(split_texts(corpus_texts())[0], cfg.vocab_size)
    torch.manual_seed(0)
    hf = Qwen2Config(vocab_size=cfg.vocab_size, hidden_size=hidden, intermediate_size=4864, num_hidden_layers=layers,
                     num_attention_heads=heads, num_key_value_heads=2, max_position_embeddings=4096,
                     bos_token_id=tok.token_to_id(EOS), eos_token_id=tok.token_to_id(EOS),
                     tie_word_embeddings=True)
    shapes = "Qwen2-0.5B (vocab 8192)" if hidden == 896 else f"Qwen2-0.5B, hidden {hidden} (vocab 8192)"
    return save_folder(Qwen2ForCausalLM(hf).eval(), tok, src, cfg,
                       {"trained": False, "shapes": shapes, "architecture": "Qwen2ForCausalLM"})


def build_model(work: Path, args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """The HF folder timed here: a random Llama of ``--hidden`` x ``--layers``, or Qwen2-0.5B's shapes."""
    src = work / "hf"
    if args.qwen05b:
        return src, build_qwen05b(src)
    cfg = TinyLlamaConfig(vocab_size=8192, hidden_size=args.hidden, intermediate_size=3 * args.hidden,
                          num_hidden_layers=args.layers, num_attention_heads=args.hidden // 64,
                          num_key_value_heads=max(1, args.hidden // 128), max_position_embeddings=4096)
    return src, build_tiny_llama(src, cfg)


def stock_ort_int4(src: Path, out: Path) -> Path:
    """onnxruntime-genai's builder with its defaults for INT4 on CPU."""
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(src), "-o", str(out), "-p", "int4",
           "-e", "cpu", "-c", str(out.parent / ".stock-cache")]
    subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return out


def stock_ov_int4(fp32: Path, out: Path) -> Path:
    """NNCF's defaults for INT4 (INT4_ASYM, group 128, ratio 1) on the FP32 IR, tokenizers copied beside it."""
    import nncf
    import openvino as ov

    shutil.copytree(fp32, out)
    core = ov.Core()
    model = core.read_model(str(fp32 / "openvino_model.xml"))
    compressed = nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT4_ASYM)
    (out / "openvino_model.xml").unlink()
    (out / "openvino_model.bin").unlink()
    ov.save_model(compressed, str(out / "openvino_model.xml"), compress_to_fp16=False)
    return out


def e2e_run(folder: Path, prompt: int, gen: int, reps: int, seed: int) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", E2E_LOOP, str(folder), str(prompt), str(gen), str(reps), "1",
                           str(seed)], check=True, capture_output=True, text=True)
    t = json.loads(proc.stdout.strip().splitlines()[-1])
    ttft = [(a + b) * 1e3 for a, b in zip(t["prompt"], t["sampling"], strict=True)]
    return {"ttft_ms_p50": float(np.median(ttft)), "tpot_ms_mean": float(np.mean(t["token_gen"]) * 1e3)}


def edgeopt_run(folder: Path, prompt: int, gen: int, reps: int, seed: int, runtime: str) -> dict[str, Any]:
    wl = LlmWorkload(prompt_tokens=(prompt,), gen_tokens=(gen,), repetitions=reps, warmup=1, seed=seed)
    cell = bench_llm(folder, wl, runtime=runtime).cells[0]
    return {"ttft_ms_p50": cell.ttft_ms_p50, "tpot_ms_mean": cell.tpot_ms_mean, "tpot_ms_p50": cell.tpot_ms_p50,
            "decode_tokens_per_s": cell.decode_tokens_per_s, "prefill_tokens_per_s": cell.prefill_tokens_per_s,
            "runtime_ttft_ms_mean": cell.runtime_ttft_ms_mean, "runtime_tpot_ms_mean": cell.runtime_tpot_ms_mean,
            "valid": cell.valid}


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return float(np.median(vals)) if vals else None


def timing_method(folders: dict[str, Path], args: argparse.Namespace) -> dict[str, Any]:
    """Goal 1: edgeopt vs benchmark_e2e's loop (interleaved rounds) and vs OpenVINO's PerfMetrics."""
    ort_e, ort_raw, ov_e = [], [], []
    for r in range(args.rounds):
        print(f"  timing round {r + 1}/{args.rounds}", file=sys.stderr)
        order = ["edgeopt", "e2e"] if r % 2 == 0 else ["e2e", "edgeopt"]
        for which in order:
            if which == "edgeopt":
                ort_e.append(edgeopt_run(folders["ort_fp32"], args.prompt, args.gen, args.reps, r,
                                         "onnxruntime_genai"))
            else:
                ort_raw.append(e2e_run(folders["ort_fp32"], args.prompt, args.gen, args.reps, r))
        ov_e.append(edgeopt_run(folders["ov_fp32"], args.prompt, args.gen, args.reps, r, "openvino_genai"))
    ort: dict[str, dict[str, Any]] = {k: {"edgeopt": _median(ort_e, k), "benchmark_e2e": _median(ort_raw, k)}
                                      for k in ("ttft_ms_p50", "tpot_ms_mean")}
    ov = {"ttft_ms": {"edgeopt_p50": _median(ov_e, "ttft_ms_p50"),
                      "perf_metrics_mean": _median(ov_e, "runtime_ttft_ms_mean")},
          "tpot_ms": {"edgeopt_mean": _median(ov_e, "tpot_ms_mean"),
                      "perf_metrics_mean": _median(ov_e, "runtime_tpot_ms_mean")}}
    for v in ort.values():
        v["ratio"] = round(v["edgeopt"] / v["benchmark_e2e"], 4)
    for v in ov.values():
        a, b = list(v.values())[:2]
        v["ratio"] = round(a / b, 4) if a and b else None
    return {"onnxruntime_genai": ort, "openvino_genai": ov,
            "rounds": {"ort_edgeopt": ort_e, "ort_e2e": ort_raw, "ov": ov_e}}


def stock_int4(folders: dict[str, Path], args: argparse.Namespace) -> dict[str, Any]:
    """Goal 2: edgeopt's int4 vs stock int4 per runtime, interleaved rounds, median of rounds."""
    out: dict[str, Any] = {}
    for rt, mine, stock in (("onnxruntime_genai", "ort_int4", "ort_int4_stock"),
                            ("openvino_genai", "ov_int4", "ov_int4_stock")):
        rows: dict[str, list[dict[str, Any]]] = {"edgeopt_int4": [], "stock_int4": []}
        for r in range(args.rounds):
            order = [("edgeopt_int4", mine), ("stock_int4", stock)]
            for name, key in (order if r % 2 == 0 else order[::-1]):
                rows[name].append(edgeopt_run(folders[key], args.prompt, args.gen, args.reps, r, rt))
        med: dict[str, dict[str, Any]] = {
            n: {k: _median(v, k) for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "ttft_ms_p50")}
            for n, v in rows.items()}
        out[rt] = {**med, "decode_ratio": round(med["edgeopt_int4"]["decode_tokens_per_s"]
                                                / med["stock_int4"]["decode_tokens_per_s"], 3)}
        if med["edgeopt_int4"]["prefill_tokens_per_s"] and med["stock_int4"]["prefill_tokens_per_s"]:
            out[rt]["prefill_ratio"] = round(med["edgeopt_int4"]["prefill_tokens_per_s"]
                                             / med["stock_int4"]["prefill_tokens_per_s"], 3)
        out[rt]["sizes_mb"] = {n: round(_size(folders[k]) / 2**20, 2)
                               for n, k in (("edgeopt_int4", mine), ("stock_int4", stock))}
    return out


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def kv_check(folders: dict[str, Path], args: argparse.Namespace) -> dict[str, Any]:
    """Goal 3: KV bytes predicted at depth 0 and ``--depth`` vs allocated and vs the RSS growth between them."""
    out: dict[str, Any] = {}
    for rt, key in (("onnxruntime_genai", "ort_fp32"), ("openvino_genai", "ov_fp32")):
        wl = LlmWorkload(prompt_tokens=(args.prompt,), gen_tokens=(args.gen,), context_depth=(0, args.depth),
                         repetitions=3, warmup=1)
        cells = {c.context_depth: c for c in bench_llm(folders[key], wl, runtime=rt).cells}
        a, b = cells[0], cells[args.depth]
        predicted = (b.kv_cache_bytes or 0) - (a.kv_cache_bytes or 0)
        grown = (None if a.rss_growth_mb is None or b.rss_growth_mb is None
                 else (b.rss_growth_mb - a.rss_growth_mb) * 2**20)
        out[rt] = {"kv_bytes": {d: c.kv_cache_bytes for d, c in cells.items()},
                   "kv_bytes_allocated": {d: c.kv_cache_bytes_allocated for d, c in cells.items()},
                   "rss_growth_mb": {d: c.rss_growth_mb for d, c in cells.items()},
                   "peak_rss_mb": {d: c.peak_rss_mb for d, c in cells.items()},
                   "predicted_growth_mb": round(predicted / 2**20, 2),
                   "measured_growth_mb": None if grown is None else round(grown / 2**20, 2),
                   "ratio": None if not grown else round(predicted / grown, 3)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--qwen05b", action="store_true", help="Qwen2-0.5B shapes (494 M parameters; minutes)")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--depth", type=int, default=2048, help="context depth of the KV check")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--out", type=Path, default=RESULTS / "llm_goals.json")
    args = ap.parse_args()
    t0 = time.perf_counter()
    doc: dict[str, Any] = {"benchmark": "llm_goals",
                           "machine": machine_facts("onnxruntime-genai", "openvino", "openvino-genai"),
                           "settings": {k: v for k, v in vars(args).items() if k != "out"}}
    with tempfile.TemporaryDirectory(prefix="edgeopt-llm-goals-") as tmp:
        work = Path(tmp)
        print("building the model and its exports", file=sys.stderr)
        src, facts = build_model(work, args)
        doc["model"] = {"parameters": facts["parameters"], "config": facts["config"]}
        folders: dict[str, Path] = {}
        for recipe in ("fp32", "int4"):
            res = optimize_llm(src, target="local", recipe=recipe, out_dir=work / recipe)
            folders[f"ort_{recipe}"] = Path(res.out_dir) / "onnxruntime_genai"
            folders[f"ov_{recipe}"] = Path(res.out_dir) / "openvino_genai"
        folders["ort_int4_stock"] = stock_ort_int4(src, work / "stock" / "onnxruntime_genai")
        folders["ov_int4_stock"] = stock_ov_int4(folders["ov_fp32"], work / "stock" / "openvino_genai")
        doc["build_s"] = round(time.perf_counter() - t0, 1)
        print("1/3 timing method", file=sys.stderr)
        doc["timing_method"] = timing_method(folders, args)
        print("2/3 stock int4", file=sys.stderr)
        doc["stock_int4"] = stock_int4(folders, args)
        print("3/3 kv cache", file=sys.stderr)
        doc["kv_cache"] = kv_check(folders, args)
    doc["machine"]["loadavg_after"] = os.getloadavg()
    doc["total_s"] = round(time.perf_counter() - t0, 1)
    summary = {"timing": {rt: {k: v["ratio"] for k, v in d.items()} for rt, d in doc["timing_method"].items()
                          if rt != "rounds"},
               "stock_decode_ratio": {rt: d["decode_ratio"] for rt, d in doc["stock_int4"].items()},
               "kv_ratio": {rt: d["ratio"] for rt, d in doc["kv_cache"].items()}}
    doc["summary"] = summary
    print(json.dumps(summary, indent=1))
    write_json(args.out, doc)
    print(f"wrote {args.out} ({doc['total_s']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
