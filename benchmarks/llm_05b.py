"""Issue 22's memory and timing goals at Qwen2-0.5B's shapes, in steps that each stay well under 15 minutes.

Steps (each its own process; run them one after the other, each under the heavy-job lock):

- ``build``: a random-weight Qwen2 at Qwen2-0.5B's shapes (hidden 896, 24 layers, 14 heads, 2 KV heads, head 64,
  MLP 4864, vocab 151,936, tied embeddings: 494 M parameters) with the zoo's BPE tokenizer (8,192 ids; the model's
  extra vocabulary rows are never produced by it, random prompts draw from the whole vocabulary), then
  ``optimize_llm`` with ``--recipes`` (fp32, int8, int4) into ``--work``: the onnxruntime-genai and OpenVINO
  GenAI folders. Export times are recorded.
- ``kv``: the KV-cache check. One fresh process per (runtime, setting, context depth): load, read RSS, run one
  generation whose context (depth + a 16-token prompt + 8 output tokens) is fed in chunks of ``--chunk`` tokens
  (so the prefill's scratch memory stays the size of one chunk, not of the context), read RSS with the generator
  (onnxruntime-genai) or the pipeline and its cache (OpenVINO GenAI) alive. The held memory M(d) = RSS after -
  RSS before; a least-squares line through M(d) over the depths gives the measured bytes per token, compared
  with the predicted layers x 2 x kv_heads x head_dim x dtype bytes.
- ``timing``: onnxruntime-genai's ``benchmark_e2e.py`` timing and edgeopt's on the SAME generations: the agent's
  ``generate`` command runs in this process with the runtime's ``og.Generator`` wrapped so that each call is also
  timed the way benchmark_e2e.py times it (see :class:`_E2eGenerator`); edgeopt's numbers come from the host's
  own statistics (``edgeopt.bench.llm.stats.cell_from_raw``) of that run. A bootstrap over repetitions gives the
  interval of each ratio.
- ``scaling``: ``edgeopt.bench_llm`` (agent subprocess, as users run it) on every built folder: load, TTFT, TPOT,
  decode tokens/s, peak RSS; folder sizes.

Usage: python benchmarks/llm_05b.py build|kv|timing|scaling [--work /tmp/edgeopt-05b] [--layers 24]
       [--out benchmarks/results/llm_05b.json]
Results of every step merge into ``--out`` (one key per step).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != REPO / "benchmarks"]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "device_agent"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

QWEN05B = {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
           "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 4096}


def _merge(out: Path, key: str, value: Any) -> None:
    doc = json.loads(out.read_text()) if out.exists() else {"benchmark": "llm_05b"}
    from edgeopt_agent.environment import cpu_model

    doc["machine"] = {"cpu": cpu_model(), "cores": os.cpu_count()}
    doc[key] = value
    part = out.with_suffix(".part")
    part.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    part.replace(out)


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def build(args: argparse.Namespace) -> dict[str, Any]:
    """The HF folder and one optimize_llm output per recipe; seconds of each."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from edgeopt.llm.optimize import optimize_llm
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts
    from edgeopt.zoo.tiny_llama import EOS, TinyLlamaConfig, save_folder, train_tokenizer

    src = args.work / "hf"
    shapes = {**QWEN05B, "num_hidden_layers": args.layers}
    times: dict[str, float] = {}
    if not (src / "config.json").exists():
        t0 = time.perf_counter()
        tok = train_tokenizer(split_texts(corpus_texts())[0], 8192)
        torch.manual_seed(0)
        hf = Qwen2Config(**shapes, bos_token_id=tok.token_to_id(EOS), eos_token_id=tok.token_to_id(EOS),
                         tie_word_embeddings=True, torch_dtype="float32")
        cfg = TinyLlamaConfig(**shapes)
        facts = save_folder(Qwen2ForCausalLM(hf).eval(), tok, src, cfg,
                            {"trained": False, "shapes": "Qwen2-0.5B", "architecture": "Qwen2ForCausalLM"})
        times["hf_folder_s"] = round(time.perf_counter() - t0, 1)
        print(f"hf folder: {facts['parameters']} parameters, {times['hf_folder_s']} s", file=sys.stderr)
    facts = json.loads((src / "zoo_llm.json").read_text())
    for recipe in args.recipes.split(","):
        t0 = time.perf_counter()
        optimize_llm(src, target="local", recipe=recipe, out_dir=args.work / recipe)
        times[f"{recipe}_s"] = round(time.perf_counter() - t0, 1)
        print(f"{recipe}: {times[f'{recipe}_s']} s", file=sys.stderr)
    sizes = {f"{r}/{rt}": round(_size(args.work / r / rt) / 2**20, 1)
             for r in ("fp32", "int8", "int4") for rt in ("onnxruntime_genai", "openvino_genai")
             if (args.work / r / rt).is_dir()}
    old = json.loads(args.out.read_text()).get("build", {}) if args.out.exists() else {}
    return {"parameters": facts["parameters"], "shapes": shapes, "seconds": {**old.get("seconds", {}), **times},
            "sizes_mb": sizes}


