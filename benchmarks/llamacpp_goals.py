"""Issue 33's llama.cpp goals, ratios measured in one run on this machine.

1. **Timing** (goal: within 3 %): edgeopt's pp (prefill tokens/s) and tg (decode tokens/s) of a GGUF vs llama.cpp's
   own performance counters (``llama_perf_context``: ``n_p_eval / t_p_eval``, ``n_eval / t_eval``) of a plain run
   of the same GGUF, prompt and generation lengths, threads, context and batch sizes. The plain run is
   ``llama-bench``'s loop (llama-cpp-python builds no ``llama-bench`` binary) in its own process, on llama.cpp's C
   API only: ``llama_decode`` of the prompt, ``llama_synchronize``, then one ``llama_decode`` + synchronize per
   generated token, the memory cleared between repetitions. The two alternate in interleaved rounds; the ratio
   per round (edgeopt / plain) is summarised as its median, min/max and a bootstrap interval of the mean. edgeopt's
   own run also returns llama.cpp's counters beside its wall clock: both are kept.
2. **Q4_K_M vs F16** (goal: decode >= 2.5x): on a random-weight Qwen2 at Qwen2-0.5B's shapes (the builder of
   ``llm_goals.py --qwen05b``: hidden 896, 24 layers, vocabulary 8,192), converted once by ``optimize_llm`` with the
   ``gguf-f16`` and ``q4_k_m`` recipes and cached under ``out/llamacpp-goals/`` keyed by shape and llama.cpp
   version; edgeopt's decode tokens/s of each, in the same interleaved rounds. The real tensor type mix of each
   GGUF is recorded (llama.cpp falls back silently on rows its block does not divide).
3. **Sweep** (goal: the same answer twice): the trained zoo LLM (``tiny-llama-trained``) swept by ``edgeopt sweep``
   over the GGUF levels and the other installed generative runtimes' levels, at next-token (top-1) agreement >=
   0.95 against each runtime's FP32 export, twice, each into a fresh output folder (nothing reused): the
   recommended level, its retention, KL and perplexity, the reason (with the TPOT interval) and whether both runs
   name the same level.

Usage: python -m benchmarks.llamacpp_goals [--rounds 4] [--prompt 64] [--gen 32] [--reps 3] [--threads N]
       [--levels ...] [--skip-qwen] [--skip-sweep] [--quick] [--out benchmarks/results/llamacpp_goals.json]
``--quick`` is a smoke run (a 2-layer Qwen2, 2 rounds, short generations, a 40-step zoo model, a few levels): its
numbers are not the result. Run the full one alone on a quiet machine: on 2 cores another job moves every number.
Time on 2 cores (estimated from the smoke runs' CPU time): ~10 min with the caches warm (the zoo LLM in the zoo
cache, the GGUFs in ``out/llamacpp-goals/``); the first run also trains the zoo LLM (~5 min) and builds the two
0.5B GGUFs (~3 min, ~1 GB on disk).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
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

from benchmarks.common import REPO, RESULTS, machine_facts, print_table, read_json, write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.llm.optimize import optimize_llm
from edgeopt.settings import EnergySettings

CACHE = REPO / "out" / "llamacpp-goals"
DISTS = ("llama-cpp-python", "onnxruntime-genai", "openvino", "openvino-genai", "torch", "transformers", "numpy")
SIMD_PREFIXES = ("avx", "sse", "ssse", "fma", "f16c", "bmi", "amx", "vnni", "neon", "asimd", "sve", "dotprod", "i8mm")
GENERATIVE = {"llama_cpp": "llama_cpp", "onnxruntime_genai": "onnxruntime_genai", "openvino_genai": "openvino_genai"}
SWEEP_LEVELS = "q4_0,q4_k_m,q5_k_m,q6_k,q8_0,f16,int8,int4-b32-rtn,int4-g32"
QUICK_LEVELS = "q4_0,q8_0,int8"
MIN_AGREEMENT = 0.95

# llama-bench's loop (its test_prompt + test_gen, one sequence), standalone on llama.cpp's C API: one JSON line with
# llama.cpp's counters and the wall clock of every timed repetition.
PLAIN_LOOP = r"""
import json, sys, time
import numpy as np
import llama_cpp as lc
path = sys.argv[1]
n_ctx, n_batch, threads, prompt_len, gen_len, reps, warmup, seed = map(int, sys.argv[2:10])
lc.llama_backend_init()
mp = lc.llama_model_default_params()
mp.n_gpu_layers = 0
model = lc.llama_model_load_from_file(path.encode(), mp)
cp = lc.llama_context_default_params()
cp.n_ctx, cp.n_batch, cp.n_ubatch = n_ctx, n_batch, n_batch
cp.n_threads = cp.n_threads_batch = threads
cp.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
cp.no_perf = False
ctx = lc.llama_init_from_model(model, cp)
n_vocab = lc.llama_vocab_n_tokens(lc.llama_model_get_vocab(model))
mem = lc.llama_get_memory(ctx)
rng = np.random.default_rng(seed)
def decode(ids):
    arr = (lc.llama_token * len(ids))(*ids)
    rc = lc.llama_decode(ctx, lc.llama_batch_get_one(arr, len(ids)))
    if rc != 0:
        raise SystemExit("llama_decode returned %d" % rc)
