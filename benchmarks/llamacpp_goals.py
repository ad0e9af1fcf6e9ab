"""Issue 33's llama.cpp goals, ratios measured in one run on this machine.

1. **Timing** (goal: within 3 %): edgeopt's pp (prefill tokens/s) and tg (decode tokens/s) of a GGUF vs llama.cpp's
   own performance counters (``llama_perf_context``: ``n_p_eval / t_p_eval``, ``n_eval / t_eval``) of a plain run
   of the same GGUF, prompt and generation lengths, threads, context and batch sizes. The plain run is
   ``llama-bench``'s loop (llama-cpp-python builds no ``llama-bench`` binary) in its own process, on llama.cpp's C
   API only: ``llama_decode`` of the prompt, ``llama_synchronize``, then one ``llama_decode`` + synchronize per
   generated token, the memory cleared between repetitions. The two alternate in interleaved rounds; the ratio
   per round (edgeopt / plain) is summarised as its median, min/max and a bootstrap interval of the mean. edgeopt's
   own run also returns llama.cpp's counters beside its wall clock: both are kept. Then the same in one process
   (:mod:`benchmarks.llamacpp.same_process`, ``--pairs``): edgeopt's token loop and llama-bench's alternating,
   generation by generation, so the processes' difference (4-11 % on this project's VMs) drops out.
2. **Q4_K_M vs F16** (goal: decode >= 2.5x): on a random-weight Qwen2 at Qwen2-0.5B's shapes (the builder of
   ``llm_goals.py --qwen05b``: hidden 896, 24 layers, vocabulary 8,192), converted once by ``optimize_llm`` with the
   ``gguf-f16`` and ``q4_k_m`` recipes and cached under ``out/llamacpp-goals/`` keyed by shape and llama.cpp
   version; edgeopt's decode tokens/s of each, in the same interleaved rounds. The real tensor type mix of each
   GGUF is recorded (llama.cpp falls back silently on rows its block does not divide).
3. **Sweep** (goal: the same answer twice): the trained zoo LLM (``tiny-llama-trained``) swept by ``edgeopt sweep``
   over the GGUF levels and the other installed generative runtimes' levels, at next-token (top-1) agreement >=
   0.95 against each runtime's FP32 export, twice, each into a fresh output folder (nothing reused): the
   recommended level, its retention, KL and perplexity, the reason (with the TPOT interval) and whether both runs
   name the same level. Then once more over the GGUF levels alone (``--runtimes llama_cpp``): the GGUF a llama.cpp
   user would ship at that threshold, with its top-1, KL and perplexity.

Usage: python -m benchmarks.llamacpp_goals [--rounds 4] [--pairs 30] [--prompt 64] [--gen 32] [--reps 3] [--threads N]
       [--levels ...] [--skip-qwen] [--skip-sweep] [--quick] [--out benchmarks/results/llamacpp_goals.json]
``--quick`` is a smoke run (a 2-layer Qwen2, 2 rounds, short generations, a 40-step zoo model, a few levels): its
numbers are not the result. Run the full one alone on a quiet machine: on 2 cores another job moves every number.
Time on 2 cores (estimated from the smoke runs' CPU time): ~10 min with the caches warm (the zoo LLM in the zoo
cache, the GGUFs in ``out/llamacpp-goals/``); the first run also trains the zoo LLM (~5 min) and builds the two
0.5B GGUFs (~3 min, ~1 GB on disk).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, machine_facts, print_table, write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.llamacpp.models import CACHE, timing_ggufs  # noqa: E402 - after HF_HUB_OFFLINE
from benchmarks.llamacpp.same_process import same_process_goal  # noqa: E402
from benchmarks.llamacpp.sweep import SWEEP_LEVELS, sweep_goal  # noqa: E402
from benchmarks.llamacpp.timing import decode_goal, timing_goal, timing_rounds  # noqa: E402

DISTS = ("llama-cpp-python", "onnxruntime-genai", "openvino", "openvino-genai", "torch", "transformers", "numpy")
SIMD_PREFIXES = ("avx", "sse", "ssse", "fma", "f16c", "bmi", "amx", "vnni", "neon", "asimd", "sve", "dotprod", "i8mm")
QUICK_LEVELS = "q4_0,q8_0,int8"


def _cpu_flags() -> list[str]:
    from edgeopt_agent.environment import cpu_flags

    return [f for f in cpu_flags() if f.startswith(SIMD_PREFIXES)]


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
                 "vs the plain loop's wall clock", "verdict"],
                [[k, _f(t[k]["edgeopt_tokens_per_s"]), _f(t[k]["llama_cpp_counters_tokens_per_s"]),
                  _interval(t[k]["ratio"]), _interval(t[k]["edgeopt_run_counters_ratio"]),
                  _interval(t[k]["plain_loop_wall_ratio"]), t[k]["verdict"]] for k in ("pp", "tg")])
    one = t.get("same_process")
    if one is not None:
        print(f"\n1b. in one process, {one['pairs']} alternating pairs: edgeopt's token loop (the agent's llama_cpp "
              "runtime) vs llama-bench's loop, wall clock as each caller sees it")
        print_table(["", "edgeopt tok/s", "llama-bench loop tok/s", "ratio", "verdict"],
                    [[k, _f(one[k]["edgeopt_tokens_per_s"]), _f(one[k]["plain_loop_tokens_per_s"]),
                      _interval(one[k]["ratio"]), one[k]["verdict"]] for k in ("pp", "tg")])
    if "q4_k_m_vs_f16" in doc:
        d, q = doc["q4_k_m_vs_f16"], doc["qwen"]
        print(f"\n2. Q4_K_M vs F16 decode, {q['parameters'] / 1e6:.0f} M parameters (goal: >= 2.5x)")
        print_table(["GGUF", "MB", "tensor types", "decode tok/s", "file GB/s"],
                    [[lv, f"{q['levels'][lv]['bytes'] / 2**20:.0f}",
                      ", ".join(f"{n} {ty}" for ty, n in q["levels"][lv]["report"]["tensor_types"].items()),
                      _f(d[f"{lv}_tg_tokens_per_s"]), _f(d.get("weight_gb_per_s", {}).get(lv), "{:.2f}")]
                     for lv in ("f16", "q4_k_m")])
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
        g = s.get("gguf_only")
        if g is not None:
            print(f"\n4. the GGUF levels alone (llama_cpp), {s['metric']}: the level a llama.cpp user would ship")
            print_table(["level", "passed", "top-1", "KL (nats)", "ppl (ref)", "tok/s", "size MB"],
                        [[r["level"] + (" *" if r["level"] == g["recommended"] else ""), r["passed"],
                          _f(r["top1"], "{:.4f}"), _f(r["kl_nats"], "{:.2e}"),
                          f"{_f(r['ppl'], '{:.2f}')} ({_f(r['ppl_reference'], '{:.2f}')})",
                          _f(r["rank_tokens_per_s"]), _f(r["size_bytes"] and r["size_bytes"] / 1e6, "{:.2f}")]
                         for r in g["levels"]])
            print(f"recommended (*): {g['recommended'] or g['binding_constraint']}; reason: {g['reason']}")


QUICK = {"rounds": 2, "pairs": 4, "prompt": 32, "gen": 16, "reps": 2, "qwen_layers": 2, "train_steps": 40,
         "levels": QUICK_LEVELS}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4, help="interleaved timing rounds")
    ap.add_argument("--prompt", type=int, default=64, help="prompt tokens (pp)")
    ap.add_argument("--gen", type=int, default=32, help="generated tokens (tg: gen - 1 decode steps)")
    ap.add_argument("--reps", type=int, default=3, help="timed generations per run (after 1 warm-up)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads (all runs)")
    ap.add_argument("--n-ctx", type=int, default=512, help="context size of every run")
    ap.add_argument("--n-batch", type=int, default=512, help="llama.cpp batch (and micro-batch) size")
    ap.add_argument("--pairs", type=int, default=30, help="goal 1 in one process: alternating generations of "
                    "edgeopt's token loop and llama-bench's (0: none)")
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
        if args.pairs > 0:
            print(f"same-process pairs ({timed})", file=sys.stderr)
            doc["timing"]["same_process"] = same_process_goal(ggufs[timed], args, args.pairs)
        if "f16" in ggufs:
            doc["q4_k_m_vs_f16"] = decode_goal(rows, args, {lv: v["bytes"] for lv, v in doc["qwen"]["levels"].items()})
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
