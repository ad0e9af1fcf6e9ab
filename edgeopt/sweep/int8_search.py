"""Accuracy-aware INT8: when plain INT8 misses the threshold, search for the fastest INT8 config that meets it.

1. Quantizer variants (calibration method, the target's ``reduce_range`` flipped, S8 activations, per-tensor
   weights): each calibrated, evaluated on the device and benchmarked.
2. Per-node sensitivity on the most accurate variant, on the host: for every quantized node, the model with only
   that node quantized (all others put back in float by a graph edit, :mod:`.qdq_surgery`) is scored with the
   sweep's metric on a few samples; most retention lost (then relative output error) first.
3. Exclusion sets, narrowed on the host: the smallest prefix of the ranking (1, 2, 4, ... then bisected) that
   meets the threshold, then each float node put back in INT8 while the threshold still holds (least sensitive
   first).
4. The candidates are measured on the device, which decides pass/fail; while the device disagrees with the host,
   the float set grows. Among passing trials the fastest p50 wins (not the first found).
Every device trial counts toward ``max_trials``; the whole search stops at ``max_seconds``. After every device
trial ``best.onnx`` holds the fastest passing model so far (or, while none passes, the most accurate one).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import onnx

from ..fsutil import atomic_write_bytes
from ..optimize import optimize
from ..passes.cleanup import ort_basic_optimize
from ..passes.int8_target import int8_defaults
from ..recipes import Recipe
from ..targets import load_registry
from .host_eval import HostEval
from .measure import Context
from .qdq_surgery import keep_float, quantized_nodes
from .result import Level

QUANT_OPS = ["Conv", "MatMul", "Gemm"]
SENSITIVITY_SAMPLES = 8


def variants(reduce_range_default: bool) -> list[tuple[str, dict[str, Any]]]:
    """Quantizer variants tried first; ``reduce_range`` is flipped from what the target would use."""
    return [
        ("default", {}),
        ("percentile", {"calibration_method": "percentile"}),
        ("entropy", {"calibration_method": "entropy"}),
        (f"reduce_range={not reduce_range_default}", {"reduce_range": not reduce_range_default}),
        ("s8_activations", {"activation_type": "s8"}),
        ("per_tensor", {"per_channel": False}),
    ]


def _recipe(name: str, passes: list[dict[str, Any]]) -> Recipe:
    return Recipe.model_validate({"name": name, "description": "accuracy-aware INT8 search trial", "formats": ["onnx"],
                                  "passes": passes})


def float_base(model: Path, out: Path, target: str, targets_dirs: Sequence[Path]) -> Path:
    """The model every trial quantizes: cleaned, at onnxruntime's basic-optimization fixed point, nodes named.

    The quantizer re-optimizes its input; starting from a fixed point keeps node names and inputs identical, so
    a node put back in float by :func:`keep_float` matches ``nodes_to_exclude`` exactly.
    """
    res = optimize(model, target=target, recipe=_recipe("int8-search-base", [{"pass": "cleanup",
                   "config": {"min_opset": 17}}]), out_dir=out / "base", fidelity=False, bench=False,
                   targets_dirs=targets_dirs)
    path = Path(res.final.path)
    m = onnx.load(str(path))
    for k in range(3):
        nxt = ort_basic_optimize(path, out / "base" / f"fixed-{k}.onnx", m.ByteSize())
        m2 = onnx.load(str(nxt))
        if len(m2.graph.node) == len(m.graph.node):
            break
        path, m = nxt, m2
    for i, node in enumerate(m.graph.node):
        if not node.name:
            node.name = f"{node.op_type}_{i}"
    named = out / "base" / "named.onnx"
    atomic_write_bytes(named, m.SerializeToString())
    return named


def node_sensitivity(qdq: onnx.ModelProto, base: onnx.ModelProto, host: HostEval,
                     deadline: float) -> list[tuple[str, float, float]]:
    """``(node, retention lost, relative error)`` with only that node quantized, most sensitive first."""
    nodes = quantized_nodes(qdq, QUANT_OPS)
    rows = []
    for name in nodes:
        if time.perf_counter() > deadline:
            break
        ret, rel = host.score(keep_float(qdq, base, [n for n in nodes if n != name], QUANT_OPS),
                              SENSITIVITY_SAMPLES)
        rows.append((name, round(1.0 - ret, 6), round(rel, 6)))
    return sorted(rows, key=lambda r: (-r[1], -r[2]))


def narrow(ranking: list[str], passes: Callable[[list[str]], bool], budget: Callable[[], bool]) -> list[list[str]]:
    """Host-side candidates: the smallest passing prefix (doubling, then bisection), then that set pruned.

    Returns:
        Candidate float sets, best first (pruned, then the plain prefix); empty when no prefix passes in time.
    """
    lo, k, found = 0, 1, False
    while ranking and budget():
        k = min(k, len(ranking))
        if passes(ranking[:k]):
            found = True
            break
        if k == len(ranking):
            break
        lo, k = k, k * 2
    if not found:
        return []
    while k - lo > 1 and budget():
        mid = (lo + k) // 2
        if passes(ranking[:mid]):
            k = mid
        else:
            lo = mid
    prefix = ranking[:k]
    pruned = list(prefix)
    for name in reversed(prefix):  # least sensitive first
        if not budget() or len(pruned) == 1:
            break
        trial = [n for n in pruned if n != name]
        if passes(trial):
            pruned = trial
    return [pruned, prefix] if pruned != prefix else [prefix]


def search_int8(model: Path, *, ctx: Context, runtime: str, rts: Sequence[str], out: Path, calib: Path | str,
                max_trials: int, max_seconds: float, run_level: Callable[..., Level], emit: Callable[..., None],
                targets_dirs: Sequence[Path]) -> dict[str, Any]:
    """Run the search; the best passing config is added to the sweep's levels as ``int8-search``.

    Returns:
        What was tried (config, retention, latency, float nodes), the sensitivity ranking, host-side checks, the
        chosen trial and what its float nodes cost in latency vs the first (default) variant.
    """
    started = time.perf_counter()
    deadline = started + max_seconds
    out.mkdir(parents=True, exist_ok=True)
    base = float_base(model, out, ctx.target, targets_dirs)
    base_m = onnx.load(str(base))
    trials: list[dict[str, Any]] = []
    state: dict[str, Any] = {"best": None, "closest": None}

    def budget_left(device: bool = True) -> bool:
        return (not device or len(trials) < max_trials) and time.perf_counter() < deadline

    def record(label: str, cfg: dict[str, Any], lvl: Level) -> None:
        row = {"trial": len(trials), "label": label, "config": cfg, "retention": lvl.retention,
               "latency_ms": lvl.latency_ms, "passed": lvl.passed, "artifact": lvl.artifact}
        trials.append(row)
        emit({"event": "int8_trial", **{k: v for k, v in row.items() if k != "config"}})
        best, closest = state["best"], state["closest"]
        if lvl.passed and (best is None or lvl.latency_ms < best["latency_ms"]):
            state["best"] = row
        if closest is None or lvl.retention > closest["retention"]:
            state["closest"] = row
        keep = state["best"] or state["closest"]
        if keep is row and Path(lvl.artifact).is_file():  # always keep the best model found so far
            shutil.copyfile(lvl.artifact, out / "best.onnx.tmp")
            (out / "best.onnx.tmp").replace(out / "best.onnx")

    def quantized_trial(label: str, cfg: dict[str, Any]) -> Level:
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **cfg}
        recipe = _recipe(f"int8-search-{len(trials)}", [{"pass": "quantize_int8", "config": q_cfg}])
        trial_dir = out / f"trial-{len(trials)}"

        def make() -> Path:
            res = optimize(base, target=ctx.target, recipe=recipe, calib=calib, out_dir=trial_dir,
                           fidelity=False, bench=False, targets_dirs=targets_dirs)
            return Path(res.final.path)

        lvl = run_level({"int8-search": q_cfg, "base": base.name}, "int8-search", runtime, make,
                        {"search": label, "config": q_cfg, "float_nodes": []}, keep=False)
        record(label, q_cfg, lvl)
        return lvl

    def float_trial(label: str, q_cfg: dict[str, Any], qdq: onnx.ModelProto, float_nodes: list[str]) -> Level:
        cfg = {**q_cfg, "nodes_to_exclude": sorted(float_nodes)}
        path = out / f"trial-{len(trials)}" / "mixed.onnx"

        def make() -> Path:
            atomic_write_bytes(path, keep_float(qdq, base_m, float_nodes, QUANT_OPS).SerializeToString())
            return path

        lvl = run_level({"int8-search": cfg, "base": base.name}, "int8-search", runtime, make,
                        {"search": label, "config": cfg, "float_nodes": sorted(float_nodes)}, keep=False)
        record(label, cfg, lvl)
        return lvl

    tgt = load_registry(extra_dirs=targets_dirs).get(ctx.target)
    tried: list[tuple[Level, str, dict[str, Any]]] = []
    for label, cfg in variants(int8_defaults(tgt).reduce_range):
        if not budget_left():
            break
        tried.append((quantized_trial(label, cfg), label, cfg))
    sens: list[tuple[str, float, float]] = []
    host_checks: list[dict[str, Any]] = []
    top, top_label, top_cfg = max(tried, key=lambda t: (t[0].retention, -t[0].latency_ms)) if tried else (None, "", {})
    if top is not None and not Path(top.artifact).is_file():  # a cached trial whose file was deleted since
        emit({"event": "info", "message": f"int8 search: {top.artifact} is gone; run with --no-cache to redo it"})
        top = None
    if top is not None and not any(lv.passed for lv, _, _ in tried) and budget_left():
        q_cfg = {"op_types_to_quantize": QUANT_OPS, **top_cfg}
        qdq = onnx.load(top.artifact)
        host = HostEval(base_m, ctx.eval_npz, ctx.metric, ctx.selection, ctx.labels)
        sens = node_sensitivity(qdq, base_m, host, deadline)
        ranking = [name for name, _, _ in sens]

        def host_passes(float_nodes: list[str]) -> bool:
            ret, rel = host.score(keep_float(qdq, base_m, float_nodes, QUANT_OPS))
            host_checks.append({"float_nodes": len(float_nodes), "retention": round(ret, 6), "rel_err": round(rel, 6)})
            return ret >= ctx.min_retention

        candidates = narrow(ranking, host_passes, lambda: budget_left(device=False))
        size = len(candidates[-1]) if candidates else 1
        for float_nodes in candidates:
            if not budget_left():
                break
            if float_trial(f"{top_label} + {len(float_nodes)} float nodes", q_cfg, qdq, float_nodes).passed:
                break
        while ranking and state["best"] is None and size < len(ranking) and budget_left():
            size = min(len(ranking), size * 2)  # the device disagrees with the host: grow the float set
            float_trial(f"{top_label} + top {size} float nodes", q_cfg, qdq, ranking[:size])
    naive = trials[0]["latency_ms"] if trials else None
    chosen: dict[str, Any] | None = state["best"]
    if chosen is not None:
        cfg = chosen["config"]
        art = Path(chosen["artifact"])
        info = {"search": chosen["label"], "config": cfg, "float_nodes": cfg.get("nodes_to_exclude", []),
                "latency_cost_ms_vs_naive_int8": None if naive is None else chosen["latency_ms"] - naive}
        for rt in rts:  # the chosen config as a level on every runtime (cached on the search runtime)
            run_level({"int8-search": cfg, "base": base.name}, "int8-search", rt, lambda: art, info)
    cost = None if (chosen is None or naive is None) else chosen["latency_ms"] - naive
    return {"runtime": runtime, "trials": trials, "chosen": chosen,
            "sensitivity": [{"node": n, "retention_lost": r, "rel_err": e} for n, r, e in sens[:20]],
            "host_checks": host_checks, "quantized_nodes": len(sens),
            "float_nodes": (chosen or {}).get("config", {}).get("nodes_to_exclude", []),
            "latency_cost_ms_vs_naive_int8": cost,
            "best_model": str(out / "best.onnx") if trials else None, "best_model_passed": chosen is not None,
            "seconds": round(time.perf_counter() - started, 2)}
