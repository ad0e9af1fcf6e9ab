"""Research: which INT8 strategy on OpenVINO meets issue 14's goals on PP-OCRv4 rec, and what it costs in time.

Same model and eval data as ``benchmarks/sweep.py`` (PP-OCRv4 rec from the ``rapidocr-onnxruntime`` wheel, 32 real
text lines 48x320), metric ``agreement`` (share of argmax decisions equal to the reference's; the reference is the
original model on the same runtime in FP32: OpenVINO with ``INFERENCE_PRECISION_HINT=f32``). Every latency is
measured with 1 thread, static shape [1, 3, 48, 320], in interleaved rounds (:mod:`edgeopt.sweep.ranking`:
round-robin, order rotated, per-round medians) and reported as a ratio to onnxruntime FP32 with a bootstrap
interval: the machine is shared, absolute times mean nothing. Per-layer times are profiled interleaved as well.

Stages (``--stages a,b``; artifacts and sensitivities are cached in ``--work``):
- ``baseline``: ORT FP32, OV FP32 (f32), OV default precision (BF16 on CPUs with AVX512-BF16/AMX), the project's
  QDQ INT8 (``int8`` recipe, with/without ``reduce_range``) on ORT and OV, ``nncf.quantize`` (default and
  ``model_type=TRANSFORMER``).
- ``ac``: ``nncf.quantize_with_accuracy_control`` unbounded (agreement, ``max_drop = 0.01``); slow (> 20 min).
- ``ac-bounded``: the same through :func:`edgeopt.sweep.int8_ov.nncf_accuracy_control`, 10 reverted groups.
- ``floatset`` / ``floatset-only`` / ``floatset-only8``: the float-set search on OpenVINO (the int8 search's
  base, weight ops quantized): per-node sensitivity (leave-one-out, only-this-node on 32 or 8 samples, cached by
  :class:`edgeopt.sweep.sensitivity_cache.SensitivityCache`), per-layer gains from ``PERF_COUNT`` profiles
  (:func:`edgeopt.sweep.latency_rank.latency_gain`), three rankings narrowed on OpenVINO
  (:func:`~edgeopt.sweep.latency_rank.narrow_float_set`, 8 put-backs).
- ``grow``: :func:`~edgeopt.sweep.latency_rank.grow_int8_set` from the float model, by gain or gain/sensitivity.
- ``choose``: :func:`~edgeopt.sweep.latency_rank.choose_float_set` end to end (what the sweep would call),
  timed against today's accuracy-only ranking.
- ``final``: every artifact above timed in one interleaved loop (``--only REGEX`` to time a subset longer).

Usage: python benchmarks/research_int8_ov.py [--work DIR] [--rounds 12] [--iters 15] [--stages baseline,choose]
       [--only REGEX] [--out benchmarks/results/research_int8_ov.json]
Summary of a run: benchmarks/results/research_int8_ov.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "device_agent"))

import onnx  # noqa: E402

from edgeopt.sweep.ranking import RoundRobin, compare_to, level_stats  # noqa: E402
from tests.real_models import fetch  # noqa: E402

MODEL = "ch_PP-OCRv4_rec_infer.onnx"
MIN_RETENTION = 0.99
SHAPE = [1, 3, 48, 320]
QUANT_OPS = ["Conv", "MatMul", "Gemm"]
Infer = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------- runtimes
def ort_session(path: Path | bytes, threads: int = 1) -> Infer:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path if isinstance(path, bytes) else str(path), so,
                                providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return lambda x: sess.run(None, {name: x})[0]


def ov_compile(model: Any, *, precision: str | None = "f32", threads: int = 1, perf: bool = False) -> Any:
    """Compile an ``ov.Model`` or a path, reshaped to the run's static shape, 1 thread, LATENCY."""
    import openvino as ov

    core = ov.Core()
    m = core.read_model(str(model)) if isinstance(model, (str, Path)) else model.clone()
    m.reshape({m.inputs[0].get_any_name(): SHAPE})
    cfg: dict[str, Any] = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY"}
    if precision:
        cfg["INFERENCE_PRECISION_HINT"] = precision
    if perf:
        cfg["PERF_COUNT"] = True
    return core.compile_model(m, "CPU", cfg)


def ov_infer(compiled: Any) -> Infer:
    req = compiled.create_infer_request()
    return lambda x: req.infer([x], share_inputs=True)[0].copy()