out = {"n_p_eval": [], "t_p_eval_ms": [], "n_eval": [], "t_eval_ms": [], "wall_pp_s": [], "wall_tg_s": [],
       "threads": lc.llama_n_threads(ctx), "n_ctx": lc.llama_n_ctx(ctx),
       "system_info": lc.llama_print_system_info().decode(errors="replace")}
for rep in range(warmup + reps):
    lc.llama_memory_clear(mem, True)
    prompt = [int(t) for t in rng.integers(2, n_vocab, size=prompt_len)]
    lc.llama_perf_context_reset(ctx)
    t0 = time.perf_counter()
    for i in range(0, prompt_len, n_batch):
        decode(prompt[i:i + n_batch])
    lc.llama_synchronize(ctx)
    t1 = time.perf_counter()
    for _ in range(gen_len - 1):
        decode([int(rng.integers(2, n_vocab))])
        lc.llama_synchronize(ctx)
    t2 = time.perf_counter()
    d = lc.llama_perf_context(ctx)
    if rep >= warmup:
        for k in ("n_p_eval", "t_p_eval_ms", "n_eval", "t_eval_ms"):
            out[k].append(float(getattr(d, k)))
        out["wall_pp_s"].append(t1 - t0)
        out["wall_tg_s"].append(t2 - t1)
lc.llama_free(ctx)
lc.llama_model_free(model)
print(json.dumps(out))
"""


def _median(values: list[float]) -> float:
    return float(np.median(values))


def plain_run(gguf: Path, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """llama.cpp's counters of a plain run (PLAIN_LOOP in a child process, under the machine's device lock as
    edgeopt's local runs are, so neither measures another local run): median pp and tg tokens/s."""
    from edgeopt.config import from_environment
    from edgeopt_agent.lock import DeviceLock

    cmd = [sys.executable, "-c", PLAIN_LOOP, str(gguf), *map(str, (args.n_ctx, args.n_batch, args.threads,
                                                                    args.prompt, args.gen, args.reps, 1, seed))]
    lock = DeviceLock(str(from_environment().lock_dir))
    lock.acquire(1800.0)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800)
    finally:
        lock.release()
    if proc.returncode != 0:
        raise SystemExit(f"the plain llama.cpp run failed on {gguf}: {proc.stderr.strip()[-400:]}")
    t = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"pp_tokens_per_s": _median([n / (ms / 1e3) for n, ms in zip(t["n_p_eval"], t["t_p_eval_ms"], strict=True)]),
            "tg_tokens_per_s": _median([n / (ms / 1e3) for n, ms in zip(t["n_eval"], t["t_eval_ms"], strict=True)]),
            "wall_pp_tokens_per_s": _median([args.prompt / s for s in t["wall_pp_s"]]),
            "wall_tg_tokens_per_s": _median([(args.gen - 1) / s for s in t["wall_tg_s"]]),
            "n_p_eval": t["n_p_eval"], "n_eval": t["n_eval"], "threads": t["threads"], "n_ctx": t["n_ctx"],
            "system_info": t["system_info"]}


