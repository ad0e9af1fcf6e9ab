"""Per-tensor range repair: for each activation tensor, the calibration method whose range keeps the most accuracy.

Min-max calibration stretches a tensor's range to its largest value; one outlier channel or activation then leaves
the other values a handful of the 256 INT8 steps, and the model loses accuracy that keeping layers in float would
otherwise have to buy back. onnxruntime's calibrators give each tensor's range by three methods (min-max,
percentile, entropy); this module picks, per tensor, the one that keeps the sweep's retention best on the host:

1. :func:`load_ranges`: each method's per-tensor ranges, from onnxruntime's own calibration cache (one calibration
   per method, written by the ``quantize_int8`` pass with ``advanced.calibration_cache`` and read back by every
   later build, so no trial calibrates twice).
2. :func:`with_ranges`: a min-max QDQ model whose chosen tensors take another method's quantization parameters,
   copied from that method's QDQ model (both built by onnxruntime from the same base). Bit-identical to
   ``quantize_static`` with ``TensorQuantOverrides`` rmin/rmax from that method's cache (tested), at the cost of a
   graph edit instead of a quantizer run, so a host check costs one session.
3. :func:`choose_ranges`: the whole-model methods first, then tensor by tensor (where the methods disagree most
   first), keeping a method for a tensor only when the host retention rises; stops once the threshold holds, after
   :data:`MAX_RANGE_EVALUATIONS` checks, or when :data:`STALL_TENSORS` tensors in a row barely moved it (the
   error is not in the ranges).

The chosen ranges become ``quantize_int8``'s ``tensor_ranges`` (onnxruntime's ``TensorQuantOverrides``), so the
search's model is built by onnxruntime like any other. Plain inputs only (models, ranges, a score callable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

METHODS = ("minmax", "percentile", "entropy")
# When a repair closes less than this share of the gap between plain min-max INT8's retention and the threshold, the
# error is not where that kind of repair works: the costlier repairs of the same kind are skipped (entropy's ranges
# after percentile's, :mod:`.repair_step`; NNCF's full bias correction after its fast one, :mod:`.nncf_repair`).
HOPELESS_SHARE = 0.25
MAX_RANGE_EVALUATIONS = 12  # host checks of single-tensor choices (after the whole-model methods)
MIN_WIDTH_CHANGE = 0.1  # a method whose range differs in width by less than this share is not tried on a tensor
MIN_GAIN = 1e-4  # a choice is kept only when the host retention rises by more than this
# Single-tensor checks stop after this many tensors in a row each closing less than STALL_SHARE of the gap to the
# threshold: on PP-OCRv4 det (error spread over the model, not in ranges) 12 checks moved mask IoU 0.681 -> 0.688
# against a 0.99 threshold, at ~4-7 s a check.
STALL_TENSORS = 4
STALL_SHARE = 0.05

Range = tuple[float, float]
Score = Callable[[Mapping[str, str]], float]  # tensor -> method (others min-max) -> host retention


def load_ranges(cache: Path) -> dict[str, Range]:
    """Per activation tensor: ``(rmin, rmax)`` from onnxruntime's calibration cache ``cache``."""
    from onnxruntime.quantization.calibrate import load_tensors_data

    data = load_tensors_data(cache).data
    return {name: (float(np.ravel(td.range_value[0])[0]), float(np.ravel(td.range_value[1])[0]))
            for name, td in data.items()}


def activation_qparams(qdq: onnx.ModelProto) -> dict[str, tuple[str, str]]:
    """Per quantized activation tensor (a ``QuantizeLinear`` input that is not an initializer), by the name the
    calibration gave it: the names of its scale and zero-point initializers. A graph output keeps its name on the
    ``DequantizeLinear`` (onnxruntime renames the producer's output ``<name>_QuantizeLinear_Input``)."""
    inits = {t.name for t in qdq.graph.initializer}
    outputs = {o.name for o in qdq.graph.output}
    dq_out = {n.input[0]: n.output[0] for n in qdq.graph.node if n.op_type == "DequantizeLinear"}
    out: dict[str, tuple[str, str]] = {}
    for n in qdq.graph.node:
        if n.op_type == "QuantizeLinear" and n.input[0] not in inits and len(n.input) > 2:
            name = dq_out.get(n.output[0], "")
            out[name if name in outputs else n.input[0]] = (n.input[1], n.input[2])
    return out