def outputs(infer: Infer, x: np.ndarray) -> np.ndarray:
    return np.concatenate([infer(x[i:i + 1]) for i in range(len(x))])


def agreement(ref: np.ndarray, out: np.ndarray) -> float:
    return float(np.mean(ref.argmax(-1) == out.argmax(-1)))


# ---------------------------------------------------------------- artifacts
def qdq_int8(model: Path, calib: Path, work: Path, reduce_range: bool, base: bool = False) -> Path:
    """edgeopt's int8 recipe (cleanup + quantize_int8), or the int8 search's base with weight ops only."""
    from edgeopt import optimize
    from edgeopt.recipes import Recipe

    name = f"qdq-rr{int(reduce_range)}{'-base' if base else ''}"
    out = work / name
    if (out / "done.txt").is_file():
        return Path((out / "done.txt").read_text().strip())
    cfg: dict[str, Any] = {"reduce_range": reduce_range}
    passes: list[dict[str, Any]] = []
    if base:
        cfg["op_types_to_quantize"] = QUANT_OPS
    else:
        passes.append({"pass": "cleanup", "config": {"min_opset": 17}})
        cfg["op_types_to_quantize"] = [*QUANT_OPS, "Relu", "Clip", "MaxPool"]
    passes.append({"pass": "quantize_int8", "config": cfg})
    recipe = Recipe.model_validate({"name": name, "description": "research", "formats": ["onnx"], "passes": passes})
    res = optimize(model, target="local", recipe=recipe, calib=calib, out_dir=out, fidelity=False, bench=False)
    (out / "done.txt").write_text(str(res.final.path))
    return Path(res.final.path)


def search_base(model: Path, work: Path) -> Path:
    """The int8 search's float base (cleanup, ORT basic-optimization fixed point, named nodes)."""
    from edgeopt.sweep.int8_steps import float_base

    done = work / "base" / "named.onnx"
    return done if done.is_file() else float_base(model, work, "local", ())


def calib_dataset(x: np.ndarray) -> Any:
    import nncf

    return nncf.Dataset([x[i:i + 1] for i in range(len(x))])


def nncf_int8(model: Path, x: np.ndarray, work: Path, name: str, **kwargs: Any) -> tuple[Path, float]:
    import nncf
    import openvino as ov

    out = work / f"{name}.xml"
    if out.is_file():
        return out, float(json.loads((work / f"{name}.json").read_text())["seconds"])
    t0 = time.perf_counter()
    m = ov.Core().read_model(str(model))
    m.reshape({"x": SHAPE})
    q = nncf.quantize(m, calib_dataset(x), subset_size=len(x), **kwargs)
    secs = time.perf_counter() - t0
    ov.save_model(q, str(out), compress_to_fp16=False)
    (work / f"{name}.json").write_text(json.dumps({"seconds": secs}))
    return out, secs


def nncf_ac(model: Path, x: np.ndarray, ref: np.ndarray, work: Path, name: str, **kwargs: Any) -> tuple[Path, float]:
    """``quantize_with_accuracy_control`` with the sweep's agreement vs OpenVINO FP32 outputs."""
    import nncf
    import openvino as ov

    out = work / f"{name}.xml"
    if out.is_file():
        return out, float(json.loads((work / f"{name}.json").read_text())["seconds"])

    def validate(compiled: Any, data: Any) -> tuple[float, list[float]]:
        req = compiled.create_infer_request()
        outs = [req.infer([s], share_inputs=True)[0].copy() for s in data]
        per = [float(np.mean(o.argmax(-1) == ref[i:i + 1].argmax(-1))) for i, o in enumerate(outs)]
        return float(np.mean(per)), per

    t0 = time.perf_counter()
    m = ov.Core().read_model(str(model))
    m.reshape({"x": SHAPE})
    ds = calib_dataset(x)
    q = nncf.quantize_with_accuracy_control(m, ds, ds, validate, max_drop=1 - MIN_RETENTION,
                                            drop_type=nncf.DropType.ABSOLUTE, subset_size=len(x), **kwargs)
    secs = time.perf_counter() - t0
    ov.save_model(q, str(out), compress_to_fp16=False)
    (work / f"{name}.json").write_text(json.dumps({"seconds": secs}))
    return out, secs


