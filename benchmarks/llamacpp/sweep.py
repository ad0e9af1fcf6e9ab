"""Goal 3 of issue 33: the trained zoo LLM swept by ``edgeopt sweep`` over every installed generative runtime (the
registry's, as the sweep itself picks them), twice, each into a fresh folder: the same answer twice."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, read_json
from benchmarks.llamacpp.models import zoo_model
from edgeopt.registry import runtimes_of_kind
from edgeopt.registry.kind_spec import GENERATIVE

GGUF_LEVELS = "q4_0,q4_k_m,q5_k_m,q6_k,q8_0,f16"
SWEEP_LEVELS = f"{GGUF_LEVELS},int8,int4-b32-rtn,int4-g32"
MIN_AGREEMENT = 0.95


def installed_runtimes() -> list[str]:
    """The generative runtimes whose library this Python has (the registry's, in its order)."""
    return [r.name for r in runtimes_of_kind(GENERATIVE) if r.installed_here()]


def sweep_once(model: Path, eval_text: Path, out: Path, args: argparse.Namespace, runtimes: list[str],
               levels: str | None = None) -> dict[str, Any]:
    """``edgeopt sweep`` (the CLI, its own process) into the fresh folder ``out``; the summary of its sweep.json."""
    cmd = [sys.executable, "-m", "edgeopt", "sweep", str(model), "--eval", str(eval_text), "--metric", "top1",
           "--min-retention", str(MIN_AGREEMENT), "--runtimes", ",".join(runtimes), "--levels", levels or args.levels,
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


def sweep_goal(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Goal 3: the trained zoo LLM swept twice, each into a fresh folder."""
    from edgeopt.zoo.llm_corpus import corpus_texts, split_texts

    model, built_s = zoo_model(work, args)
    facts = read_json(model / "zoo_llm.json")
    eval_text = work / "eval.txt"
    eval_text.write_text("\n".join(split_texts(corpus_texts())[1]), encoding="utf-8")
    runtimes = installed_runtimes()
    runs = []
    for i in (1, 2):
        print(f"  sweep {i}/2 ({', '.join(runtimes)})", file=sys.stderr)
        runs.append(sweep_once(model, eval_text, work / f"sweep-{i}", args, runtimes))
    same = runs[0]["recommended"] == runs[1]["recommended"]
    gguf = None
    if "llama_cpp" in runtimes:  # the GGUF level a llama.cpp user would ship: its top-1, KL and perplexity
        print("  sweep of the GGUF levels alone (llama_cpp)", file=sys.stderr)
        gguf = sweep_once(model, eval_text, work / "sweep-gguf", args, ["llama_cpp"], GGUF_LEVELS)
    return {"model": {k: facts.get(k) for k in ("parameters", "config", "train", "final_loss", "held_out_loss",
                                                 "tokens_seen", "train_seconds")},
            "model_build_s": built_s, "runtimes": runtimes,
            "levels_asked": args.levels, "metric": f"top1 >= {MIN_AGREEMENT}", "runs": runs, "same_answer": same,
            "verdict": "pass" if same and runs[0]["recommended"] else "fail", "gguf_only": gguf}
