"""Goals 1 and 2 of issue 33 from interleaved rounds: edgeopt's ``bench`` of a GGUF beside the plain llama.cpp run
(:mod:`.plain_loop`), the order rotated each round, and the per-round ratios' median, range and bootstrap interval."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import REPO
from edgeopt.bench.llm import LlmWorkload, bench_llm
from edgeopt.settings import EnergySettings


def _median(values: list[float]) -> float:
    return float(np.median(values))


def plain_run(gguf: Path, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    """llama.cpp's counters of a plain run (:mod:`.plain_loop` in a child process, under the machine's device lock as
    edgeopt's local runs are, so neither measures another local run): median pp and tg tokens/s."""
    from edgeopt.config import from_environment
    from edgeopt_agent.lock import DeviceLock

    cmd = [sys.executable, "-m", "benchmarks.llamacpp.plain_loop", str(gguf),
           *map(str, (args.n_ctx, args.n_batch, args.threads, args.prompt, args.gen, args.reps, 1, seed))]
    lock = DeviceLock(str(from_environment().lock_dir))
    lock.acquire(1800.0)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=1800, cwd=REPO)
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
        # the plain loop's own wall clock: llama-bench's loop (decode + synchronize, no sampling) as a caller times it;
        # at 0.33 ms a token it reads 3 % slower than llama.cpp's counters itself (session 19)
        loop = paired([m[f"{key}_tokens_per_s"] for m in mine], [p[f"wall_{key}_tokens_per_s"] for p in plain],
                      args.seed)
        out[key] = {"edgeopt_tokens_per_s": _median([m[f"{key}_tokens_per_s"] for m in mine]),
                    "llama_cpp_counters_tokens_per_s": _median([p[f"{key}_tokens_per_s"] for p in plain]),
                    "plain_loop_wall_tokens_per_s": _median([p[f"wall_{key}_tokens_per_s"] for p in plain]),
                    "ratio": wall, "verdict": within(wall, 0.03),
                    "edgeopt_run_counters_ratio": own, "plain_loop_wall_ratio": loop}
    return out


def decode_goal(rows: dict[str, list[dict[str, Any]]], args: argparse.Namespace,
                file_bytes: dict[str, int]) -> dict[str, Any]:
    """Goal 2 from the rounds: Q4_K_M decode over F16 decode by edgeopt's decode tokens/s (the verdict), its agent's
    llama.cpp counters and the median token times (what the sweep ranks on: one descheduled token moves it least);
    and per GGUF (``file_bytes``: level -> its size) the weight stream its decode sustained. Decode reads every
    weight once per token, so file bytes x tokens/s is that stream: equal streams mean both are memory-bound (the
    ratio then follows the bytes); a lower one for the smaller file means its dequantisation, not memory, sets its
    speed."""
    q4, f16 = rows["edgeopt:q4_k_m"], rows["edgeopt:f16"]
    wall = paired([r["tg_tokens_per_s"] for r in q4], [r["tg_tokens_per_s"] for r in f16], args.seed)
    own = paired([r["counter_tg_tokens_per_s"] for r in q4], [r["counter_tg_tokens_per_s"] for r in f16], args.seed)
    p50 = paired([r["tpot_ms_p50"] for r in f16], [r["tpot_ms_p50"] for r in q4], args.seed)
    tps = {"q4_k_m": _median([r["tg_tokens_per_s"] for r in q4]), "f16": _median([r["tg_tokens_per_s"] for r in f16])}
    return {"q4_k_m_tg_tokens_per_s": tps["q4_k_m"], "f16_tg_tokens_per_s": tps["f16"],
            "ratio": wall, "verdict": at_least(wall, 2.5), "counters_ratio": own, "tpot_p50_ratio": p50,
            "weight_gb_per_s": {lv: round(file_bytes[lv] * t / 1e9, 2) for lv, t in tps.items()}}