# ---------------------------------------------------------------- timing
def time_configs(infers: dict[str, Infer], x1: np.ndarray, rounds: int, iters: int, seed: int = 0) -> dict[str, Any]:
    """Interleaved rounds (edgeopt.sweep.ranking) of every config; ratios to ort-fp32 with bootstrap intervals."""

    def measure(name: str, n: int) -> list[float]:
        f = infers[name]
        f(x1)  # warm-up within the round (caches, frequency)
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            f(x1)
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    rr = RoundRobin(rounds=rounds, samples_per_round=iters, seed=seed)
    samples = rr.run(list(infers), measure)
    cmp = compare_to(samples, "ort-fp32", seed=seed)
    stats = level_stats(samples, seed=seed)
    return {name: {"speedup_vs_ort_fp32": round(1 / p.ratio, 3),
                   "speedup_ci": [round(1 / p.high, 3), round(1 / p.low, 3)],
                   "round_medians_ms": [round(v, 2) for v in stats[name].round_medians]}
            for name, p in cmp.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("~/.cache/edgeopt-bench/research_int8_ov").expanduser())
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--iters", type=int, default=15)
    ap.add_argument("--stages", default="baseline")
    ap.add_argument("--only", default="", help="final stage: time only configs matching this regex (+ baselines)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks/results/research_int8_ov.json")
    args = ap.parse_args()
    from sweep import text_lines

    model, why = fetch(MODEL)
    if model is None:
        print(f"skip: {why}", file=sys.stderr)
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
    _write(args.out, doc)
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
            row["fake_quantize_ops"] = _count_fq(made[name][0])
        out[name] = row
    return out


def ov_events(paths: list[Path], x1: np.ndarray, rounds: int = 10, iters: int = 5,
              precision: str | None = "f32") -> list[list[dict[str, Any]]]:
    """Per-layer events (the agent's layer-event schema) of each model, profiled in interleaved rounds.

    Each round runs every model ``iters`` times (``PERF_COUNT``); a layer's duration is the median over all its
    runs. Interleaving matters as much here as for whole-model latency: a loaded machine shifts per-layer times.
    """
    compiled = [ov_compile(p, precision=precision, perf=True) for p in paths]
    reqs = [c.create_infer_request() for c in compiled]
    for req in reqs:
        for _ in range(3):
            req.infer([x1])
    times: list[dict[str, list[float]]] = [{} for _ in paths]
    rows: list[dict[str, Any]] = [{} for _ in paths]
    for r in range(rounds):
        for k in (range(len(paths)) if r % 2 == 0 else reversed(range(len(paths)))):
            for _ in range(iters):
                reqs[k].infer([x1])
                for p in reqs[k].get_profiling_info():
                    times[k].setdefault(p.node_name, []).append(p.real_time.total_seconds() * 1e6)
                    rows[k][p.node_name] = p
    out = []
    for k, c in enumerate(compiled):
        info = {o.get_friendly_name(): o.get_rt_info() for o in c.get_runtime_model().get_ordered_ops()}
        events = []
        for name, p in rows[k].items():
            ri = info.get(name)
            events.append({"name": name, "op_type": p.node_type, "impl": p.exec_type,
                           "original_names": ri["originalLayersNames"].astype(str).split(",") if ri else [name],
                           "executed": "NOT_RUN" not in str(p.status),
                           "duration_us": float(np.median(times[k][name])),
                           "order": int(ri["execOrder"].astype(str)) if ri else -1})
        out.append(sorted(events, key=lambda e: e["order"]))
    return out


def ov_score(model: onnx.ModelProto, x: np.ndarray, ref: np.ndarray, work: Path) -> tuple[float, float]:
    """(agreement, relative L2 error) of an in-memory ONNX model on OpenVINO (f32) vs ``ref``."""
    path = work / "trial.onnx"
    onnx.save(model, str(path))
    out = outputs(ov_infer(ov_compile(path)), x)
    rel = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
    return agreement(ref, out), rel