def edgeopt_run(gguf: Path, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """``edgeopt.bench_llm`` of the GGUF (the agent in a child process, as ``edgeopt bench``): its wall-clock pp
    and tg and the llama.cpp counters its agent read beside them."""
    wl = LlmWorkload(prompt_tokens=(args.prompt,), gen_tokens=(args.gen,), threads=(args.threads,),
                     repetitions=args.reps, warmup=1, seed=seed, kv_probe=False)
    res = bench_llm(gguf, wl, runtime="llama_cpp", runtime_options={"n_ctx": args.n_ctx, "n_batch": args.n_batch},
                    energy=EnergySettings(enabled=False))
    cell = res.cells[0]
    own_pp = args.prompt / (cell.runtime_ttft_ms_mean / 1e3) if cell.runtime_ttft_ms_mean else None
    own_tg = 1e3 / cell.runtime_tpot_ms_mean if cell.runtime_tpot_ms_mean else None
    return {"pp_tokens_per_s": cell.prefill_tokens_per_s, "tg_tokens_per_s": cell.decode_tokens_per_s,
            "tpot_ms_p50": cell.tpot_ms_p50, "ttft_ms_p50": cell.ttft_ms_p50, "counter_pp_tokens_per_s": own_pp,
            "counter_tg_tokens_per_s": own_tg, "valid": cell.valid, "runtime": res.runtime.get("version")}


def paired(num: list[float], den: list[float], seed: int) -> dict[str, Any]:
    """Per-round ratios num/den: median, min, max, mean and a 95 % bootstrap interval of the mean (rounds
    resampled)."""
    ratios = np.array(num, dtype=float) / np.array(den, dtype=float)
    rng = np.random.default_rng(seed)
    means = rng.choice(ratios, size=(4000, len(ratios)), replace=True).mean(axis=1)
    return {"ratios": [round(float(r), 4) for r in ratios], "median": round(float(np.median(ratios)), 4),
            "min": round(float(ratios.min()), 4), "max": round(float(ratios.max()), 4),
            "mean": round(float(ratios.mean()), 4),
            "ci95": [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)]}


def within(stats: dict[str, Any], tol: float) -> str:
    """pass: the interval lies within 1 +- tol; fail: wholly outside; else inconclusive (more rounds)."""
    lo, hi = stats["ci95"]
    if 1 - tol <= lo and hi <= 1 + tol:
        return "pass"
    return "fail" if hi < 1 - tol or lo > 1 + tol else "inconclusive"


def at_least(stats: dict[str, Any], goal: float) -> str:
    lo, hi = stats["ci95"]
    return "pass" if lo >= goal else ("fail" if hi < goal else "inconclusive")


