"""The steps of the accuracy-aware INT8 search that need no search state: the quantizer variants, the float base
model, per-node sensitivity on the host and host-side narrowing of a float set (:mod:`.search` runs them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import onnx

from ...fsutil import atomic_write_bytes
from ...optimize import optimize_graph
from ...passes.cleanup import ort_basic_optimize
from ...recipes import Recipe
from .float_sets import put_back, smallest_passing_prefix
from .host_eval import HostEval
from .qdq_surgery import keep_float, quantized_nodes

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


def search_recipe(name: str, passes: list[dict[str, Any]]) -> Recipe:
    return Recipe.model_validate({"name": name, "description": "accuracy-aware INT8 search trial", "formats": ["onnx"],
                                  "passes": passes})


def float_base(model: Path, out: Path, target: str, targets_dirs: Sequence[Path]) -> Path:
    """The model every trial quantizes: cleaned, at onnxruntime's basic-optimization fixed point, nodes named.

    The quantizer re-optimizes its input; starting from a fixed point keeps node names and inputs identical, so
    a node put back in float by :func:`keep_float` matches ``nodes_to_exclude`` exactly.
    """
    res = optimize_graph(model, target=target, recipe=search_recipe("int8-search-base", [{"pass": "cleanup",
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
    prefix = smallest_passing_prefix(ranking, passes, budget)
    if prefix is None:
        return []
    return put_back(prefix, list(reversed(prefix)), passes, budget)  # least sensitive first
