"""The INT8 search's per-tensor range repair (:mod:`.range_repair`), run on the host before any float set.

Each calibration method runs once (onnxruntime's calibration cache under ``<out>/int8-search/calib/``), every
later build reads the cache; the per-tensor choice is made on the host (:class:`.host_eval.HostEval`), and the
repaired model is built by onnxruntime (``quantize_int8`` with ``tensor_ranges``). The float-set searches then start
from the repaired model, so they keep in float only what no range choice repairs.

Functions of one running search (:class:`.core.SearchCore`), whose budget and records they share.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import onnx

from ...errors import EdgeoptError
from ...fsutil import atomic_write_text, sha256_file
from ...inbound import read_json
from ...optimize import optimize_graph
from ..cache import cache_key
from .core import SearchCore
from .range_repair import (
    HOPELESS_SHARE,
    METHODS,
    RangeChoice,
    activation_qparams,
    choose_ranges,
    consumers,
    gap_share,
    load_ranges,
    with_ranges,
)
from .steps import QUANT_OPS, search_recipe

# Entropy (KL) calibration runs only when percentile's took less than this (s): on PP-OCRv4 det (116 tensors,
# 8 samples at 480x640, 2 cores) percentile took 21 s and entropy 50 s (15 s collecting, 35 s of KL search).
ENTROPY_AFTER_S = 8.0
# Histogram bins of the search's entropy calibration: its KL search tries every threshold between 64 and half the
# bins, each over the whole histogram, per tensor (2048 bins: 16 s for 6 tensors of a 32x32 toy conv net here).
ENTROPY_BINS = 512


@dataclass(frozen=True)
class Repaired:
    """The range-repaired QDQ model, the ``quantize_int8`` config that builds it, and the host's verdict."""

    qdq: onnx.ModelProto
    cfg: dict[str, Any]
    choice: RangeChoice
    base_method: str

    @property
    def passes_on_host(self) -> bool:
        return self.choice.retention >= self.choice.threshold


def _build(s: SearchCore, name: str, cfg: dict[str, Any]) -> Path:
    """``s.base`` quantized by the ``quantize_int8`` pass with ``cfg`` (onnxruntime), host-side only."""
    recipe = search_recipe(f"int8-repair-{name}", [{"pass": "quantize_int8", "config": cfg}])
    s.count_build(cfg)
    with s.timed("calibration"):
        res = optimize_graph(s.base, target=s.ctx.target, recipe=recipe, calib=s.plan.calib,
                             out_dir=s.plan.out / "range-repair" / name, fidelity=False, bench=False,
                             targets_dirs=s.plan.targets_dirs)
    return Path(res.final.path)


def calib_cache(s: SearchCore, method: str) -> Path:
    """Where ``method``'s calibration ranges are cached: named by what they depend on (the base model, the
    calibration data, the target), so a sweep with other data never reads stale ranges."""
    calib = Path(str(s.plan.calib))
    stat = calib.stat() if calib.exists() else None
    key = cache_key(base=sha256_file(s.base), calib=str(calib), target=s.ctx.target, ops=QUANT_OPS,
                    calib_stat=(stat.st_size, stat.st_mtime_ns) if stat is not None else None)
    return s.plan.out / "calib" / f"{method}-{key[:16]}.json"


def method_advanced(s: SearchCore, method: str) -> dict[str, Any]:
    """``quantize_int8``'s ``advanced`` options of the search's calibration by ``method``: its cache (and bins)."""
    advanced: dict[str, Any] = {"calibration_cache": str(calib_cache(s, method))}
    if method == "entropy":
        advanced["num_bins"] = ENTROPY_BINS
    return advanced


def _method_cfg(s: SearchCore, method: str) -> dict[str, Any]:
    return {"op_types_to_quantize": QUANT_OPS, "calibration_method": method, "advanced": method_advanced(s, method)}