def sensitivity(method: str, qdq: onnx.ModelProto, base_m: onnx.ModelProto, nodes: list[str], x: np.ndarray,
                ref: np.ndarray, work: Path) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Per-node accuracy effect on OpenVINO: ``{node: (agreement, rel_err)}`` with the method's edit.

    ``leave_one_out``: everything quantized but that node (32 samples).
    ``only_this_node``: only that node quantized (32 samples).
    ``only_this_node_8``: only that node quantized, 8 samples.
    """
    from edgeopt.sweep.qdq_surgery import keep_float

    raw: dict[str, tuple[float, float]] = {}
    for n in nodes:
        if method == "leave_one_out":
            raw[n] = ov_score(keep_float(qdq, base_m, [n], QUANT_OPS), x, ref, work)
        else:
            k = 8 if method.endswith("_8") else len(x)
            raw[n] = ov_score(keep_float(qdq, base_m, [m for m in nodes if m != n], QUANT_OPS), x[:k], ref[:k], work)
    return {}, raw


def cached_sensitivity(method: str, qdq_path: Path, qdq: onnx.ModelProto, base_m: onnx.ModelProto,
                       nodes: list[str], x: np.ndarray, ref: np.ndarray, work: Path) -> tuple[dict[str, float],
                                                                                       dict[str, Any], float, bool]:
    """:func:`sensitivity` through the sweep's :class:`SensitivityCache` (keyed like the sweep would key it)."""
    import hashlib

    import openvino as ov

    from edgeopt.fsutil import sha256_file
    from edgeopt.sweep.sensitivity_cache import NodeScore, SensitivityCache, SensitivityKey

    key = SensitivityKey(model_sha256=sha256_file(qdq_path), runtime="openvino", runtime_version=ov.__version__,
                         quantizer={"op_types_to_quantize": QUANT_OPS, "reduce_range": False},
                         eval_digest=hashlib.sha256(x.tobytes()).hexdigest()[:16], metric="agreement",
                         output="0", method=method)

    def compute() -> tuple[float, float, dict[str, NodeScore]]:
        _, raw = sensitivity(method, qdq, base_m, nodes, x, ref, work)
        full, rel = ov_score(qdq, x, ref, work)
        return full, rel, {n: NodeScore(retention=a, rel_err=r) for n, (a, r) in raw.items()}

    entry, hit = SensitivityCache(work / "cache").sensitivity_or_compute(key, compute)
    if method == "leave_one_out":  # accuracy gained by keeping the node in float
        sens = {n: (v.retention - entry.baseline_retention) + 0.05 * (entry.baseline_rel_err - v.rel_err)
                for n, v in entry.nodes.items()}
    else:  # accuracy the node costs when quantized alone (retention lost, output error as the tie-break)
        sens = {n: (1 - v.retention) + 0.1 * v.rel_err for n, v in entry.nodes.items()}
    return sens, {n: v.model_dump() for n, v in entry.nodes.items()}, entry.seconds, hit


def floatset(model: Path, x: np.ndarray, calib: Path, work: Path, args: argparse.Namespace,
             method: str) -> dict[str, Any]:
    """The float-set search on OpenVINO: node sensitivity, per-layer gains, three rankings narrowed on OpenVINO.

    Rankings: ``latency-aware`` (free nodes, then accuracy per ms lost), ``accuracy-only`` (the sweep's
    ranking today), ``cost-only`` (cheapest float nodes first, no sensitivity at all). Each is narrowed with at
    most 8 put-backs (most expensive first). The chosen float sets are written for the ``final`` stage.
    """
    from edgeopt.sweep.latency_rank import latency_gain, narrow_float_set, node_times, rank_for_float
    from edgeopt.sweep.qdq_surgery import keep_float, quantized_nodes

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
    from edgeopt.sweep.latency_rank import grow_int8_set, latency_gain, quantize_order
    from edgeopt.sweep.qdq_surgery import keep_float, quantized_nodes

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
    from edgeopt.sweep.latency_rank import choose_float_set, latency_gain
    from edgeopt.sweep.qdq_surgery import keep_float, quantized_nodes

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
    """``edgeopt.sweep.int8_ov.nncf_accuracy_control`` bounded (10 reverted groups, ranking on 16 samples)."""
    from edgeopt.sweep.int8_ov import NncfAccuracyControl, nncf_accuracy_control

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


def _count_fq(path: Path) -> int:
    import openvino as ov

    return sum(op.get_type_name() == "FakeQuantize" for op in ov.Core().read_model(str(path)).get_ordered_ops())


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    tmp.replace(path)


if __name__ == "__main__":
    raise SystemExit(main())
