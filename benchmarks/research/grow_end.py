"""Does ending the grow where the rest cannot be measured cost the answer? (issue 32, session 21)

On PP-OCRv4 rec the float-set search grows the INT8 set from the float model (the error is spread over every
layer), one device evaluation per node tried, best per-layer gain first, up to 24. A handful of nodes carry most of
OpenVINO's INT8 gain there; the tail of the order saves hundredths of a millisecond each, below anything the
sweep's ranking can tell apart (its 3 % tolerance). The search now stops growing once the nodes left to try save less
than that together (:func:`edgeopt.sweep.int8.float_sets.choose_float_set`, ``resolution_ms``).

This script runs fresh sweeps of one ``ship_goals`` model (``--model``, rec by default; ``ppocr-det``: PP-OCRv4
det, which grows too) at ``--threshold`` (0.99; the ``ship_goals`` settings: both runtimes, default threads, no cache),
``before`` with the resolution switched off (the same code, ``Headroom.resolution_ms`` None) and ``after`` as
shipped, one after the other, and writes each sweep's wall time, search phases, float-set record, recommendation
and INT8 levels. Run alone: sweeps time their levels.

Usage: python -m benchmarks.research.grow_end [--model ppocr-rec] [--threshold 0.99] [--order before,after]
       [--out benchmarks/results/grow_end.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import machine_facts, real_model, write_json
from benchmarks.ship_goals import MODELS, run_sweep
from edgeopt.deploy import decision_cpu_flags
from edgeopt.sweep.int8 import cost_gate
from edgeopt_agent.environment import cpu_flags


def one_sweep(label: str, model: Path, feeds: dict[str, np.ndarray], metric: str,
              threshold: float) -> dict[str, Any]:
    """A fresh sweep at ``threshold`` with the grow's resolution on (``after``) or off (``before``)."""
    shipped = cost_gate.Headroom.resolution_ms
    if label == "before":
        cost_gate.Headroom.resolution_ms = property(lambda self: None)  # type: ignore[assignment,method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="grow-end-") as tmp:
            npz = Path(tmp) / "eval.npz"
            np.savez(npz, **feeds)  # type: ignore[arg-type]
            res, wall = run_sweep(model, npz, metric, threshold, 0, Path(tmp) / "out", fresh=True)
            doc = json.loads((Path(tmp) / "out" / "sweep.json").read_text())
    finally:
        cost_gate.Headroom.resolution_ms = shipped  # type: ignore[method-assign]
    rec = res.recommendation
    search = doc.get("int8_search") or {}
    return {"label": label, "wall_s": wall, "recommendation": f"{rec.recipe}@{rec.runtime}" if rec else None,
            "search_s": search.get("seconds"), "phase_seconds": search.get("phase_seconds"),
            "float_sets": search.get("float_sets"),
            "float_node_reasons": dict(Counter(row["why"].split(": ", 1)[-1][:60] for rows in
                                               (search.get("layers_by_runtime") or {}).values()
                                               for row in rows if row["repair"] == "float")),
            "levels": {f"{lv['recipe']}@{lv['runtime']}": {"retention": lv["retention"], "latency_ms": lv["latency_ms"]}
                       for lv in doc["levels"] if "int8" in lv["recipe"] or lv["recipe"] == "fp32"}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="ppocr-rec", choices=sorted(MODELS), help="a ship_goals model")
    ap.add_argument("--threshold", type=float, default=0.99, help="the sweeps' --min-retention")
    ap.add_argument("--order", default="before,after", help="sweeps to run, in order (before: resolution off)")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/grow_end.json"))
    args = ap.parse_args()
    file, make, metric, what = MODELS[args.model]
    model = real_model(file, "grow_end")
    if model is None:
        sys.exit(0)
    feeds = make()
    rows = [one_sweep(label, model, feeds, metric, args.threshold) for label in args.order.split(",")]
    print(f"{'sweep':<7} {'wall s':>7} {'search s':>9} {'float-set s':>12} {'evaluations':>12}  recommendation",
          file=sys.stderr)
    for r in rows:
        fs = (r["float_sets"] or {}).get("openvino") or {}
        print(f"{r['label']:<7} {r['wall_s']:>7.1f} {r['search_s']:>9.1f} "
              f"{(r['phase_seconds'] or {}).get('float_set_evals', 0.0):>12.1f} {fs.get('evaluations', 0):>12}  "
              f"{r['recommendation']}", file=sys.stderr)
    facts = {**machine_facts("onnxruntime", "openvino", "nncf"), "flags": decision_cpu_flags(cpu_flags())}
    write_json(args.out, {"benchmark": "grow_end", "machine": facts, "model": what, "threshold": args.threshold,
                          "sweeps": rows})
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