def range_repair(s: SearchCore, minmax: Path | None = None) -> Repaired | None:
    """Per tensor, the calibration method keeping the most host retention; the repaired model, built by
    onnxruntime. None when no method helps (the min-max model stands) or time ran out; ``s.range_repair`` says
    what was done either way.

    Args:
        minmax: the default trial's model (min-max ranges, :func:`.steps.variants`' ``default``): the same build
            as this step's min-max one, so it is read instead of quantizing again while its calibration cache is
            there (the ranges are read from the cache)."""
    started = time.perf_counter()
    models: dict[str, onnx.ModelProto] = {}
    ranges: dict[str, dict[str, tuple[float, float]]] = {}
    took: dict[str, float] = {}
    skipped: dict[str, str] = {}
    score = HostScores(s, models)

    def whole(method: str) -> float:
        return score({t: method for t in activation_qparams(models["minmax"]) if t in ranges[method]})
    try:
        for method in METHODS:
            if not s.budget_left(device=False):
                break
            if method == "entropy" and took.get("percentile", 0.0) > ENTROPY_AFTER_S:
                skipped[method] = (f"percentile's calibration took {took['percentile']:.1f} s and entropy's (KL over "
                                   f"every tensor's histogram) costs several times that")
                continue
            if method == "entropy" and "percentile" in models and whole("percentile") >= s.ctx.min_retention:
                skipped[method] = "percentile's ranges already keep the threshold on the host"
                continue
            if method == "entropy" and "percentile" in models and _hopeless(whole, s.ctx.min_retention):
                skipped[method] = (f"percentile's ranges closed {_share(whole, s.ctx.min_retention):.0%} of the gap "
                                   f"to the threshold (under {HOPELESS_SHARE:.0%}): the error is not in the "
                                   "activation ranges")
                continue
            t0 = time.perf_counter()
            reuse = method == "minmax" and minmax is not None and minmax.is_file() and calib_cache(s, method).is_file()
            models[method] = onnx.load(str(minmax if reuse else _build(s, method, _method_cfg(s, method))))
            ranges[method] = load_ranges(calib_cache(s, method))
            took[method] = round(time.perf_counter() - t0, 2)
    except EdgeoptError as exc:
        s.emit({"event": "info", "message": f"int8 search: no range repair ({exc})"})
        s.range_repair = {"skipped": str(exc)}
        return None
    if "minmax" not in models or len(models) < 2:
        s.range_repair = {"skipped": "search time ran out before the calibrations"}
        return None
    for method, why in skipped.items():
        s.emit({"event": "info", "message": f"int8 search: no {method} ranges in the range repair: {why}"})
    tensors = list(activation_qparams(models["minmax"]))
    hopeless = "percentile" in models and _hopeless(whole, s.ctx.min_retention)
    choice = choose_ranges(tensors, ranges, score, s.ctx.min_retention, budget=lambda: s.budget_left(device=False),
                           **({"max_evaluations": 0} if hopeless else {}))
    if hopeless:
        skipped["per-tensor"] = "percentile's whole-model ranges closed under a quarter of the gap"
        s.emit({"event": "info", "message": "int8 search: no per-tensor range checks: percentile's ranges closed "
                                            f"{_share(whole, s.ctx.min_retention):.0%} of the gap to the threshold"})
    score.save()
    s.range_repair = {**_record(choice, tensors, started), "calibration_seconds": took, "methods_skipped": skipped,
                      "host_checks": score.checks, "host_checks_reused": len(score.reused)}
    if not choice.methods:
        return None
    base_method = max(METHODS, key=lambda m: sum(v == m for v in choice.methods.values()))
    if sum(v == base_method for v in choice.methods.values()) < len(tensors) / 2:
        base_method = "minmax"
    cfg = _method_cfg(s, base_method)
    cfg["tensor_ranges"] = {t: {"rmin": ranges[m][t][0], "rmax": ranges[m][t][1]}
                            for t, m in sorted(choice.methods.items()) if m != base_method}
    cfg["tensor_ranges"].update({t: {"rmin": ranges["minmax"][t][0], "rmax": ranges["minmax"][t][1]}
                                 for t in tensors if base_method != "minmax" and t not in choice.methods
                                 and t in ranges["minmax"]})
    qdq = onnx.load(str(_build(s, "repaired", cfg)))
    s.range_repair.update(base_method=base_method, overridden_tensors=len(cfg["tensor_ranges"]),
                          seconds=round(time.perf_counter() - started, 2))
    return Repaired(qdq=qdq, cfg=cfg, choice=choice, base_method=base_method)


