"""What a whole-model repair of INT8 error can reach at best, checked on the host before it is built.

A repair lowers the quantization error in some places only, so the model with those places computing in float
(the rest INT8 as quantized) is the best it can do; when that model misses the threshold the repair cannot keep
it, and building it (NNCF's whole quantization again, 5-15 CPU-s on PP-OCRv4 rec) is skipped with the bound as the
reason. One host check per kind of repair (:attr:`.nncf_repair.NncfRepair.kind`):

- ``smoothing`` (SmoothQuant moves activation outliers into MatMul weights): every quantized MatMul and Gemm in
  float (:func:`.qdq_surgery.keep_float`);
- ``ranges`` (a range estimator such as the mean of per-sample quantiles changes activation ranges only): every
  activation in float, the weights INT8 as quantized (:func:`weight_only`). Only when the weights use the full INT8
  range: weights quantized with ``reduce_range`` (7 bits, the x86 default without VNNI) err more than NNCF's, and
  the bound would be too low;
- ``bias`` (bias correction corrects the error of weights and activations together): no bound.

The bound is onnxruntime's INT8 model on the host, not NNCF's quantization of the rest: NNCF keeps a few patterns
in float that onnxruntime quantizes (squeeze-and-excitation blocks), so its model could sit slightly above the
bound. Measured, NNCF's plain INT8 sat below onnxruntime's (PP-OCRv4 rec 0.9609 against 0.9625, det 0.695 against
0.702).

PP-OCRv4 rec at 0.99 (min-max INT8 0.9625 on the host): its 13 MatMuls in float keep 0.9625 and every activation in
float keeps 0.9719, so neither SmoothQuant nor the mean-quantile estimator is built (they reached 0.9547 and 0.9125
when they were); its error is in the convolutions' weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .qdq_surgery import keep_float, quantized_nodes

# a weight quantized with reduce_range uses 7 bits: every |q - zero point| stays within this
REDUCED_RANGE_MAX = 64
_MATMULS = {"MatMul", "Gemm"}


def weight_only(qdq: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``qdq`` in which every activation computes in float: each activation's ``QuantizeLinear`` whose
    output only ``DequantizeLinear`` nodes read is dropped, and those become an ``Identity`` of the float tensor;
    weights (and int32 biases) stay quantized."""
    out = onnx.ModelProto()
    out.CopyFrom(qdq)
    g = out.graph
    inits = {t.name for t in g.initializer}
    readers: dict[str, set[str]] = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, set()).add(n.op_type)
    readers.update({o.name: {"graph output"} for o in g.output})
    q_in = {n.output[0]: n.input[0] for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits
            and readers.get(n.output[0]) == {"DequantizeLinear"}}
    nodes = []
    for n in g.node:
        if n.op_type == "QuantizeLinear" and n.output[0] in q_in:
            continue
        if n.op_type == "DequantizeLinear" and n.input[0] in q_in:
            n = helper.make_node("Identity", [q_in[n.input[0]]], [n.output[0]], name=f"{n.name}_float")
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    return out


def full_range_weights(qdq: onnx.ModelProto) -> bool:
    """Whether ``qdq``'s 8-bit weights use the full range (some ``|q - zero point|`` above
    :data:`REDUCED_RANGE_MAX`), not ``reduce_range``'s 7 bits."""
    inits = {t.name: t for t in qdq.graph.initializer}
    for n in qdq.graph.node:
        w = inits.get(n.input[0]) if n.op_type == "DequantizeLinear" else None
        if w is None or w.data_type not in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8):
            continue
        q = numpy_helper.to_array(w).astype(np.int32)
        zp = numpy_helper.to_array(inits[n.input[2]]).astype(np.int32) if len(n.input) > 2 and n.input[2] in inits \
            else np.zeros(1, np.int32)
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        if zp.size > 1:  # per channel: the zero points along the weight's axis
            zp = zp.reshape([-1 if d == axis % q.ndim else 1 for d in range(q.ndim)])
        if int(np.abs(q - zp).max(initial=0)) > REDUCED_RANGE_MAX:
            return True
    return False


def repair_bounds(qdq: onnx.ModelProto, base: onnx.ModelProto, score: Callable[[onnx.ModelProto], float],
                  threshold: float, op_types: Sequence[str]) -> Callable[[str], str | None]:
    """A check per kind of repair: why a repair of that kind cannot keep ``threshold`` (None: it might, or no
    bound applies). ``score`` is the host retention of a model; each kind's bound is scored once, when first
    asked; ``base`` is the float model ``qdq`` quantized (its weights, for :func:`.qdq_surgery.keep_float`)."""
    memo: dict[str, str | None] = {}

    def smoothing() -> str | None:
        kinds = {n.name: n.op_type for n in qdq.graph.node}
        mm = [n for n in quantized_nodes(qdq, op_types) if kinds.get(n) in _MATMULS]
        if not mm:
            return "no MatMul is quantized: SmoothQuant has nothing to repair"
        bound = score(keep_float(qdq, base, mm, op_types))
        return None if bound >= threshold else (
            f"with its {len(mm)} quantized MatMul{'s' * (len(mm) > 1)} in float (the rest INT8) the host keeps "
            f"{bound:.4f} < {threshold}: SmoothQuant repairs only MatMul inputs, so it cannot keep the threshold")

    def ranges() -> str | None:
        if not full_range_weights(qdq):
            return None  # 7-bit weights here: a weight-only bound would understate NNCF's 8-bit ones
        bound = score(weight_only(qdq))
        return None if bound >= threshold else (
            f"with every activation in float (weights INT8 as quantized) the host keeps {bound:.4f} < {threshold}: "
            "a range estimator changes only activation ranges, so it cannot keep the threshold")

    bounds = {"smoothing": smoothing, "ranges": ranges}

    def check(kind: str) -> str | None:
        if kind not in bounds:
            return None
        if kind not in memo:
            memo[kind] = bounds[kind]()
        return memo[kind]
    return check
