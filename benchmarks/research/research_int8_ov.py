"""Research: which INT8 strategy on OpenVINO meets issue 14's goals on PP-OCRv4 rec, and what it costs in time.

Same model and eval data as ``benchmarks/sweep.py`` (PP-OCRv4 rec from the ``rapidocr-onnxruntime`` wheel, 32 real
text lines 48x320), metric ``agreement`` (share of argmax decisions equal to the reference's; the reference is the
original model on the same runtime in FP32: OpenVINO with ``INFERENCE_PRECISION_HINT=f32``). Every latency is
measured with 1 thread, static shape [1, 3, 48, 320], in interleaved rounds (:mod:`edgeopt.sweep.rank.decide`:
round-robin, order rotated, per-round medians) and reported as a ratio to onnxruntime FP32 with a bootstrap
interval: the machine is shared, absolute times mean nothing. Per-layer times are profiled interleaved as well.

Stages (``--stages a,b``; artifacts and sensitivities are cached in ``--work``):
- ``baseline``: ORT FP32, OV FP32 (f32), OV default precision (BF16 on CPUs with AVX512-BF16/AMX), the project's
  QDQ INT8 (``int8`` recipe, with/without ``reduce_range``) on ORT and OV, ``nncf.quantize`` (default and
  ``model_type=TRANSFORMER``).
- ``ac``: ``nncf.quantize_with_accuracy_control`` unbounded (agreement, ``max_drop = 0.01``); slow (> 20 min).
- ``ac-bounded``: the same through :func:`edgeopt.sweep.int8.ov.nncf_accuracy_control`, 10 reverted groups.
- ``floatset`` / ``floatset-only`` / ``floatset-only8``: the float-set search on OpenVINO (the int8 search's
  base, weight ops quantized): per-node sensitivity (leave-one-out, only-this-node on 32 or 8 samples, cached by
  :class:`edgeopt.sweep.sensitivity_cache.SensitivityCache`), per-layer gains from ``PERF_COUNT`` profiles
  (:func:`edgeopt.sweep.int8.node_gains.latency_gain`), three rankings narrowed on OpenVINO
  (:func:`~edgeopt.sweep.int8.float_sets.narrow_float_set`, 8 put-backs).
- ``grow``: :func:`~edgeopt.sweep.int8.float_sets.grow_int8_set` from the float model, by gain or gain/sensitivity.
- ``choose``: :func:`~edgeopt.sweep.int8.float_sets.choose_float_set` end to end (what the sweep would call),
  timed against today's accuracy-only ranking.
- ``final``: every artifact above timed in one interleaved loop (``--only REGEX`` to time a subset longer).

Usage: python -m benchmarks.research.research_int8_ov [--work DIR] [--rounds 12] [--iters 15] [--stages baseline,choose]
       [--only REGEX] [--out benchmarks/results/research_int8_ov.json]
Summary of a run: benchmarks/results/research_int8_ov.md. Helpers (sessions, quantizers, timing, sensitivity):
``research_int8_ov_lib.py``; this file holds the stages.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from benchmarks.common import RESULTS, real_model, write_json
from benchmarks.research.research_int8_ov_lib import (
    MIN_RETENTION,
    QUANT_OPS,
    SHAPE,
    Infer,
    agreement,
    cached_sensitivity,
    count_fq,
    nncf_ac,
    nncf_int8,
    ort_session,
    outputs,
    ov_compile,
    ov_events,
    ov_infer,
    ov_score,
    qdq_int8,
    search_base,
    time_configs,
)

MODEL = "ch_PP-OCRv4_rec_infer.onnx"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("~/.cache/edgeopt-bench/research_int8_ov").expanduser())
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--stages", default="baseline")
    ap.add_argument("--only", default="", help="final stage: time only configs matching this regex (+ baselines)")
    ap.add_argument("--out", type=Path, default=RESULTS / "research_int8_ov.json")
    args = ap.parse_args()
    from benchmarks.sweep import text_lines

    model = real_model(MODEL, "research_int8_ov")
    if model is None:
        return 0
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    x = text_lines(32)
    calib = work / "lines.npz"
    np.savez(calib, x=x)
    stages = set(args.stages.split(","))
    doc: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    doc.update({"model": MODEL, "samples": len(x), "cpu_count": os.cpu_count(), "threads": 1})
    if "baseline" in stages or "all" in stages:
        doc["baseline"] = baseline(model, x, calib, work, args)
    if "floatset" in stages or "all" in stages:
        doc["floatset"] = floatset(model, x, calib, work, args, "leave_one_out")
    if "floatset-only" in stages or "all" in stages:
        doc["floatset_only"] = floatset(model, x, calib, work, args, "only_this_node")
    if "floatset-only8" in stages or "all" in stages:
        doc["floatset_only8"] = floatset(model, x, calib, work, args, "only_this_node_8")
    if "grow" in stages or "all" in stages:
        doc["grow"] = grow(model, x, calib, work, args)
    if "choose" in stages or "all" in stages:
        doc["choose"] = choose(model, x, calib, work, args)
    if "final" in stages or "all" in stages:
        doc["final" if not args.only else "final_selected"] = final(model, x, work, args)
    if "ac-bounded" in stages or "all" in stages:
        doc["nncf_ac_bounded"] = ac_bounded(model, x, work, args)
    if "ac" in stages:
        doc["nncf_ac"] = accuracy_control(model, x, work, args)
    write_json(args.out, doc)
    print(json.dumps(doc, indent=1)[:6000])
    return 0


def baseline(model: Path, x: np.ndarray, calib: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """ORT / OV FP32, the project's QDQ INT8 on both, NNCF INT8: retention and interleaved speed ratios."""
    t0 = time.perf_counter()
    qdq0 = qdq_int8(model, calib, work, reduce_range=False)
    qdq1 = qdq_int8(model, calib, work, reduce_range=True)
    t_qdq = time.perf_counter() - t0
    nncf_default, t_nncf = nncf_int8(model, x, work, "nncf-default")
    import nncf

    nncf_tr, t_nncf_tr = nncf_int8(model, x, work, "nncf-transformer", model_type=nncf.ModelType.TRANSFORMER)
    infers: dict[str, Infer] = {
        "ort-fp32": ort_session(model),
        "ov-fp32": ov_infer(ov_compile(model)),
        "ov-default": ov_infer(ov_compile(model, precision=None)),
        "ort-qdq": ort_session(qdq0),
        "ov-qdq": ov_infer(ov_compile(qdq0)),
        "ov-qdq-rr": ov_infer(ov_compile(qdq1)),
        "ov-nncf": ov_infer(ov_compile(nncf_default)),
        "ov-nncf-transformer": ov_infer(ov_compile(nncf_tr)),
    }
    refs = {"ort": outputs(infers["ort-fp32"], x), "ov": outputs(infers["ov-fp32"], x)}
    acc = {}
    for name, f in infers.items():
        out = outputs(f, x)
        own = refs["ort"] if name.startswith("ort") else refs["ov"]
        acc[name] = {"retention_same_runtime": round(agreement(own, out), 4),
                     "retention_vs_ort_fp32": round(agreement(refs["ort"], out), 4)}
    timing = time_configs(infers, x[:1], args.rounds, args.iters)
    return {"seconds": {"qdq_int8_both": round(t_qdq, 1), "nncf_default": round(t_nncf, 1),
                        "nncf_transformer": round(t_nncf_tr, 1)},
            "configs": {k: {**acc[k], **timing[k]} for k in infers}}