class HostScores:
    """Host retention per range choice (tensor -> method, the rest min-max), each choice scored once and kept in
    ``<out>/int8-search/calib/host-scores-<key>.json``, keyed by what a score depends on (the calibration caches'
    key: base model, calibration data, target; the eval data, metric and output; the entropy bins) and not by the
    threshold, so a sweep of the same model at another ``--min-retention`` re-reads them."""

    def __init__(self, s: SearchCore, models: Mapping[str, onnx.ModelProto]) -> None:
        self.s, self.models = s, models
        labels = s.ctx.labels
        key = cache_key(calib=calib_cache(s, "minmax").name, eval=sha256_file(s.ctx.eval_npz),
                        metric=s.ctx.metric.key(), output=s.ctx.selection.spec, bins=ENTROPY_BINS,
                        labels=None if labels is None else hashlib.sha256(labels.tobytes()).hexdigest())
        self.path = s.plan.out / "calib" / f"host-scores-{key[:16]}.json"
        try:
            loaded = read_json(self.path) if self.path.is_file() else {}
            self.seen: dict[str, float] = {str(k): float(v) for k, v in loaded.items()}
        except (EdgeoptError, OSError, ValueError, AttributeError, TypeError):  # unreadable: scored again
            self.seen = {}
        self.stored = set(self.seen)
        self.reused: set[str] = set()
        self.checks = 0  # distinct choices looked up in this search

    def __call__(self, methods: Mapping[str, str]) -> float:
        pairs = sorted((t, m) for t, m in methods.items() if m != "minmax")
        key = json.dumps(pairs)
        if key in self.stored and key not in self.reused:
            self.reused.add(key)
            self.checks += 1
        if key not in self.seen:
            donors = {t: self.models[m] for t, m in pairs}
            self.seen[key] = self.s.host_eval().score(with_ranges(self.models["minmax"], donors))[0]
            self.checks += 1
        return self.seen[key]

    def save(self) -> None:
        if set(self.seen) != self.stored:
            atomic_write_text(self.path, json.dumps(self.seen, sort_keys=True))


def _share(whole: Callable[[str], float], threshold: float) -> float:
    """The share of the gap between min-max's host retention and ``threshold`` that percentile's ranges closed."""
    return gap_share(whole("minmax"), whole("percentile"), threshold)


def _hopeless(whole: Callable[[str], float], threshold: float) -> bool:
    """Whether percentile's whole-model ranges closed under :data:`.range_repair.HOPELESS_SHARE` of the gap: the
    error is not in the activation ranges (PP-OCRv4 det: 0.681 -> 0.691 of 0.99, 3 %), so entropy's calibration and
    the per-tensor checks are skipped (~40 s of a det sweep on 2 cores) and the float set does the work."""
    return _share(whole, threshold) < HOPELESS_SHARE


def _record(choice: RangeChoice, tensors: list[str], started: float) -> dict[str, Any]:
    """``sweep.json``'s ``int8_search.range_repair``: what was calibrated, tried and chosen, and why."""
    return {"methods": list(choice.whole_model), "quantized_tensors": len(tensors), "whole_model": choice.whole_model,
            "host_retention_before": round(choice.retention_before, 6),
            "host_retention": round(choice.retention, 6), "threshold": choice.threshold,
            "evaluations": choice.evaluations, "chosen": dict(sorted(choice.methods.items())),
            "tensors": choice.rows, "seconds": round(time.perf_counter() - started, 2)}


def layer_records(qdq: onnx.ModelProto | None, cfg: dict[str, Any], repair: dict[str, Any] | None,
                  why_float: str, why_node: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Per layer of a chosen INT8 config: what was done (``range:<method>`` on an input, ``calibration:<method>``
    for every activation, ``float``) and why (a float node's: ``why_float``, then its own ``why_node`` entry)."""
    out: list[dict[str, Any]] = []
    method = str(cfg.get("calibration_method") or "minmax")
    rows = {r["tensor"]: r for r in (repair or {}).get("tensors", [])}
    chosen = (repair or {}).get("chosen", {})
    if method != "minmax":
        whole = (repair or {}).get("whole_model", {})
        out.append({"node": "*", "repair": f"calibration:{method}", "tensors": [],
                    "why": f"{method} ranges for every activation: host retention {whole.get(method)} vs min-max "
                           f"{whole.get('minmax')}"})
    for tensor in sorted(cfg.get("tensor_ranges") or {}):
        m = chosen.get(tensor, "minmax")
        why = rows.get(tensor, {}).get("why") or f"{m} range kept for this tensor"
        for node in (consumers(qdq, tensor) if qdq is not None else []) or ["?"]:
            out.append({"node": node, "repair": f"range:{m}", "tensors": [tensor], "why": why})
    for node in cfg.get("nodes_to_exclude") or []:
        own = (why_node or {}).get(node)
        out.append({"node": node, "repair": "float", "tensors": [], "why": f"{why_float}: {own}" if own else why_float})
    return out