# One fresh process per point: the held memory of one generation whose context goes in by chunks.
KV_ORT = r"""
import json, sys
import numpy as np
import onnxruntime_genai as og
folder, depth, chunk, prompt, gen = sys.argv[1], *map(int, sys.argv[2:6])
def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
config = og.Config(folder)
config.overlay(json.dumps({"model": {"decoder": {"session_options": {"intra_op_num_threads": 2,
                                                                       "inter_op_num_threads": 1}}}}))
model = og.Model(config)
vocab = json.load(open(folder + "/genai_config.json"))["model"]["vocab_size"]
ids = np.random.default_rng(depth).integers(3, vocab, size=(1, depth + prompt)).astype(np.int32)
before = rss("VmRSS")
params = og.GeneratorParams(model)
total = depth + prompt + gen
params.set_search_options(max_length=total, min_length=total, do_sample=False)
g = og.Generator(model, params)
made = rss("VmRSS")
for i in range(0, depth + prompt, chunk):
    g.append_tokens(ids[:, i:i + chunk])
for _ in range(gen):
    g.generate_next_token()
after = rss("VmRSS")
kv = g.get_output("present.0.key")
print(json.dumps({"before": before, "generator_made": made, "after": after, "hwm": rss("VmHWM"),
                  "present_dtype": str(kv.dtype), "present_shape": list(kv.shape), "tokens": total}))
"""

KV_OV = r"""
import json, sys
import numpy as np
import openvino as ov
import openvino_genai as genai
folder, depth, chunk, prompt, gen, variant, warm = sys.argv[1], *map(int, sys.argv[2:6]), sys.argv[6], sys.argv[7]
precision, _, cache_gb = variant.partition("@")
def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
sc = genai.SchedulerConfig()
sc.max_num_batched_tokens = chunk
if cache_gb:
    sc.cache_size = int(cache_gb)  # a preset cache (GB) instead of the dynamic allocation
props = {"INFERENCE_NUM_THREADS": 2, "scheduler_config": sc}
if precision != "default":
    props["KV_CACHE_PRECISION"] = precision
if precision == "f32":  # the bf16 paged-attention kernel (AMX default) takes bf16 or u8 caches only
    props["INFERENCE_PRECISION_HINT"] = "f32"
pipe = genai.LLMPipeline(folder, "CPU", **props)
vocab = json.load(open(folder + "/config.json"))["vocab_size"]
ids = np.random.default_rng(depth).integers(3, vocab, size=(1, depth + prompt)).astype(np.int64)
cfg = genai.GenerationConfig()
cfg.max_new_tokens = gen; cfg.min_new_tokens = gen; cfg.ignore_eos = True; cfg.do_sample = False
if warm == "1":  # the plugin's first-inference allocations (~390 MB here) out of the window; its cache stays
    pipe.generate(ov.Tensor(ids[:, :prompt]), cfg)
before = rss("VmRSS")
res = pipe.generate(ov.Tensor(ids), cfg)
after = rss("VmRSS")
print(json.dumps({"before": before, "after": after, "hwm": rss("VmHWM"), "tokens": depth + prompt + gen,
                  "generated": len(res.tokens[0]),
                  "core_kv_precision": str(ov.Core().get_property("CPU", "KV_CACHE_PRECISION"))}))
"""


