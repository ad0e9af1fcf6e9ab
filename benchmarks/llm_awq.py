"""Data-aware INT4 (AWQ, scale estimation) vs data-free INT4 on the trained zoo LLM, OpenVINO GenAI.

Issue 22 asks for AWQ and scale estimation with calibration text; this script measures what they buy on a model with
a learned distribution (``tiny-llama-trained``, docs/llm.md). Every variant is NNCF ``compress_weights`` on the same
FP32 IR through ``edgeopt.llm.optimize_llm`` (one recipe each, written here), then scored by the agent against the
FP32 export with every float in FP32 (``inference_precision: f32``, as the sweep scores its reference):

- ``int4-sym-g32`` / ``int4-asym-g64``: data-free (the sweep's ``int4-g32`` level; the AWQ recipe's base);
- ``int4-asym-g64-awq`` / ``-se`` / ``-awq-se``: AWQ only, scale estimation only, both (the ``int4-awq`` recipe).

Texts: the zoo corpus's held-out tails are the evaluation text; the calibration text is cut from the training
parts (never the held-out text). Top-1 agreement is reported with its standard error over the scored positions
(binomial), so a difference under two standard errors is noise, not a finding.

Usage: python -m benchmarks.llm_awq [--windows 32] [--out benchmarks/results/llm_awq.json]
Run it alone (several minutes of NNCF on 2 cores the first time).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import RESULTS, machine_facts, print_table, write_json

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from edgeopt.llm.optimize import optimize_llm
from edgeopt.llm.retention import RetentionSettings, compare, score_folder, vocab_covered
from edgeopt.runners.select import use_runner
from edgeopt.zoo.llm_corpus import corpus_texts, split_texts
from edgeopt.zoo.registry import build

CALIB_CHARS = 40_000
F32 = {"inference_precision": "f32"}
VARIANTS: dict[str, dict[str, Any]] = {
    "fp32": {"weights": "fp32"},
    "int4-sym-g32": {"weights": "int4_sym", "group_size": 32},
    "int4-asym-g64": {"weights": "int4_asym", "group_size": 64},
    "int4-asym-g64-awq": {"weights": "int4_asym", "group_size": 64, "awq": True},
    "int4-asym-g64-se": {"weights": "int4_asym", "group_size": 64, "scale_estimation": True},
    "int4-asym-g64-awq-se": {"weights": "int4_asym", "group_size": 64, "awq": True, "scale_estimation": True},
}


def _recipe(work: Path, name: str, settings: dict[str, Any]) -> Path:
    lines = [f"name: {name}", f'description: "llm_awq.py variant {name}"', "openvino_genai:"]
    lines += [f"  {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in settings.items()]
    path = work / f"{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _build(model: Path, work: Path, calib: Path) -> dict[str, tuple[Path, float]]:
    folders: dict[str, tuple[Path, float]] = {}
    for name, settings in VARIANTS.items():
        start = time.monotonic()
        data_aware = settings.get("awq") or settings.get("scale_estimation")
        res = optimize_llm(model, target="local", recipe=_recipe(work, name, settings), out_dir=work / name,
                           calib=calib if data_aware else None)
        folders[name] = (Path(res.artifacts[0].path), time.monotonic() - start)
        print(f"built {name} in {folders[name][1]:.1f} s", file=sys.stderr)
    return folders


def _row(name: str, build_s: float, ret: Any) -> dict[str, Any]:
    se = math.sqrt(max(ret.top1_agreement * (1 - ret.top1_agreement), 1e-12) / ret.positions)
    return {"variant": name, **VARIANTS[name], "build_s": round(build_s, 1), "top1": round(ret.top1_agreement, 4),
            "top1_se": round(se, 4), "topk": round(ret.topk_overlap, 4), "kl_nats": ret.kl_mean,
            "ppl_reference": round(ret.ppl_reference, 3), "ppl": round(ret.ppl_candidate, 3),
            "positions": ret.positions, "first_divergence": ret.first_divergence}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--windows", type=int, default=32)
    ap.add_argument("--out", type=Path, default=RESULTS / "llm_awq.json")
    args = ap.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="edgeopt-awq-") as tmp:
        work = Path(tmp)
        model = work / "tiny-llama-trained"
        build("tiny-llama-trained", model)
        train, held = split_texts(corpus_texts())
        (work / "eval.txt").write_text("\n".join(held), encoding="utf-8")
        (work / "calib.txt").write_text("\n".join(train)[:CALIB_CHARS], encoding="utf-8")
        folders = _build(model, work, work / "calib.txt")
        settings = RetentionSettings(windows=args.windows)
        text = (work / "eval.txt").read_text(encoding="utf-8")
        rows = []
        with use_runner(None) as placed:
            ref = score_folder(folders["fp32"][0], text, settings, placed.runner, runtime_options=F32)
            for name, (folder, build_s) in folders.items():
                cand = score_folder(folder, text, settings, placed.runner, kl_ids=ref["kl_ids"], runtime_options=F32)
                rows.append(_row(name, build_s, compare(ref, cand, vocab_covered=vocab_covered(ref))))
    print_table(["variant", "top-1 (+- SE)", "top-5 overlap", "KL (nats)", "ppl (ref)", "build s"],
                [[r["variant"], f"{r['top1']:.4f} +- {r['top1_se']:.4f}", f"{r['topk']:.4f}", f"{r['kl_nats']:.2e}",
                  f"{r['ppl']:.2f} ({r['ppl_reference']:.2f})", r["build_s"]] for r in rows])
    out = {"machine": machine_facts("openvino", "openvino-genai", "nncf"),
           "model": "tiny-llama-trained", "windows": args.windows, "calib_chars": CALIB_CHARS,
           "reference": "fp32 IR scored with inference_precision f32", "rows": rows,
           "seconds": round(time.monotonic() - start, 1)}
    write_json(args.out, out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