def consumers(qdq: onnx.ModelProto, tensor: str) -> list[str]:
    """The quantized nodes that read ``tensor`` through its ``QuantizeLinear -> DequantizeLinear`` pair."""
    q_out = {n.output[0] for n in qdq.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == tensor}
    dq_out = {n.output[0] for n in qdq.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in q_out}
    return [n.name for n in qdq.graph.node if any(i in dq_out for i in n.input)]


def with_ranges(qdq: onnx.ModelProto, donors: Mapping[str, onnx.ModelProto]) -> onnx.ModelProto:
    """A copy of ``qdq`` in which each tensor of ``donors`` takes the scale and zero point its donor model (the
    same base quantized by onnxruntime with another calibration method) gave it, and its consumers' int32 biases
    (quantized at input scale x weight scale) the donor's; tensors the donor does not quantize keep theirs."""
    out = onnx.ModelProto()
    out.CopyFrom(qdq)
    mine = activation_qparams(out)
    by_name = {t.name: t for t in out.graph.initializer}
    donor_cache: dict[int, tuple[dict[str, tuple[str, str]], dict[str, onnx.TensorProto]]] = {}
    for tensor, donor in donors.items():
        if tensor not in mine:
            continue
        if id(donor) not in donor_cache:
            donor_cache[id(donor)] = (activation_qparams(donor), {t.name: t for t in donor.graph.initializer})
        theirs, inits = donor_cache[id(donor)]
        if tensor not in theirs:
            continue
        pairs = list(zip(mine[tensor], theirs[tensor], strict=True))
        # a consumer's int32 bias is quantized with input scale x weight scale: it follows the input's range
        pairs += [(n, n) for n in _bias_params(donor, consumers(donor, tensor)) if n in by_name and n in inits]
        for dst, src in pairs:
            name = by_name[dst].name
            by_name[dst].CopyFrom(inits[src])
            by_name[dst].name = name
    return out


def _bias_params(qdq: onnx.ModelProto, nodes: Sequence[str]) -> list[str]:
    """The initializers behind the int32 bias inputs of ``nodes`` (the bias, its scale and zero point)."""
    inits = {t.name: t for t in qdq.graph.initializer}
    dq_of = {n.output[0]: n for n in qdq.graph.node if n.op_type == "DequantizeLinear"}
    wanted = set(nodes)
    out: list[str] = []
    for node in qdq.graph.node:
        if node.name not in wanted:
            continue
        for i in node.input:
            dq = dq_of.get(i)
            if dq is not None and dq.input[0] in inits and inits[dq.input[0]].data_type == onnx.TensorProto.INT32:
                out += [x for x in dq.input if x in inits]
    return out


def disagreement(ranges: Mapping[str, Mapping[str, Range]], tensor: str) -> float:
    """How much the methods' ranges of ``tensor`` differ: the widest width over the narrowest, minus 1."""
    widths = [r[tensor][1] - r[tensor][0] for r in ranges.values() if tensor in r]
    return max(widths) / max(min(widths), 1e-12) - 1.0 if widths else 0.0


@dataclass
class RangeChoice:
    """The methods chosen per tensor (min-max where absent), the host retention before and after, and per tensor
    tried what was chosen and why."""

    methods: dict[str, str]
    retention_before: float
    retention: float
    threshold: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    whole_model: dict[str, float] = field(default_factory=dict)
    evaluations: int = 0