def _fit(depths: list[int], held: list[int]) -> dict[str, Any]:
    """Least-squares slope (bytes per context token) and intercept of the held memory over the depths."""
    slope, intercept = np.polyfit(np.asarray(depths, float), np.asarray(held, float), 1)
    resid = np.asarray(held, float) - (slope * np.asarray(depths, float) + intercept)
    return {"bytes_per_token": round(float(slope), 1), "intercept_mb": round(float(intercept) / 2**20, 2),
            "max_residual_mb": round(float(np.abs(resid).max()) / 2**20, 2)}


def _kv_points(script: str, folder: Path, extra: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for depth in args.depths:
        proc = subprocess.run([sys.executable, "-c", script, str(folder), str(depth), str(args.chunk), "16", "8",
                               *extra], capture_output=True, text=True, check=True)
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["depth"] = depth
        row["held"] = row["after"] - row["before"]
        rows.append(row)
        print(f"  {folder.parent.name}/{folder.name} {extra} depth {depth}: held {row['held'] / 2**20:.1f} MB",
              file=sys.stderr)
    return rows


def kv(args: argparse.Namespace) -> dict[str, Any]:
    """Measured bytes per context token (fresh processes, chunked prefill) vs edgeopt's prediction."""
    from edgeopt.bench.llm.stats import kv_cache_bytes

    cfg = json.loads((args.work / "hf" / "config.json").read_text())
    facts = {"layers": cfg["num_hidden_layers"], "kv_heads": cfg["num_key_value_heads"],
             "head_size": cfg["hidden_size"] // cfg["num_attention_heads"]}
    out: dict[str, Any] = {"model": args.kv_model, "chunk": args.chunk, "depths": args.depths, "prompt": 16,
                           "gen": 8, "facts": facts}
    out["ov_warm_up"] = args.ov_warm
    if not args.ov_only:
        ort = _kv_points(KV_ORT, args.work / args.kv_model / "onnxruntime_genai", [], args)
        dtype_bytes = np.dtype(ort[0]["present_dtype"]).itemsize
        predicted = kv_cache_bytes(facts, 1, 1, dtype_bytes)
        fit = _fit([r["depth"] for r in ort], [r["held"] for r in ort])
        out["onnxruntime_genai"] = {"points": ort, "fit": fit, "kv_dtype": ort[0]["present_dtype"],
                                    "predicted_bytes_per_token": predicted,
                                    "ratio_predicted_to_measured": round(predicted / fit["bytes_per_token"], 4)}
    for precision in args.ov_precisions.split(","):
        rows = _kv_points(KV_OV, args.work / args.kv_model / "openvino_genai", [precision, str(int(args.ov_warm))],
                          args)
        fit = _fit([r["depth"] for r in rows], [r["held"] for r in rows])
        # edgeopt's formula with the cache's element type (the CPU plugin's default is u8 + an f32 scale and zero
        # point per token and head), and the fp32 it assumed before session 7
        kind = rows[0]["core_kv_precision"] if precision.partition("@")[0] == "default" else precision.partition("@")[0]
        elem = {"u8": 1, "uint8_t": 1, "bf16": 2, "f16": 2, "f32": 4}.get(kind.replace("<Type: '", "").rstrip("'>"), 4)
        pred = kv_cache_bytes(facts, 1, 1, elem, 8 if elem == 1 else 0)
        out[f"openvino_genai[{precision}]"] = {
            "points": rows, "fit": fit, "predicted_bytes_per_token": pred,
            "ratio_predicted_to_measured": round(pred / fit["bytes_per_token"], 4),
            "fp32_assumption_bytes_per_token": kv_cache_bytes(facts, 1, 1, 4)}
    return out


class _E2eGenerator:
    """``og.Generator`` with every call also timed the way benchmark_e2e.py times it (``time.perf_counter``
    around the call): prompt = ``append_tokens``; sampling = the first ``generate_next_token`` and the
    ``is_done`` after it; token generation = each later ``generate_next_token`` and the ``is_done`` after it."""

    def __init__(self, real: Any, log: list[dict[str, Any]]) -> None:
        self._g = real
        self._rec: dict[str, Any] = {"append": [], "next": [], "done": []}
        log.append(self._rec)

    def append_tokens(self, ids: Any) -> None:
        a = time.perf_counter()
        self._g.append_tokens(ids)
        self._rec["append"].append(time.perf_counter() - a)

    def generate_next_token(self) -> None:
        a = time.perf_counter()
        self._g.generate_next_token()
        self._rec["next"].append([len(self._rec["done"]), time.perf_counter() - a])

    def is_done(self) -> bool:
        a = time.perf_counter()
        done = self._g.is_done()
        self._rec["done"].append(time.perf_counter() - a)
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self._g, name)


def _e2e_times(rec: dict[str, Any]) -> tuple[float, list[float]]:
    """(TTFT, token generation times) of one generation in benchmark_e2e.py's terms, seconds. The agent calls
    ``is_done`` before each later ``generate_next_token``, so call k's ``is_done`` is the next one recorded; the
    last token has none (the loop ends on the count): the median ``is_done`` stands in (microseconds)."""
    done = rec["done"]
    fill = float(np.median(done)) if done else 0.0
    per = [t + (done[i] if i < len(done) else fill) for i, t in rec["next"]]
    return rec["append"][-1] + per[0], per[1:]


def _boot(pairs: list[tuple[float, float]], stat: Any, n: int = 4000) -> list[float]:
    """95 % bootstrap interval of stat(edgeopt) / stat(e2e) over repetitions resampled in pairs."""
    rng = np.random.default_rng(0)
    idx = np.arange(len(pairs))
    ratios = []
    for _ in range(n):
        pick = rng.choice(idx, size=len(idx))
        a = [x for i in pick for x in np.atleast_1d(pairs[i][0])]
        b = [x for i in pick for x in np.atleast_1d(pairs[i][1])]
        ratios.append(stat(a) / stat(b))
    return [round(float(np.percentile(ratios, 2.5)), 4), round(float(np.percentile(ratios, 97.5)), 4)]


def _same_generations(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The agent's generate command in this process, its og.Generator wrapped; edgeopt's cell vs e2e."""
    from edgeopt.bench.llm.api import _energy_request, _result
    from edgeopt.bench.llm.workload import LlmWorkload
    from edgeopt.settings import EnergySettings
    from edgeopt.targets import load_registry
    from edgeopt_agent import generate as agent_generate
    from edgeopt_agent import runtimes
    from edgeopt_agent.protocol import Request
    from edgeopt_agent.runtimes.ortgenai_rt import OrtGenaiRuntime

    log: list[dict[str, Any]] = []
    rt = OrtGenaiRuntime()
    real = rt._og
    rt._og = type("og", (), {"__getattr__": lambda self, n: getattr(real, n),
                             "Generator": staticmethod(lambda m, p: _E2eGenerator(real.Generator(m, p), log))})()
    wl = LlmWorkload(prompt_tokens=(args.prompt,), gen_tokens=(args.gen,), repetitions=args.reps, warmup=1,
                     max_duration_s=1800)
    tgt = load_registry().get("local")
    request = Request(model_path=str(folder), runtime="onnxruntime_genai", generate=wl.request_dict(),
                      max_duration_s=wl.max_duration_s, energy=_energy_request(tgt, EnergySettings()))
    create = runtimes.create
    runtimes.create = lambda name: rt
    try:
        raw = agent_generate.generate(request, lambda event: None)
    finally:
        runtimes.create = create
    if raw.status != "ok":
        raise RuntimeError(raw.error)
    cell = _result(raw, folder, "onnxruntime_genai", wl, "in-process", tgt).cells[0]
    timed = log[-args.reps:]  # the warm-up generation comes first
    e2e = [_e2e_times(r) for r in timed]
    ours = [(t, s) for t, s in zip(cell.samples.ttft_ms, _split(cell.samples.tpot_ms, args.reps), strict=True)]
    ttft_pairs = [(o[0], e[0] * 1e3) for o, e in zip(ours, e2e, strict=True)]
    tok_pairs = [(o[1], [x * 1e3 for x in e[1]]) for o, e in zip(ours, e2e, strict=True)]
    e2e_ttft = [p[1] for p in ttft_pairs]
    e2e_tok = [x for p in tok_pairs for x in p[1]]
    rows = {
        "ttft_p50_vs_e2e_median": (cell.ttft_ms_p50, float(np.median(e2e_ttft)), np.median, ttft_pairs),
        "ttft_mean_vs_e2e_mean": (float(np.mean(cell.samples.ttft_ms)), float(np.mean(e2e_ttft)), np.mean,
                                  ttft_pairs),
        "tpot_mean_vs_e2e_mean": (cell.tpot_ms_mean, float(np.mean(e2e_tok)), np.mean, tok_pairs),
        "tpot_p50_vs_e2e_median": (cell.tpot_ms_p50, float(np.median(e2e_tok)), np.median, tok_pairs),
    }
    out: dict[str, Any] = {"reps": args.reps, "prompt": args.prompt, "gen": args.gen,
                           "decode_tokens_per_s": cell.decode_tokens_per_s, "valid": cell.valid}
    for name, (ours_v, theirs, stat, pairs) in rows.items():
        out[name] = {"edgeopt_ms": round(ours_v, 4), "benchmark_e2e_ms": round(theirs, 4),
                     "ratio": round(ours_v / theirs, 5), "ci95": _boot(pairs, stat)}
    out["per_rep"] = {"edgeopt_ttft_ms": cell.samples.ttft_ms, "e2e_ttft_ms": e2e_ttft,
                      "edgeopt_tpot_mean_ms": [float(np.mean(p[0])) for p in tok_pairs],
                      "e2e_tpot_mean_ms": [float(np.mean(p[1])) for p in tok_pairs]}
    return out


def _split(values: list[float], parts: int) -> list[list[float]]:
    n = len(values) // parts
    return [values[i * n:(i + 1) * n] for i in range(parts)]


def timing(args: argparse.Namespace) -> dict[str, Any]:
    """Goal: edgeopt's TTFT/TPOT within 3 % of benchmark_e2e.py's timing, same generations, per model."""
    out = {}
    for recipe in args.timing_models.split(","):
        print(f"  timing {recipe}", file=sys.stderr)
        out[recipe] = _same_generations(args.work / recipe / "onnxruntime_genai", args)
    return out


def scaling(args: argparse.Namespace) -> dict[str, Any]:
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
                "size_mb": round(_size(folder) / 2**20, 1), "load_ms": round(c.load_ms or 0, 1),
                "load_rss_growth_mb": res.loads[0].rss_growth_mb, "ttft_ms_p50": c.ttft_ms_p50,
                "prefill_tokens_per_s": c.prefill_tokens_per_s, "tpot_ms_p50": c.tpot_ms_p50,
                "tpot_ms_mean": c.tpot_ms_mean, "decode_tokens_per_s": c.decode_tokens_per_s,
                "peak_rss_mb": c.peak_rss_mb, "kv_cache_bytes": c.kv_cache_bytes,
                "kv_cache_bytes_allocated": c.kv_cache_bytes_allocated, "repetitions": c.repetitions,
                "valid": c.valid, "invalid_reasons": c.invalid_reasons}
    return {"prompt": args.prompt, "gen": args.gen, "reps": args.scaling_reps, "threads": "runtime default (2 cores)",
            "cells": out}


def _timing_row(doc: dict[str, Any]) -> str:
    parts = []
    for key in ("timing_int4", "timing_fp32", "timing"):
        for recipe, t in (doc.get(key) or {}).items():
            if not isinstance(t, dict) or "tpot_mean_vs_e2e_mean" not in t:
                continue
            cells = []
            for name, label in (("ttft_p50_vs_e2e_median", "TTFT p50/median"), ("ttft_mean_vs_e2e_mean", "TTFT mean"),
                                ("tpot_mean_vs_e2e_mean", "TPOT mean"), ("tpot_p50_vs_e2e_median", "TPOT p50/median")):
                r = t[name]
                cells.append(f"{label} {r['edgeopt_ms']:.2f}/{r['benchmark_e2e_ms']:.2f} ms = **{r['ratio']:.4f}** "
                             f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]")
            parts.append(f"{recipe} ({t['reps']} reps x {t['gen']} tokens): " + "; ".join(cells))
    return "<br>".join(parts)


def _kv_rows(doc: dict[str, Any]) -> list[str]:
    rows = []
    for key in ("kv", "kv_ov_warm", "kv_ov_warm2"):
        for name, v in (doc.get(key) or {}).items():
            if isinstance(v, dict) and "fit" in v:
                pred = v.get("predicted_bytes_per_token") or v.get("edgeopt_predicted_bytes_per_token")  # old runs
                held = ", ".join(f"{p['depth']}: {p['held'] / 2**20:.1f}" for p in v["points"])
                rows.append(f"| {name} | {key} | {held} | {v['fit']['bytes_per_token']:,.0f} | "
                            f"{v['fit']['max_residual_mb']} | {pred:,} |")
    return rows


def _scaling_rows(doc: dict[str, Any]) -> list[str]:
    rows = []
    for key in ("scaling", "scaling_int8"):
        for name, c in ((doc.get(key) or {}).get("cells") or {}).items():
            if "error" in c:
                rows.append(f"| {name} | error: {c['error']} |")
                continue
            rows.append(f"| {name} | {c['size_mb']:,.0f} | {c['load_ms'] / 1e3:.1f} | {c['ttft_ms_p50']:.0f} | "
                        f"{c['prefill_tokens_per_s']:.0f} | {c['tpot_ms_p50']:.1f} | {c['decode_tokens_per_s']:.1f} | "
                        f"{c['peak_rss_mb']:,.0f} |")
    return rows


def report(args: argparse.Namespace) -> dict[str, Any]:
    """Markdown of what the other steps wrote (docs/benchmarks.md); runs nothing."""
    doc = json.loads(args.out.read_text())
    print(_timing_row(doc))
    print("\n".join(_kv_rows(doc)))
    print("\n".join(_scaling_rows(doc)))
    return {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("build", "kv", "timing", "scaling", "report"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/edgeopt-05b"))
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--recipes", default="fp32,int8,int4")
    ap.add_argument("--kv-model", default="int4", help="recipe folder of the kv step")
    ap.add_argument("--depths", type=lambda v: [int(x) for x in v.split(",")], default=[0, 512, 1024, 1536, 2048])
    ap.add_argument("--chunk", type=int, default=16, help="tokens per prefill step in the kv step")
    ap.add_argument("--ov-precisions", default="default,bf16,f32",
                    help="kv step: KV_CACHE_PRECISION values, each optionally @GB: a preset cache_size")
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--reps", type=int, default=12, help="repetitions of the timing step")
    ap.add_argument("--scaling-reps", type=int, default=5)
    ap.add_argument("--timing-models", default="fp32,int4")
    ap.add_argument("--ov-only", action="store_true", help="kv step: OpenVINO GenAI only")
    ap.add_argument("--ov-warm", action="store_true", help="kv step: one short generation before the window")
    ap.add_argument("--key", help="result key (default: the step name)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks/results/llm_05b.json")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if args.step == "report":
        report(args)
        return 0
    result = {"build": build, "kv": kv, "timing": timing, "scaling": scaling}[args.step](args)
    result["step_s"] = round(time.perf_counter() - t0, 1)
    _merge(args.out, args.key or args.step, result)
    print(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
