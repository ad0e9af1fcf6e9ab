"""The models issue 33's goals time: the Qwen2-0.5B-shaped F16 and Q4_K_M GGUFs (built once, cached), the trained
zoo LLM, and which GGUFs the rounds compare."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, read_json, write_json
from edgeopt.llm.optimize import optimize_llm

CACHE = REPO / "out" / "llamacpp-goals"


def _gguf_of(path: str | Path) -> Path:
    p = Path(path)
    return p / "model.gguf" if p.is_dir() else p


def qwen_ggufs(layers: int, hidden: int = 896) -> dict[str, Any]:
    """The Qwen2-0.5B-shaped model's F16 and Q4_K_M GGUFs (``hidden``: another width, the rest as Qwen2-0.5B's),
    built once per shape and llama.cpp version into ``out/llamacpp-goals/`` (the Hugging Face folder is deleted
    after: ~1.4 GB at 24 layers)."""
    from benchmarks.llm_goals import build_qwen05b
    from edgeopt.llm.gguf_export import llama_cpp_version

    ident: dict[str, Any] = {"shapes": "qwen2-0.5b/vocab-8192", "layers": layers, "seed": 0,
                             "llama_cpp": llama_cpp_version()}
    if hidden != 896:  # Qwen2-0.5B's own width keeps the key its GGUFs were cached under
        ident["hidden"] = hidden
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    root = CACHE / (f"qwen2-0.5b-L{layers}-{key}" if hidden == 896 else f"qwen2-0.5b-w{hidden}-L{layers}-{key}")
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
    facts = build_qwen05b(src, layers, hidden)
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