def choose_ranges(tensors: Sequence[str], ranges: Mapping[str, Mapping[str, Range]], score: Score,
                  threshold: float, *, max_evaluations: int = MAX_RANGE_EVALUATIONS,
                  budget: Callable[[], bool] = lambda: True) -> RangeChoice:
    """Per tensor, the calibration method whose range keeps the most host retention.

    Args:
        tensors: the quantized activation tensors.
        ranges: method -> tensor -> ``(rmin, rmax)``; ``minmax`` is the starting point.
        score: host retention of a choice (tensor -> method; the rest min-max).
        threshold: stop once the retention reaches it (no range choice needs to go further).
        max_evaluations: most single-tensor checks after the whole-model ones.
        budget: False once the search's time runs out.
    """
    start = score({})
    out = RangeChoice(methods={}, retention_before=start, retention=start, threshold=threshold, evaluations=1,
                      whole_model={"minmax": round(start, 6)})
    for method in (m for m in ranges if m != "minmax"):  # the whole model by each method
        if out.retention >= threshold or not budget():
            break
        choice = {t: method for t in tensors if t in ranges[method]}
        ret = score(choice)
        out.evaluations += 1
        out.whole_model[method] = round(ret, 6)
        if ret > out.retention + MIN_GAIN:
            out.methods, out.retention = choice, ret
    order = sorted((t for t in tensors if disagreement(ranges, t) > MIN_WIDTH_CHANGE),
                   key=lambda t: -disagreement(ranges, t))
    single, stalled = 0, 0
    for tensor in order:
        if out.retention >= threshold or single >= max_evaluations or stalled >= STALL_TENSORS or not budget():
            break
        gap = threshold - out.retention
        current = out.methods.get(tensor, "minmax")
        best: tuple[float, str] | None = None
        for method in ranges:
            if method == current or tensor not in ranges[method] or not _differs(ranges, tensor, current, method):
                continue
            if single >= max_evaluations:
                break
            ret = score({**out.methods, tensor: method})
            single += 1
            out.evaluations += 1
            if ret > out.retention + MIN_GAIN and (best is None or ret > best[0]):
                best = (ret, method)
        out.rows.append(_row(ranges, tensor, current, best, out.retention))
        stalled = 0 if best is not None and best[0] - out.retention >= STALL_SHARE * gap else stalled + 1
        if best is not None:
            out.methods[tensor], out.retention = best[1], best[0]
    return out


def _differs(ranges: Mapping[str, Mapping[str, Range]], tensor: str, a: str, b: str) -> bool:
    ra, rb = ranges[a].get(tensor), ranges[b].get(tensor)
    if ra is None or rb is None:
        return False
    wa, wb = ra[1] - ra[0], rb[1] - rb[0]
    return abs(wb - wa) > MIN_WIDTH_CHANGE * max(wa, wb, 1e-12)


def _row(ranges: Mapping[str, Mapping[str, Range]], tensor: str, current: str, best: tuple[float, str] | None,
         before: float) -> dict[str, Any]:
    """What was decided for ``tensor`` and why (``sweep.json``'s range repair rows)."""
    method = best[1] if best is not None else current
    lo, hi = ranges[method][tensor]
    row: dict[str, Any] = {"tensor": tensor, "method": method, "range": [round(lo, 6), round(hi, 6)],
                           "minmax_range": [round(v, 6) for v in ranges["minmax"][tensor]],
                           "retention_before": round(before, 6)}
    if best is None:
        row["retention_after"] = round(before, 6)
        row["why"] = f"kept {current}: no other method's range raised the host retention above {before:.4f}"
    else:
        row["retention_after"] = round(best[0], 6)
        row["why"] = f"{method} range [{lo:.4g}, {hi:.4g}]: host retention {before:.4f} -> {best[0]:.4f}"
    return row


def gap_share(before: float, after: float, threshold: float) -> float:
    """The share of the gap between ``before`` (plain min-max INT8's retention) and ``threshold`` that a repair
    reaching ``after`` closed (1.0 when there is no gap)."""
    gap = threshold - before
    return (after - before) / gap if gap > 0 else 1.0
