"""How much of the INT8 speedup can a float set keep on PP-OCRv4 det at a threshold? (issue 32, session 18)

The det sweep's INT8 mix on OpenVINO captured 48-66 % of the all-INT8 ceiling's speedup at mask IoU 0.99, keeping
55-59 of 62 convolutions in float. Is that the search's order (time saved first, no per-node sensitivity) or the
quantization error itself? This script replays the search's float-set choice (:func:`edgeopt.sweep.int8.float_sets.
choose_float_set`, the sweep's own code) on the search's default INT8 model (the ``quantize_int8`` pass with this
target's defaults, min-max ranges), each candidate judged as the sweep judges it: OpenVINO CPU outputs on the 8 eval
canvases against OpenVINO FP32's, mask IoU. The per-node gains are OpenVINO's per-layer profile (float minus INT8
time), as :func:`edgeopt.sweep.int8.latency.gains` takes them. Orders compared, at 0.99 and 0.95:

- ``gain``: the sweep's (no sensitivity), 24 evaluations;
- ``noise``: by time saved per share of the output's squared error with only that node fake-quantized
  (:mod:`.fake_quant_probe`: one onnxruntime session for all nodes, 2 samples), 24 evaluations;
- ``gain, all``: the sweep's order with evaluations for every node worth trying (the float set's bound for it).

Then, whether more INT8 convs make a faster model: the top-k convs by per-layer gain in INT8 (the rest float), for
several k, beside FP32 (k=0) and full INT8, timed on OpenVINO in interleaved rounds through the agent
(:func:`benchmarks.ship_goals.latencies`). Per-layer gains leave out what a float/INT8 boundary costs; this shows it.

Prints a table and writes JSON (the CPU named). Run alone: the profiles are timings.

Usage: python -m benchmarks.research.float_set_bound [--out benchmarks/results/float_set_bound.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from benchmarks.common import machine_facts, real_model, write_json
from benchmarks.research.fake_quant_probe import node_noise, noise_shares
from benchmarks.ship_goals import MODELS, latencies
from edgeopt.deploy import decision_cpu_flags
from edgeopt.evaluation import OutputSelection, resolve_metric, retention
from edgeopt.optimize.api import optimize_graph
from edgeopt.profile.api import profile
from edgeopt.sweep.int8.float_sets import FREE_MS, choose_float_set
from edgeopt.sweep.int8.host_eval import HostEval
from edgeopt.sweep.int8.node_gains import gains_between
from edgeopt.sweep.int8.qdq_surgery import keep_float, quantized_nodes
from edgeopt.sweep.int8.steps import QUANT_OPS, float_base, search_recipe
from edgeopt_agent.environment import cpu_flags

SHAPES = {"x": [1, 3, 480, 640]}
TOP_K = (0, 3, 5, 8, 15, 25)  # INT8 convs, most per-layer gain first (0: the FP32 model); full INT8 is added


def build(work: Path) -> tuple[Path, Path, Path]:
    """(float base, the search's default INT8 model, eval npz)."""
    file, make, _, _ = MODELS["ppocr-det"]
    model = real_model(file, "float_set_bound")
    if model is None:
        raise SystemExit("float_set_bound: the PP-OCRv4 det model is not installed (rapidocr-onnxruntime)")
    npz = work / "det.npz"
    np.savez(npz, **make())
    base = float_base(model, work, "local", [])
    recipe = search_recipe("bound", [{"pass": "quantize_int8", "config": {"op_types_to_quantize": QUANT_OPS}}])
    res = optimize_graph(base, target="local", recipe=recipe, calib=npz, out_dir=work / "int8", fidelity=False,
                         bench=False)
    return base, Path(res.final.path), npz


def gains(base: Path, qdq: Path, nodes: list[str]) -> dict[str, float]:
    fl, il = (profile(m, runtime="openvino", iterations=30, warmup=5, shapes=SHAPES).node_times_ms()
              for m in (base, qdq))
    return gains_between(fl, il, nodes)


class OvJudge:
    """A float set's mask IoU on OpenVINO CPU against OpenVINO FP32, as the sweep's device evaluation."""

    def __init__(self, base: onnx.ModelProto, qdq: onnx.ModelProto, x: np.ndarray, work: Path) -> None:
        import openvino as ov

        self.core, self.base, self.qdq, self.x, self.work = ov.Core(), base, qdq, x, work
        self.metric = resolve_metric("mask_iou")
        self.ref = self.outputs(base)

    def outputs(self, model: onnx.ModelProto) -> np.ndarray:
        path = self.work / "judge.onnx"
        path.write_bytes(model.SerializeToString())
        compiled = self.core.compile_model(str(path), "CPU")
        return np.concatenate([compiled(self.x[i:i + 1])[0] for i in range(len(self.x))])

    def retention(self, float_nodes: list[str]) -> float:
        out = self.outputs(keep_float(self.qdq, self.base, float_nodes, QUANT_OPS))
        return float(retention(self.metric, self.ref, out, None)[1])


def replay(judge: OvJudge, nodes: list[str], gain: dict[str, float], sens: dict[str, float] | None,
           threshold: float, evaluations: int) -> dict[str, Any]:
    trace: list[tuple[int, float]] = []

    def passes(fs: list[str]) -> bool:
        trace.append((len(fs), round(judge.retention(fs), 4)))
        return trace[-1][1] >= threshold

    t0 = time.perf_counter()
    choice = choose_float_set(nodes, gain, passes, sensitivity=sens, max_evaluations=evaluations)
    int8 = [n for n in nodes if n not in choice.float_nodes]
    possible = sum(g for g in gain.values() if g > 0)
    kept = sum(gain[n] for n in int8)
    return {"strategy": choice.strategy, "evaluations": choice.evaluations, "int8_nodes": len(int8),
            "gain_ms": round(kept, 3), "possible_ms": round(possible, 3), "share": round(kept / possible, 3),
            "seconds": round(time.perf_counter() - t0, 1), "trace": trace}


def top_k_latencies(judge: OvJudge, nodes: list[str], gain: dict[str, float], work: Path, rounds: int
                    ) -> list[dict[str, Any]]:
    """Median and interval (ms) of the models with the top-k convs by gain in INT8, interleaved on OpenVINO, and
    their mask IoU."""
    base, qdq = judge.base, judge.qdq
    order = sorted(nodes, key=lambda n: -gain[n])
    entries: dict[str, tuple[Path, str | None, dict[str, Any]]] = {}
    for k in TOP_K + (len(nodes),):
        path = work / f"top{k}.onnx"
        path.write_bytes(keep_float(qdq, base, order[k:], QUANT_OPS).SerializeToString())
        entries[f"top{k}"] = (path, "openvino", {})
    stats = latencies(entries, 0, SHAPES, rounds, 0.6)
    return [{"int8_convs": k, "gain_ms": round(sum(gain[n] for n in order[:k]), 3), **stats[f"top{k}"],
             "retention": round(judge.retention(order[k:]), 4)} for k in TOP_K + (len(nodes),)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/float_set_bound.json"))
    ap.add_argument("--rounds", type=int, default=8, help="interleaved timing rounds of the top-k models")
    ap.add_argument("--work", type=Path, default=Path("/tmp/edgeopt-float-set-bound"))
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    base, qdq_path, npz = build(args.work)
    base_m, qdq = onnx.load(str(base)), onnx.load(str(qdq_path))
    nodes = quantized_nodes(qdq, QUANT_OPS)
    gain = gains(base, qdq_path, nodes)
    worth = sum(g >= FREE_MS for g in gain.values())
    host = HostEval(base_m, npz, resolve_metric("mask_iou"), OutputSelection(), None)
    tp = time.perf_counter()
    scores, drift = node_noise(host, qdq, base_m, nodes)
    probe_s = round(time.perf_counter() - tp, 1)
    judge = OvJudge(base_m, qdq, np.load(npz)["x"], args.work)
    rows = []
    for threshold in (0.99, 0.95):
        for order, sens, evals in (("gain", None, 24), ("noise", noise_shares(scores), 24),
                                   ("gain, all", None, worth + 2)):
            row = {"threshold": threshold, "order": order, **replay(judge, nodes, gain, sens, threshold, evals)}
            rows.append(row)
            print(f"{threshold:<5} {order:<10} {row['strategy']:<7} evals {row['evaluations']:>3}  INT8 nodes "
                  f"{row['int8_nodes']:>2}/{len(nodes)}  gains kept {row['gain_ms']:.2f} of {row['possible_ms']:.2f} "
                  f"ms ({row['share']:.0%})  {row['seconds']} s", file=sys.stderr)
    facts = {**machine_facts("onnxruntime", "openvino"), "flags": decision_cpu_flags(cpu_flags())}
    timing = top_k_latencies(judge, nodes, gain, args.work, args.rounds)
    for t in timing:
        print(f"top {t['int8_convs']:>2} convs in INT8 (per-layer gains {t['gain_ms']:.2f} ms): {t['median_ms']:.2f} "
              f"ms ({t['low_ms']:.2f}-{t['high_ms']:.2f}), mask IoU {t['retention']}", file=sys.stderr)
    single = {n: {"gain_ms": gain[n], "retention": round(r, 4), "rel_err": round(e, 4)} for n, (r, e) in scores.items()}
    doc = {"benchmark": "float_set_bound", "machine": facts, "model": "PP-OCRv4 det 480x640, 8 canvases",
           "quantized_nodes": len(nodes), "worth_trying": worth, "free_ms": FREE_MS,
           "full_int8_retention": round(judge.retention([]), 4), "probe_seconds": probe_s, "probe_drift": drift,
           "top_k_openvino": timing, "timing_rounds": args.rounds, "single_node": single, "replays": rows,
           "total_s": round(time.perf_counter() - t0, 1)}
    write_json(args.out, doc)
    print(json.dumps({k: doc[k] for k in ("quantized_nodes", "worth_trying", "full_int8_retention",
                                           "probe_seconds", "total_s")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