def timing_rounds(ggufs: dict[str, Path], timed: str, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Interleaved rounds: edgeopt on every GGUF plus the plain run of ``timed``, the order rotated each round,
    every run of a round on the same seed."""
    plan = [("edgeopt", name) for name in ggufs] + [("plain", timed)]
    rows: dict[str, list[dict[str, Any]]] = {f"{kind}:{name}": [] for kind, name in plan}
    for r in range(args.rounds):
        order = plan[r % len(plan):] + plan[:r % len(plan)]
        print(f"  round {r + 1}/{args.rounds}: {', '.join(f'{k}:{n}' for k, n in order)}", file=sys.stderr)
        for kind, name in order:
            run = edgeopt_run if kind == "edgeopt" else plain_run
            rows[f"{kind}:{name}"].append(run(ggufs[name], args, args.seed + r))
    return rows


def timing_goal(rows: dict[str, list[dict[str, Any]]], timed: str, args: argparse.Namespace) -> dict[str, Any]:
    """Goal 1 from the rounds: edgeopt's wall-clock pp/tg over the plain run's counters (and its own counters')."""
    mine, plain = rows[f"edgeopt:{timed}"], rows[f"plain:{timed}"]
    out: dict[str, Any] = {"gguf": timed}
    for key in ("pp", "tg"):
        wall = paired([m[f"{key}_tokens_per_s"] for m in mine], [p[f"{key}_tokens_per_s"] for p in plain], args.seed)
        own = paired([m[f"counter_{key}_tokens_per_s"] for m in mine], [p[f"{key}_tokens_per_s"] for p in plain],
                     args.seed)
        out[key] = {"edgeopt_tokens_per_s": _median([m[f"{key}_tokens_per_s"] for m in mine]),
                    "llama_cpp_counters_tokens_per_s": _median([p[f"{key}_tokens_per_s"] for p in plain]),
                    "ratio": wall, "verdict": within(wall, 0.03),
                    "edgeopt_run_counters_ratio": own}
    return out


def decode_goal(rows: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> dict[str, Any]:
    """Goal 2 from the rounds: Q4_K_M decode over F16 decode by edgeopt's decode tokens/s (the verdict), its agent's
    llama.cpp counters and the median token times (what the sweep ranks on: one descheduled token moves it least)."""
    q4, f16 = rows["edgeopt:q4_k_m"], rows["edgeopt:f16"]
    wall = paired([r["tg_tokens_per_s"] for r in q4], [r["tg_tokens_per_s"] for r in f16], args.seed)
    own = paired([r["counter_tg_tokens_per_s"] for r in q4], [r["counter_tg_tokens_per_s"] for r in f16], args.seed)
    p50 = paired([r["tpot_ms_p50"] for r in f16], [r["tpot_ms_p50"] for r in q4], args.seed)
    return {"q4_k_m_tg_tokens_per_s": _median([r["tg_tokens_per_s"] for r in q4]),
            "f16_tg_tokens_per_s": _median([r["tg_tokens_per_s"] for r in f16]),
            "ratio": wall, "verdict": at_least(wall, 2.5), "counters_ratio": own, "tpot_p50_ratio": p50}


def _gguf_of(path: str | Path) -> Path:
    p = Path(path)
    return p / "model.gguf" if p.is_dir() else p


def qwen_ggufs(layers: int) -> dict[str, Any]:
    """The Qwen2-0.5B-shaped model's F16 and Q4_K_M GGUFs, built once per shape and llama.cpp version into
    ``out/llamacpp-goals/`` (the Hugging Face folder is deleted after: ~1.4 GB at 24 layers)."""
    from benchmarks.llm_goals import build_qwen05b
    from edgeopt.llm.gguf_export import llama_cpp_version

    ident = {"shapes": "qwen2-0.5b/vocab-8192", "layers": layers, "seed": 0, "llama_cpp": llama_cpp_version()}
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    root = CACHE / f"qwen2-0.5b-L{layers}-{key}"
    done = read_json(root / "build.json")
    if done:
        return done
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    need = 4.0 * layers / 24 + 0.5  # GB at the peak: the FP32 folder, the converter's F32 GGUF, F16 and Q4_K_M
    free = shutil.disk_usage(root).free / 1e9
    if free < need:
        raise SystemExit(f"the Qwen2-0.5B-shaped GGUFs need ~{need:.1f} GB free under {CACHE} while they are built "
                         f"({free:.1f} GB free): free some space or pass --skip-qwen")
    t0 = time.perf_counter()
    src = root / ".hf"
    facts = build_qwen05b(src, layers)
    seconds: dict[str, float] = {"hf_folder_s": round(time.perf_counter() - t0, 1)}
    levels: dict[str, Any] = {}
    for level, recipe in (("f16", "gguf-f16"), ("q4_k_m", "q4_k_m")):
        t1 = time.perf_counter()
        res = optimize_llm(src, target="local", recipe=recipe, out_dir=root / level)
        art = res.artifacts[0]
        gguf = _gguf_of(art.path)
        seconds[f"{level}_s"] = round(time.perf_counter() - t1, 1)
        levels[level] = {"gguf": str(gguf), "bytes": gguf.stat().st_size, "report": art.report}
        print(f"  {level}: {seconds[f'{level}_s']} s, {gguf.stat().st_size / 2**20:.0f} MB", file=sys.stderr)
    shutil.rmtree(src)
    doc = {**ident, "parameters": facts["parameters"], "config": facts["config"], "levels": levels,
           "build_seconds": seconds, "cache": str(root)}
    write_json(root / "build.json", doc)
    return doc


def _installed_runtimes() -> list[str]:
    return [rt for rt, mod in GENERATIVE.items() if importlib.util.find_spec(mod) is not None]


def sweep_once(model: Path, eval_text: Path, out: Path, args: argparse.Namespace, runtimes: list[str]
               ) -> dict[str, Any]:
    """``edgeopt sweep`` (the CLI, its own process) into the fresh folder ``out``; the summary of its sweep.json."""
    cmd = [sys.executable, "-m", "edgeopt", "sweep", str(model), "--eval", str(eval_text), "--metric", "top1",
           "--min-retention", str(MIN_AGREEMENT), "--runtimes", ",".join(runtimes), "--levels", args.levels,
           "--threads", str(args.threads), "--out", str(out), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=REPO, timeout=3600)
    seconds = round(time.perf_counter() - t0, 1)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"edgeopt sweep exited {proc.returncode}: {proc.stderr.strip()[-600:]}")
    doc = read_json(out / "sweep.json")
    rows = [{"level": f"{lv['name']}@{lv['runtime']}", "reference": lv["reference"], "passed": lv["passed"],
             "top1": lv["retention"]["top1_agreement"], "kl_nats": lv["retention"]["kl_mean"],
             "ppl": lv["retention"]["ppl_candidate"], "ppl_reference": lv["retention"]["ppl_reference"],
             "rank_tokens_per_s": lv["rank_tokens_per_s"], "size_bytes": lv["size_bytes"], "reused": lv["reused"],
             "settings": lv["settings"]} for lv in doc["levels"]]
    rec = doc.get("recommendation")
    chosen = next((r for r in rows if rec and r["level"] == f"{rec['name']}@{rec['runtime']}"), None)
    return {"exit": proc.returncode, "seconds": seconds, "sweep_seconds": doc.get("seconds"),
            "recommended": chosen["level"] if chosen else None, "reason": rec["reason"] if rec else None,
            "binding_constraint": doc.get("binding_constraint"), "recommended_row": chosen, "levels": rows,
            "warnings": doc.get("warnings", []), "metric": doc.get("metric"), "min_retention": doc["min_retention"],
            "workload": doc.get("workload"), "retention_settings": doc.get("retention_settings")}


def zoo_model(work: Path, args: argparse.Namespace) -> tuple[Path, float]:
    """The trained zoo LLM (trained once into the zoo cache, copied from it after) and the seconds it took."""
    from edgeopt.zoo.registry import build

    model = work / "tiny-llama-trained"
    if model.is_dir():
        return model, 0.0
    t0 = time.perf_counter()
    build("tiny-llama-trained", model, train_steps=args.train_steps,
          progress=lambda text: print(f"  {text}", file=sys.stderr))
    return model, round(time.perf_counter() - t0, 1)


def sweep_goal(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Goal 3: the trained zoo LLM swept twice, each into a fresh folder."""
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    model, built_s = zoo_model(work, args)
    facts = read_json(model / "zoo_llm.json")
    eval_text = work / "eval.txt"
    eval_text.write_text("\n".join(split_texts(corpus_texts())[1]), encoding="utf-8")
    runtimes = _installed_runtimes()
    runs = []
    for i in (1, 2):
        print(f"  sweep {i}/2 ({', '.join(runtimes)})", file=sys.stderr)
        runs.append(sweep_once(model, eval_text, work / f"sweep-{i}", args, runtimes))
    same = runs[0]["recommended"] == runs[1]["recommended"]
    return {"model": {k: facts.get(k) for k in ("parameters", "config", "train", "final_loss", "held_out_loss",
                                                 "tokens_seen", "train_seconds")},
            "model_build_s": built_s, "runtimes": runtimes,
            "levels_asked": args.levels, "metric": f"top1 >= {MIN_AGREEMENT}", "runs": runs, "same_answer": same,
            "verdict": "pass" if same and runs[0]["recommended"] else "fail"}


def _cpu_flags() -> list[str]:
    from edgeopt_agent.environment import cpu_flags

    return [f for f in cpu_flags() if f.startswith(SIMD_PREFIXES)]


def timing_ggufs(work: Path, args: argparse.Namespace, doc: dict[str, Any]) -> tuple[dict[str, Path], str]:
    """The GGUFs the rounds time and the one goal 1 compares: the Qwen2-0.5B-shaped Q4_K_M (and its F16), or with
    ``--skip-qwen`` the zoo LLM's Q8_0 (a 2.4 M-parameter model: per-token overhead weighs far more there)."""
    if not args.skip_qwen:
        print(f"Qwen2-0.5B-shaped GGUFs ({args.qwen_layers} layers)", file=sys.stderr)
        doc["qwen"] = qwen_ggufs(args.qwen_layers)
        levels = doc["qwen"]["levels"]
        return {"q4_k_m": Path(levels["q4_k_m"]["gguf"]), "f16": Path(levels["f16"]["gguf"])}, "q4_k_m"
    model, built_s = zoo_model(work, args)
    res = optimize_llm(model, target="local", recipe="q8_0", out_dir=work / "zoo-q8_0")
    gguf = _gguf_of(res.artifacts[0].path)
    doc["zoo_q8_0"] = {"gguf_bytes": gguf.stat().st_size, "report": res.artifacts[0].report, "model_build_s": built_s}
    return {"zoo-q8_0": gguf}, "zoo-q8_0"


def _f(value: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if value is None else fmt.format(value)


def _interval(stats: dict[str, Any]) -> str:
    lo, hi = stats["ci95"]
    return f"{stats['median']:.4f} ({stats['min']:.4f}-{stats['max']:.4f}; {lo:.4f}-{hi:.4f})"


def report(doc: dict[str, Any]) -> None:
    """The tables (Markdown, as docs/benchmarks.md quotes them)."""
    t = doc["timing"]
    print(f"\n1. edgeopt vs llama.cpp's counters of a plain run ({t['gguf']}; goal: within 3 %); ratio median "
          "(min-max; 95 % bootstrap of the mean)")
    print_table(["", "edgeopt tok/s", "llama.cpp counters tok/s", "ratio", "edgeopt's own counters / plain",
                 "verdict"],
                [[k, _f(t[k]["edgeopt_tokens_per_s"]), _f(t[k]["llama_cpp_counters_tokens_per_s"]),
                  _interval(t[k]["ratio"]), _interval(t[k]["edgeopt_run_counters_ratio"]), t[k]["verdict"]]
                 for k in ("pp", "tg")])
    if "q4_k_m_vs_f16" in doc:
        d, q = doc["q4_k_m_vs_f16"], doc["qwen"]
        print(f"\n2. Q4_K_M vs F16 decode, {q['parameters'] / 1e6:.0f} M parameters (goal: >= 2.5x)")
        print_table(["GGUF", "MB", "tensor types", "decode tok/s"],
                    [[lv, f"{q['levels'][lv]['bytes'] / 2**20:.0f}",
                      ", ".join(f"{n} {ty}" for ty, n in q["levels"][lv]["report"]["tensor_types"].items()),
                      _f(d[f"{lv}_tg_tokens_per_s"])] for lv in ("f16", "q4_k_m")])
        print(f"ratio {_interval(d['ratio'])}: {d['verdict']}; by the agent's llama.cpp counters "
              f"{_interval(d['counters_ratio'])}; by the median token time {_interval(d['tpot_p50_ratio'])}")
    if "sweep" in doc:
        s = doc["sweep"]
        print(f"\n3. sweep of the zoo LLM, {', '.join(s['runtimes'])}, {s['metric']} (goal: the same answer twice)")
        rows = []
        for i, run in enumerate(s["runs"], 1):
            r = run["recommended_row"] or {}
            ppl = f"{_f(r.get('ppl'), '{:.2f}')} ({_f(r.get('ppl_reference'), '{:.2f}')})"
            rows.append([i, run["recommended"] or run["binding_constraint"], _f(r.get("top1"), "{:.4f}"),
                         _f(r.get("kl_nats"), "{:.2e}"), ppl, _f(r.get("rank_tokens_per_s")), run["seconds"]])
        print_table(["run", "recommended", "top-1", "KL (nats)", "ppl (ref)", "tok/s", "s"], rows)
        print(f"same answer: {s['same_answer']} ({s['verdict']}); reason: {s['runs'][0]['reason']}")


QUICK = {"rounds": 2, "prompt": 32, "gen": 16, "reps": 2, "qwen_layers": 2, "train_steps": 40, "levels": QUICK_LEVELS}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4, help="interleaved timing rounds")
    ap.add_argument("--prompt", type=int, default=64, help="prompt tokens (pp)")
    ap.add_argument("--gen", type=int, default=32, help="generated tokens (tg: gen - 1 decode steps)")
    ap.add_argument("--reps", type=int, default=3, help="timed generations per run (after 1 warm-up)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads (all runs)")
    ap.add_argument("--n-ctx", type=int, default=512, help="context size of every run")
    ap.add_argument("--n-batch", type=int, default=512, help="llama.cpp batch (and micro-batch) size")
    ap.add_argument("--seed", type=int, default=0, help="prompt ids (round r: seed + r) and the bootstrap")
    ap.add_argument("--qwen-layers", type=int, default=24, help="layers of the Qwen2-0.5B-shaped model")
    ap.add_argument("--train-steps", type=int, default=None, help="zoo LLM training steps (default: the zoo's 400)")
    ap.add_argument("--levels", default=SWEEP_LEVELS, help="the sweep's --levels")
    ap.add_argument("--skip-qwen", action="store_true", help="no 0.5B model (goal 1 on the zoo LLM's Q8_0)")
    ap.add_argument("--skip-sweep", action="store_true", help="no sweep (goal 3)")
    ap.add_argument("--quick", action="store_true", help="smoke settings: " + json.dumps(QUICK))
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default benchmarks/results/"
                                                          "llamacpp_goals.json; with --quick out/llamacpp-goals/"
                                                          "quick.json: a smoke run is not a result)")
    args = ap.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            if getattr(args, key) == ap.get_default(key):
                setattr(args, key, value)
    args.out = args.out or (CACHE / "quick.json" if args.quick else RESULTS / "llamacpp_goals.json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if importlib.util.find_spec("llama_cpp") is None:
        print("llamacpp_goals: llama-cpp-python is not installed: pip install -e '.[llamacpp]' (it compiles llama.cpp; "
              "docs/llm.md, llama.cpp)", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    doc: dict[str, Any] = {"benchmark": "llamacpp_goals", "machine": {**machine_facts(*DISTS),
                                                                       "cpu_simd_flags": _cpu_flags()},
                           "settings": {k: v for k, v in vars(args).items() if k != "out"},
                           "energy": "off in edgeopt's runs (the plain run has no sampler)"}
    with tempfile.TemporaryDirectory(prefix="edgeopt-llamacpp-goals-") as tmp:
        work = Path(tmp)
        ggufs, timed = timing_ggufs(work, args, doc)
        print(f"timing rounds ({', '.join(ggufs)})", file=sys.stderr)
        t1 = time.perf_counter()
        rows = timing_rounds(ggufs, timed, args)
        doc["timing_s"] = round(time.perf_counter() - t1, 1)
        doc["rounds"] = rows
        doc["machine"]["llama_cpp_system_info"] = rows[f"plain:{timed}"][0]["system_info"]
        for run in rows[f"plain:{timed}"]:
            run.pop("system_info")
        doc["timing"] = timing_goal(rows, timed, args)
        if "f16" in ggufs:
            doc["q4_k_m_vs_f16"] = decode_goal(rows, args)
        if not args.skip_sweep:
            print("sweeps", file=sys.stderr)
            doc["sweep"] = sweep_goal(work, args)
    doc["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    doc["total_s"] = round(time.perf_counter() - t0, 1)
    report(doc)
    write_json(args.out, doc)
    print(f"wrote {args.out} ({doc['total_s']} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