def accuracy_control(model: Path, x: np.ndarray, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """NNCF's accuracy-controlled quantization to the threshold (default and transformer model type)."""
    import nncf

    ref = outputs(ov_infer(ov_compile(model)), x)
    made = {"ov-nncf-ac": nncf_ac(model, x, ref, work, "nncf-ac"),
            "ov-nncf-ac-transformer": nncf_ac(model, x, ref, work, "nncf-ac-transformer",
                                              model_type=nncf.ModelType.TRANSFORMER)}
    infers: dict[str, Infer] = {"ort-fp32": ort_session(model), "ov-fp32": ov_infer(ov_compile(model))}
    infers.update({k: ov_infer(ov_compile(p)) for k, (p, _) in made.items()})
    timing = time_configs(infers, x[:1], args.rounds, args.iters)
    out: dict[str, Any] = {}
    for name, f in infers.items():
        row = {"retention_same_runtime": round(agreement(ref, outputs(f, x)), 4), **timing[name]}
        if name in made:
            row["seconds_to_quantize"] = round(made[name][1], 1)
            row["fake_quantize_ops"] = count_fq(made[name][0])
        out[name] = row
    return out


def floatset(model: Path, x: np.ndarray, calib: Path, work: Path, args: argparse.Namespace,
             method: str) -> dict[str, Any]:
    """The float-set search on OpenVINO: node sensitivity, per-layer gains, three rankings narrowed on OpenVINO.

    Rankings: ``latency-aware`` (free nodes, then accuracy per ms lost), ``accuracy-only`` (the sweep's
    ranking today), ``cost-only`` (cheapest float nodes first, no sensitivity at all). Each is narrowed with at
    most 8 put-backs (most expensive first). The chosen float sets are written for the ``final`` stage.
    """
    from edgeopt.sweep.int8.float_sets import narrow_float_set, rank_for_float
    from edgeopt.sweep.int8.node_gains import latency_gain, node_times
    from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes

    base = search_base(model, work)
    qdq_path = qdq_int8(base, calib, work, reduce_range=False, base=True)
    base_m, qdq = onnx.load(str(base)), onnx.load(str(qdq_path))
    nodes = quantized_nodes(qdq, QUANT_OPS)
    ref = outputs(ov_infer(ov_compile(base)), x)
    full, _ = ov_score(qdq, x, ref, work)
    t0 = time.perf_counter()
    fe, ie = ov_events([base, qdq_path], x[:1])
    gain = latency_gain(fe, ie, nodes)
    t_prof = time.perf_counter() - t0
    sens, raw, t_sens, hit = cached_sensitivity(method, qdq_path, qdq, base_m, nodes, x, ref, work)
    checks: list[dict[str, Any]] = []

    def passes(float_nodes: list[str]) -> bool:
        a, _ = ov_score(keep_float(qdq, base_m, float_nodes, QUANT_OPS), x, ref, work)
        checks.append({"float": len(float_nodes), "agreement": round(a, 4)})
        return a >= MIN_RETENTION

    found: dict[str, Any] = {}
    for label, ranking in (("latency-aware", rank_for_float(sens, gain)),
                           ("accuracy-only", sorted(sens, key=lambda n: -sens[n])),
                           ("cost-only", sorted(nodes, key=lambda n: (gain[n], n)))):
        t0 = time.perf_counter()
        n0 = len(checks)
        cands = narrow_float_set(ranking, passes, gain_ms=gain, max_putbacks=8)
        found[label] = {"float_nodes": [len(c) for c in cands], "seconds": round(time.perf_counter() - t0, 1),
                        "checks": len(checks) - n0, "agreements": [c["agreement"] for c in checks[n0:]],
                        "predicted_cost_ms": [round(sum(gain[n] for n in c), 3) for c in cands],
                        "chosen": cands[0] if cands else None}
        if cands:
            onnx.save(keep_float(qdq, base_m, cands[0], QUANT_OPS), str(work / f"floatset-{method}-{label}.onnx"))
    fl_times, il_times = node_times(fe, nodes), node_times(ie, nodes)
    return {"seconds": {"profile_both": round(t_prof, 1), "sensitivity": round(t_sens, 1),
                        "sensitivity_cached": hit}, "method": method,
            "quantized_nodes": len(nodes), "full_int8_agreement": round(full, 4),
            "unmapped_int8_layers": il_times.unmapped, "float_layers_mapped_by_order":
                sum(1 for n in nodes if n not in fl_times.ms and gain[n] != 0),
            "profile_total_ms": {"fp32": round(sum(e["duration_us"] for e in fe) / 1e3, 3),
                                 "int8": round(sum(e["duration_us"] for e in ie) / 1e3, 3)},
            "per_node": {n: {"gain_ms": gain[n], "sensitivity": round(sens[n], 6), **raw[n]} for n in nodes},
            "searches": found}


def grow(model: Path, x: np.ndarray, calib: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Quantize nodes one at a time from the float model (``grow_int8_set``), in three orders, on OpenVINO."""
    from edgeopt.sweep.int8.float_sets import grow_int8_set, quantize_order
    from edgeopt.sweep.int8.node_gains import latency_gain
    from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes

    base = search_base(model, work)
    qdq_path = qdq_int8(base, calib, work, reduce_range=False, base=True)
    base_m, qdq = onnx.load(str(base)), onnx.load(str(qdq_path))
    nodes = quantized_nodes(qdq, QUANT_OPS)
    ref = outputs(ov_infer(ov_compile(base)), x)
    t0 = time.perf_counter()
    fe, ie = ov_events([base, qdq_path], x[:1])
    gain = latency_gain(fe, ie, nodes)
    t_prof = time.perf_counter() - t0
    out: dict[str, Any] = {"profile_s": round(t_prof, 1), "total_gain_ms": round(sum(max(g, 0) for g in
                                                                                     gain.values()), 3)}
    for method in ("only_this_node", "only_this_node_8"):
        sens, _, t_sens, hit = cached_sensitivity(method, qdq_path, qdq, base_m, nodes, x, ref, work)
        out[f"sensitivity_s[{method}]"] = (t_sens, "cached" if hit else "fresh")
        runs = [(f"gain/sens[{method}]", quantize_order(sens, gain), None),
                (f"gain/sens[{method}]-12", quantize_order(sens, gain), 12)]
        if method == "only_this_node":
            runs.append(("gain-only", quantize_order(None, gain), None))
            runs.append(("gain-only-12", quantize_order(None, gain), 12))
        for label, order, tries in runs:
            checks: list[float] = []

            def passes(float_nodes: list[str], checks: list[float] = checks) -> bool:
                a, _ = ov_score(keep_float(qdq, base_m, float_nodes, QUANT_OPS), x, ref, work)
                checks.append(round(a, 4))
                return a >= MIN_RETENTION

            t0 = time.perf_counter()
            fs = grow_int8_set(order, nodes, passes, max_tries=tries)
            secs = time.perf_counter() - t0
            tag = label.replace("/", "-per-").replace("[", "-").replace("]", "")
            onnx.save(keep_float(qdq, base_m, fs, QUANT_OPS), str(work / f"floatset-grow-{tag}.onnx"))
            out[label] = {"seconds": round(secs, 1), "checks": len(checks), "float_nodes": len(fs),
                          "quantized": [n for n in nodes if n not in fs],
                          "predicted_cost_ms": round(sum(max(gain[n], 0) for n in fs), 3), "agreements": checks}
    return out


def choose(model: Path, x: np.ndarray, calib: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``choose_float_set`` (what the sweep would call) end to end: profile, (cached) sensitivity, <= 24 checks."""
    from edgeopt.sweep.int8.float_sets import choose_float_set
    from edgeopt.sweep.int8.node_gains import latency_gain
    from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes

    base = search_base(model, work)
    qdq_path = qdq_int8(base, calib, work, reduce_range=False, base=True)
    base_m, qdq = onnx.load(str(base)), onnx.load(str(qdq_path))
    nodes = quantized_nodes(qdq, QUANT_OPS)
    ref = outputs(ov_infer(ov_compile(base)), x)
    out: dict[str, Any] = {}
    for label in ("no-sensitivity", "only_this_node"):
        t0 = time.perf_counter()
        fe, ie = ov_events([base, qdq_path], x[:1])
        gain = latency_gain(fe, ie, nodes)
        sens = None
        if label != "no-sensitivity":
            sens, _, _, _ = cached_sensitivity(label, qdq_path, qdq, base_m, nodes, x, ref, work)

        def passes(float_nodes: list[str]) -> bool:
            a, _ = ov_score(keep_float(qdq, base_m, float_nodes, QUANT_OPS), x, ref, work)
            return a >= MIN_RETENTION

        choice = choose_float_set(nodes, gain, passes, sensitivity=sens, max_evaluations=24)
        secs = time.perf_counter() - t0
        onnx.save(keep_float(qdq, base_m, choice.float_nodes, QUANT_OPS), str(work / f"choose-{label}.onnx"))
        out[label] = {"seconds": round(secs, 1), "strategy": choice.strategy, "evaluations": choice.evaluations,
                      "float_nodes": len(choice.float_nodes), "quantized": [n for n in nodes if n not in
                                                                             choice.float_nodes]}
    files = {"ov-accuracy-only(today's ranking)": work / "floatset-only_this_node-accuracy-only.onnx",
             **{f"ov-choose-{k}": work / f"choose-{k}.onnx" for k in out}}
    infers: dict[str, Infer] = {"ort-fp32": ort_session(model), "ov-fp32": ov_infer(ov_compile(model))}
    infers.update({k: ov_infer(ov_compile(p)) for k, p in files.items() if p.is_file()})
    timing = time_configs(infers, x[:1], args.rounds, args.iters)
    out["configs"] = {k: {"retention": round(agreement(ref, outputs(f, x)), 4) if k.startswith("ov-") else 1.0,
                          **timing[k]} for k, f in infers.items()}
    return out


def final(model: Path, x: np.ndarray, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Every artifact made above, timed together in one interleaved loop, with its retention on its runtime."""
    files = {"ort-qdq": (Path((work / "qdq-rr0" / "done.txt").read_text()), "ort"),
             "ov-qdq": (Path((work / "qdq-rr0" / "done.txt").read_text()), "f32"),
             "ov-nncf": (work / "nncf-default.xml", "f32"), "ov-nncf-transformer": (work / "nncf-transformer.xml",
                                                                                     "f32")}
    for f in sorted(work.glob("floatset-*.onnx")):
        files[f"ov-{f.stem}"] = (f, "f32")
        if "unbounded-latency" in f.stem or f.stem.endswith("grow-gain-only"):
            files[f"ov-{f.stem}+bf16"] = (f, "bf16")
    infers: dict[str, Infer] = {"ort-fp32": ort_session(model), "ov-fp32": ov_infer(ov_compile(model)),
                                "ov-bf16(default)": ov_infer(ov_compile(model, precision=None))}
    for name, (path, how) in files.items():
        if path.is_file():
            infers[name] = ort_session(path) if how == "ort" else ov_infer(
                ov_compile(path, precision=None if how == "bf16" else "f32"))
    if args.only:
        keep = re.compile(args.only)
        infers = {k: v for k, v in infers.items() if k in ("ort-fp32", "ov-fp32") or keep.search(k)}
    refs = {"ort": outputs(infers["ort-fp32"], x), "ov": outputs(infers["ov-fp32"], x)}
    timing = time_configs(infers, x[:1], args.rounds, args.iters)
    return {name: {"retention_vs_fp32_same_runtime": round(agreement(refs["ort" if name.startswith("ort") else "ov"],
                                                                     outputs(f, x)), 4), **timing[name]}
            for name, f in infers.items()}


def ac_bounded(model: Path, x: np.ndarray, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """``edgeopt.sweep.int8.ov.nncf_accuracy_control`` bounded (10 reverted groups, ranking on 16 samples)."""
    from edgeopt.sweep.int8.ov import NncfAccuracyControl, nncf_accuracy_control

    ref = outputs(ov_infer(ov_compile(model)), x)

    def retention(outs: list[list[np.ndarray]]) -> tuple[float, list[float]]:
        per = [agreement(ref[i:i + 1], o[0]) for i, o in enumerate(outs)]
        return float(np.mean(per)), per

    cand = nncf_accuracy_control(model, work / "nncf-ac-bounded.xml", samples=[{"x": x[i:i + 1]} for i in
                                                                               range(len(x))],
                                 retention=retention, min_retention=MIN_RETENTION, shapes={"x": SHAPE},
                                 settings=NncfAccuracyControl(max_num_iterations=10, ranking_subset_size=16))
    infers: dict[str, Infer] = {"ort-fp32": ort_session(model), "ov-fp32": ov_infer(ov_compile(model)),
                                "ov-nncf-ac-bounded": ov_infer(ov_compile(cand.path))}
    timing = time_configs(infers, x[:1], args.rounds, args.iters)
    return {"seconds": cand.seconds, "fake_quantize_ops": cand.fake_quantize_ops,
            "retention": round(agreement(ref, outputs(infers["ov-nncf-ac-bounded"], x)), 4),
            "configs": timing}


if __name__ == "__main__":
    raise SystemExit(main())
