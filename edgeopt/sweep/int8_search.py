"""Accuracy-aware INT8: when plain INT8 misses the threshold, search for the fastest INT8 config that meets it.

1. Variants of the quantizer (calibration method, reduce_range, S8 activations, per-tensor weights), each
   quantized, evaluated on the device and benchmarked.
2. Per-node sensitivity on the most accurate variant: run the float and the QDQ model on the host with every
   quantized node's output exposed; a node's sensitivity is the relative error of its output minus the largest
   relative error of its inputs (the error it adds itself).
3. Progressive exclusion: the 1, 2, 4, 8, ... most sensitive nodes stay in float until retention is met.
Every trial is measured on the target; among passing trials the fastest p50 wins (not the first found). The
best passing model so far is copied to ``best.onnx`` after every trial. Bounded by ``max_trials`` and time.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..optimize import optimize
from ..recipes import Recipe
from .measure import Context
from .result import Level

VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("percentile", {"calibration_method": "percentile"}),
    ("entropy", {"calibration_method": "entropy"}),
    ("reduce_range", {"reduce_range": True}),
    ("s8_activations", {"activation_type": "s8"}),
    ("per_tensor", {"per_channel": False}),
]
QUANT_OPS = ["Conv", "MatMul", "Gemm"]


def _recipe(name: str, passes: list[dict[str, Any]]) -> Recipe:
    return Recipe.model_validate({"name": name, "description": "accuracy-aware INT8 search trial", "formats": ["onnx"],
                                 "passes": passes})


def _float_base(model: Path, out: Path, target: str, targets_dirs: Sequence[Path]) -> Path:
    """The cleaned model every trial quantizes, with every node named (exclusions are by node name)."""
    import onnx

    res = optimize(model, target=target, recipe=_recipe("int8-search-base", [{"pass": "cleanup",
                   "config": {"min_opset": 17}}]), out_dir=out / "base", fidelity=False, bench=False,
                   targets_dirs=targets_dirs)
    m = onnx.load(res.final.path)
    changed = False
    for i, node in enumerate(m.graph.node):
        if not node.name:
            node.name = f"{node.op_type}_{i}"
            changed = True
    if not changed:
        return Path(res.final.path)
    path = out / "base" / "named.onnx"
    onnx.save(m, str(path))
    return path


def node_sensitivity(base: Path, qdq: Path, feeds: dict[str, np.ndarray]) -> list[tuple[str, float]]:
    """(node name, added relative error) of every quantized-op node, most sensitive first (host-side ORT)."""
    import onnx
    import onnxruntime as ort

    fm = onnx.load(str(base))
    nodes = [n for n in fm.graph.node if n.op_type in QUANT_OPS and n.output]
    wanted = sorted({t for n in nodes for t in [*n.input, n.output[0]] if t})

    def run(path: Path) -> dict[str, np.ndarray]:
        m = onnx.load(str(path))
        produced = {o for n in m.graph.node for o in n.output}
        have = {o.name for o in m.graph.output}
        for t in wanted:
            if t in produced and t not in have:
                m.graph.output.append(onnx.ValueInfoProto(name=t))
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.log_severity_level = 3
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        return dict(zip(names, sess.run(names, feeds), strict=True))

    f, q = run(base), run(qdq)

    def err(t: str) -> float:
        if t not in f or t not in q or f[t].shape != q[t].shape:
            return 0.0
        a = f[t].astype(np.float64)
        den = float(np.linalg.norm(a)) or 1.0
        return float(np.linalg.norm(q[t].astype(np.float64) - a)) / den

    scores = [(n.name, err(n.output[0]) - max([err(i) for i in n.input if i] or [0.0])) for n in nodes]
    return sorted(scores, key=lambda s: -s[1])


def search_int8(model: Path, *, ctx: Context, runtime: str, rts: Sequence[str], out: Path, calib: Path | str,
                max_trials: int, max_seconds: float, run_level: Callable[..., Level], emit: Callable[..., None],
                targets_dirs: Sequence[Path]) -> dict[str, Any]:
    """Run the search; the best passing config is added to the sweep's levels as ``int8-search``.

    Returns:
        What was tried (config, retention, latency, excluded nodes), the chosen trial, and its float nodes' cost.
    """
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    base = _float_base(model, out, ctx.target, targets_dirs)
    trials: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None

    def trial(label: str, cfg: dict[str, Any]) -> Level:
        nonlocal best
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **cfg}
        recipe = _recipe(f"int8-search-{len(trials)}", [{"pass": "quantize_int8", "config": q_cfg}])
        made: dict[str, Path] = {}

        def make() -> Path:
            res = optimize(base, target=ctx.target, recipe=recipe, calib=calib, out_dir=out / f"trial-{len(trials)}",
                           fidelity=False, bench=False, targets_dirs=targets_dirs)
            made["path"] = Path(res.final.path)
            return made["path"]

        lvl = run_level({"int8-search": q_cfg, "base": str(base.name)}, "int8-search", runtime, make,
                        {"search": label, "config": q_cfg, "float_nodes": cfg.get("nodes_to_exclude", [])}, keep=False)
        row = {"trial": len(trials), "label": label, "config": q_cfg, "retention": lvl.retention,
               "latency_ms": lvl.latency_ms, "passed": lvl.passed, "artifact": lvl.artifact}
        trials.append(row)
        emit({"event": "int8_trial", **{k: v for k, v in row.items() if k != "config"}})
        if lvl.passed and (best is None or lvl.latency_ms < best["latency_ms"]):
            best = row
            if Path(lvl.artifact).is_file():
                shutil.copyfile(lvl.artifact, out / "best.onnx")  # always keep the best model found so far
        return lvl

    def budget_left() -> bool:
        return len(trials) < max_trials and time.perf_counter() - started < max_seconds

    results: list[tuple[Level, dict[str, Any]]] = []
    for label, cfg in VARIANTS:
        if not budget_left():
            break
        results.append((trial(label, cfg), cfg))
    sens: list[tuple[str, float]] = []
    if results and budget_left():
        top_lvl, top_cfg = max(results, key=lambda r: r[0].retention)
        feeds = _host_feeds(ctx.eval_npz, base)
        sens = node_sensitivity(base, Path(top_lvl.artifact), feeds) if Path(top_lvl.artifact).is_file() else []
        k = 1
        while sens and budget_left():
            excluded = [name for name, _ in sens[:k]]
            lvl = trial(f"exclude top {len(excluded)} ({top_cfg and next(iter(top_cfg.values())) or 'default'})",
                        {**top_cfg, "nodes_to_exclude": excluded})
            if lvl.passed or k >= len(sens):
                break
            k = min(len(sens), k * 2)
    naive = trials[0]["latency_ms"] if trials else None
    chosen: dict[str, Any] | None = best
    if chosen is not None:
        cfg = chosen["config"]
        art = Path(chosen["artifact"])
        info = {"search": chosen["label"], "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                "latency_cost_ms_vs_naive_int8": None if naive is None else chosen["latency_ms"] - naive}
        for rt in rts:  # the chosen config as a level on every runtime (cached on the search runtime)
            run_level({"int8-search": cfg, "base": str(base.name)}, "int8-search", rt, lambda: art, info)
    cost = None if (chosen is None or naive is None) else chosen["latency_ms"] - naive
    return {"runtime": runtime, "trials": trials, "chosen": chosen, "sensitivity": sens[:20],
            "float_nodes": (chosen or {}).get("config", {}).get("nodes_to_exclude", []),
            "latency_cost_ms_vs_naive_int8": cost, "best_model": str(out / "best.onnx") if chosen else None,
            "seconds": round(time.perf_counter() - started, 2)}


def _host_feeds(eval_npz: Path, base: Path, limit: int = 32) -> dict[str, np.ndarray]:
    """A few eval samples for the host-side sensitivity pass (batched when the model allows it, else one)."""
    import onnx

    m = onnx.load(str(base), load_external_data=False)
    with np.load(eval_npz) as data:
        feeds = {}
        for inp in m.graph.input:
            if inp.name not in data.files:
                continue
            dim0 = inp.type.tensor_type.shape.dim[0] if inp.type.tensor_type.shape.dim else None
            n = limit if dim0 is not None and not dim0.HasField("dim_value") else 1
            feeds[inp.name] = np.asarray(data[inp.name][:n])
    return feeds
