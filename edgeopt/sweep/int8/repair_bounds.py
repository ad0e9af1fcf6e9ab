"""What a whole-model repair of INT8 error can reach at best, checked on the host before it is built.

A repair lowers the quantization error in some places only, so the model with those places computing in float
(the rest INT8 as quantized) is the best it can do; when that model misses the threshold the repair cannot keep
it, and building it (NNCF's whole quantization again, 5-15 CPU-s on PP-OCRv4 rec) is skipped with the bound as the
reason. One host check per kind of repair (:attr:`.nncf_repair.NncfRepair.kind`):

- ``smoothing`` (SmoothQuant moves activation outliers into MatMul weights): every quantized MatMul and Gemm in
  float (:func:`.qdq_surgery.keep_float`);
- ``ranges`` (a range estimator such as the mean of per-sample quantiles changes activation ranges only): every
  activation in float, each weight INT8 as NNCF quantizes it, 8 bits symmetric per channel, re-quantized from the
  float model along its ``DequantizeLinear``'s axis, and the biases float (:func:`weight_only`): the search's own
  weights may be ``reduce_range``'s 7 bits (the x86 default without VNNI) and its biases int32 at a scale the
  activations set, which err more than NNCF's and would put the bound too low. Not drawn when a weight is
  quantized per tensor (its channel axis unknown);
- ``bias`` (bias correction corrects the error of weights and activations together): no bound.

The bound is onnxruntime's INT8 model on the host, not NNCF's quantization of the rest: NNCF keeps a few patterns
in float that onnxruntime quantizes (squeeze-and-excitation blocks), so its model could sit slightly above the
bound. Measured, NNCF's plain INT8 sat below onnxruntime's (PP-OCRv4 rec 0.9609 against 0.9625, det 0.695 against
0.702).

PP-OCRv4 rec at 0.99 (min-max INT8 0.9625 on the host): its 13 MatMuls in float keep 0.9625 and every activation in
float keeps 0.9750, so neither SmoothQuant nor the mean-quantile estimator is built (they reached 0.9547 and 0.9125
when they were); its error is in the convolutions' weights. PP-OCRv4 det: 0.9509 with the search's 7-bit weights
(a target without VNNI) as with 8-bit ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .qdq_surgery import base_initializer, keep_float, prune, quantized_nodes

WEIGHT_LEVELS = 127  # NNCF's INT8 weights: symmetric, per channel, in [-127, 127]
_MATMULS = {"MatMul", "Gemm"}
_INT8 = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)


def weight_only(qdq: onnx.ModelProto, base: onnx.ModelProto) -> onnx.ModelProto | None:
    """A copy of ``qdq`` in which every activation computes in float and every weight is INT8 as NNCF quantizes
    it: each activation's ``QuantizeLinear`` whose output only ``DequantizeLinear`` nodes read is dropped and those
    become an ``Identity`` of the float tensor; each weight is re-quantized from ``base`` (the float model ``qdq``
    quantized, matched by node name and input position) at 8 bits, symmetric, per channel along its
    ``DequantizeLinear``'s axis; biases float, as NNCF leaves them. None when a weight is quantized per tensor."""
    out = onnx.ModelProto()
    out.CopyFrom(qdq)
    g = out.graph
    float_bias = _requantize_weights(g, base)
    if float_bias is None:
        return None
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
        if n.op_type == "DequantizeLinear" and (n.input[0] in q_in or n.output[0] in float_bias):
            src = q_in.get(n.input[0]) or float_bias[n.output[0]]
            n = helper.make_node("Identity", [src], [n.output[0]], name=f"{n.output[0]}_float")
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    prune(g)  # the dropped QuantizeLinears' and replaced weights' initializers
    return out


def _requantize_weights(g: onnx.GraphProto, base: onnx.ModelProto) -> dict[str, str] | None:
    """Each 8-bit weight ``DequantizeLinear`` of ``g`` reading ``base``'s float weight at 8 bits symmetric per
    channel (new initializers); None when one is per tensor. Returns, by output name, each int32 bias
    ``DequantizeLinear`` with the name of ``base``'s float bias, added to ``g``: NNCF leaves biases in float."""
    inits = {t.name: t for t in g.initializer}
    base_nodes = {n.name: n for n in base.graph.node if n.name}
    base_inits = {t.name: t for t in base.graph.initializer}
    dq_of = {n.output[0]: n for n in g.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    done: set[str] = set()
    biases: dict[str, str] = {}
    for node in g.node:
        for pos, name in enumerate(node.input):
            dq = dq_of.get(name)
            src = base_initializer(base_nodes, base_inits, node, pos) if dq is not None else None
            if dq is None or src is None or name in done:
                continue
            done.add(name)
            if inits[dq.input[0]].data_type not in _INT8:  # an int32 bias: base's float one
                biases[name] = f"{name}_float_bias"
                g.initializer.append(numpy_helper.from_array(numpy_helper.to_array(base_inits[src]), biases[name]))
                continue
            if numpy_helper.to_array(inits[dq.input[1]]).size < 2:
                return None
            w = numpy_helper.to_array(base_inits[src]).astype(np.float32)
            axis = next((a.i for a in dq.attribute if a.name == "axis"), 1) % w.ndim
            reduce = tuple(d for d in range(w.ndim) if d != axis)
            scale = (np.abs(w).max(axis=reduce) / WEIGHT_LEVELS).astype(np.float32)
            scale[scale == 0] = 1.0
            shape = [-1 if d == axis else 1 for d in range(w.ndim)]
            q = np.clip(np.round(w / scale.reshape(shape)), -WEIGHT_LEVELS, WEIGHT_LEVELS).astype(np.int8)
            names = [f"{name}_w8", f"{name}_w8_scale", f"{name}_w8_zero_point"]
            g.initializer.extend([numpy_helper.from_array(q, names[0]), numpy_helper.from_array(scale, names[1]),
                                  numpy_helper.from_array(np.zeros(scale.shape, np.int8), names[2])])
            dq.input[:] = names
    return biases


def repair_bounds(qdq: onnx.ModelProto, base: onnx.ModelProto, score: Callable[[onnx.ModelProto], float],
                  threshold: float, op_types: Sequence[str]) -> Callable[[str], str | None]:
    """A check per kind of repair: why a repair of that kind cannot keep ``threshold`` (None: it might, or no
    bound applies). ``score`` is the host retention of a model; each kind's bound is scored once, when first
    asked; ``base`` is the float model ``qdq`` quantized (its weights and biases, put back or re-quantized)."""
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
        model = weight_only(qdq, base)
        if model is None:
            return None  # a weight per tensor: its channel axis, and so NNCF's 8-bit weight, unknown
        bound = score(model)
        return None if bound >= threshold else (
            f"with every activation in float (weights 8-bit per channel) the host keeps {bound:.4f} < {threshold}: "
            "a range estimator changes only activation ranges, so it cannot keep the threshold")

    bounds = {"smoothing": smoothing, "ranges": ranges}

    def check(kind: str) -> str | None:
        if kind not in bounds:
            return None
        if kind not in memo:
            memo[kind] = bounds[kind]()
        return memo[kind]
    return check
