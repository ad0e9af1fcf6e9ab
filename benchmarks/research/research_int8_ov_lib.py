"""Helpers of ``benchmarks/research/research_int8_ov.py``: the runtimes' sessions, the quantizers it compares (QDQ
INT8, NNCF, NNCF accuracy control), interleaved timing, OpenVINO per-layer events and per-node sensitivity (cached).

Same model and settings as that script (PP-OCRv4 rec, static shape [1, 3, 48, 320], 1 thread, metric agreement).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from edgeopt.sweep.rank.decide import compare_to  # noqa: E402
from edgeopt.sweep.rank.round_stats import RoundRobin, level_stats  # noqa: E402

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
    from edgeopt.sweep.int8.steps import float_base

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
    """Interleaved rounds (edgeopt.sweep.rank.decide) of every config; ratios to ort-fp32 with bootstrap intervals."""

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
    from edgeopt.sweep.int8.qdq_surgery import keep_float

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
    from edgeopt.sweep.int8.sensitivity_cache import NodeScore, SensitivityCache, SensitivityKey

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


def count_fq(path: Path) -> int:
    import openvino as ov

    return sum(op.get_type_name() == "FakeQuantize" for op in ov.Core().read_model(str(path)).get_ordered_ops())



