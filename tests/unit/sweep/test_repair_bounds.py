"""What a repair can reach at best (:mod:`edgeopt.sweep.int8.repair_bounds`), on nets quantized here by onnxruntime:
the outlier net's error sits in its activation ranges (SmoothQuant cannot help it, a range estimator might); a net
whose weights carry one large tap per channel errs in its weights (no range estimator can help it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from edgeopt.evaluation import resolve_metric, retention
from edgeopt.sweep.int8.qdq_surgery import keep_float
from edgeopt.sweep.int8.repair_bounds import WEIGHT_LEVELS, repair_bounds, weight_only
from tests.unit.passes.builders import run_model
from tests.unit.sweep.outlier_model import outlier_convnet, outlier_data
from tests.unit.sweep.test_qdq_surgery import OPS, convnet, quantize

THRESHOLD = 0.95  # snr_db retention


def _quantize(model: Path, out: Path, x: np.ndarray, **kw: bool) -> onnx.ModelProto:
    return onnx.load(str(quantize(model, out, x, **kw)))


def _scorer(tmp: Path, base: Path, evals: np.ndarray) -> tuple[Callable[[onnx.ModelProto], float], list[float]]:
    """Host snr retention of a model against ``base`` on ``evals``, and the list of every score taken."""
    ref = run_model(base, {"x": evals})[0]
    metric = resolve_metric("snr_db")
    scored: list[float] = []

    def score(m: onnx.ModelProto) -> float:
        path = tmp / f"s{len(scored)}.onnx"
        onnx.save(m, str(path))
        scored.append(retention(metric, ref, run_model(path, {"x": evals})[0], None)[1])
        return scored[-1]
    return score, scored


def test_an_error_in_the_activation_ranges_bounds_smoothquant_but_not_a_range_estimator(tmp_path: Path) -> None:
    """The outlier net with a MatMul after it: min-max INT8 error sits in the ranges the outlier stretches before
    conv1 and conv2, so the MatMul in float stays under the threshold and every activation in float passes."""
    base_path = outlier_convnet(tmp_path / "m.onnx", matmul=True)
    calib, data = outlier_data(tmp_path)
    qdq = _quantize(base_path, tmp_path / "q.onnx", np.load(calib)["x"][:, 0])
    base = onnx.load(str(base_path))
    score, scored = _scorer(tmp_path, base_path, np.load(data)["x"])
    all_int8 = score(qdq)
    assert all_int8 < THRESHOLD <= score(keep_float(qdq, base, ["conv1", "conv2"], OPS)), "the error is in conv1-2"
    check = repair_bounds(qdq, base, score, THRESHOLD, OPS)
    assert check("bias") is None and len(scored) == 2, "bias correction has no bound"
    why = check("smoothing")
    bound = scored[-1]
    assert len(scored) == 3 and all_int8 < bound < THRESHOLD, "the MatMul in float removes its share of the error"
    assert why == (f"with its 1 quantized MatMul in float (the rest INT8) the host keeps {bound:.4f} < {THRESHOLD}: "
                   "SmoothQuant repairs only MatMul inputs, so it cannot keep the threshold")
    assert check("smoothing") == why and len(scored) == 3, "each kind is scored once"
    assert check("ranges") is None and scored[-1] >= THRESHOLD, "float activations pass: a range estimator might"
    assert repair_bounds(qdq, base, score, bound, OPS)("smoothing") is None, "a bound at the threshold lets it try"


def test_an_error_in_the_weights_bounds_a_range_estimator(tmp_path: Path) -> None:
    """conv2 with one tap per output channel 300x the others, on an input channel conv1 leaves at zero: per-channel
    INT8 rounds the small taps that carry the signal away, so even every activation in float misses the threshold.
    The bound's weights are 8 bits whatever the search's were: reduce_range's 7-bit weights give the same bound."""
    path = convnet(tmp_path / "c.onnx")
    m = onnx.load(str(path))
    inits = {t.name: t for t in m.graph.initializer}
    arrays = {n: numpy_helper.to_array(inits[n]).copy() for n in ("w1", "b1", "w2")}
    arrays["w1"][0], arrays["b1"][0] = 0.0, -1.0  # relu1's channel 0 is always 0
    arrays["w2"][:, 0, 1, 1] = 300.0 * np.abs(arrays["w2"]).max()
    for name, arr in arrays.items():
        inits[name].CopyFrom(numpy_helper.from_array(arr, name))
    onnx.save(m, str(path))
    x = np.random.default_rng(2).standard_normal((16, 3, 8, 8)).astype(np.float32)
    qdq = _quantize(path, tmp_path / "q.onnx", x)
    score, scored = _scorer(tmp_path, path, x)
    check = repair_bounds(qdq, m, score, THRESHOLD, OPS)
    why = check("ranges")
    assert len(scored) == 1 and scored[0] < THRESHOLD and scored[0] == score(_present(weight_only(qdq, m)))
    assert why == (f"with every activation in float (weights 8-bit per channel) the host keeps {scored[0]:.4f} < "
                   f"{THRESHOLD}: a range estimator changes only activation ranges, so it cannot keep the threshold")
    reduced = _quantize(path, tmp_path / "r.onnx", x, reduce_range=True)
    assert repair_bounds(reduced, m, score, THRESHOLD, OPS)("ranges") is not None
    assert abs(scored[-1] - scored[0]) < 1e-6, "7-bit weights re-quantized at 8 bits: the same bound"
    per_tensor = _quantize(path, tmp_path / "t.onnx", x, per_channel=False)
    assert repair_bounds(per_tensor, m, score, THRESHOLD, OPS)("ranges") is None and len(scored) == 3, "not scored"


def test_weight_only_keeps_every_weight_quantized_and_no_activation(tmp_path: Path) -> None:
    path = convnet(tmp_path / "c.onnx")
    x = np.random.default_rng(3).standard_normal((4, 3, 8, 8)).astype(np.float32)
    qdq = _quantize(path, tmp_path / "q.onnx", x, reduce_range=True)
    base = onnx.load(str(path))
    wo = _present(weight_only(qdq, base))
    inits = {t.name for t in qdq.graph.initializer}
    assert not [n for n in wo.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits]
    int8 = {t.name: numpy_helper.to_array(t) for t in wo.graph.initializer if t.data_type == onnx.TensorProto.INT8}
    weights = [n.input[0] for n in wo.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in int8]
    assert len(weights) == 5, "conv1-3, the MatMul and the Gemm"
    assert all(np.abs(int8[w]).max() == WEIGHT_LEVELS for w in weights), "8 bits per channel, from reduce_range's 7"
    dq_reads = {n.input[0] for n in wo.graph.node if n.op_type == "DequantizeLinear"}
    assert not [t for t in wo.graph.initializer if t.data_type == onnx.TensorProto.INT32 and t.name in dq_reads], \
        "biases float, as NNCF leaves them"
    onnx.checker.check_model(wo)
    out = run_model(_save(wo, tmp_path / "wo.onnx"), {"x": x})[0]
    ref = run_model(path, {"x": x})[0]
    full = run_model(_save(qdq, tmp_path / "q2.onnx"), {"x": x})[0]
    assert np.abs(out - ref).max() < np.abs(full - ref).max(), "float activations err less than all-INT8"
    exposed = onnx.ModelProto()  # a quantized tensor the graph also returns keeps its QuantizeLinear
    exposed.CopyFrom(qdq)
    q = next(n for n in exposed.graph.node if n.op_type == "QuantizeLinear" and n.input[0] not in inits)
    exposed.graph.output.append(onnx.helper.make_tensor_value_info(q.output[0], onnx.TensorProto.UINT8, ["N", 3, 8, 8]))
    kept = _present(weight_only(exposed, base))
    assert q.output[0] in {n.output[0] for n in kept.graph.node if n.op_type == "QuantizeLinear"}
    onnx.checker.check_model(kept)
    assert len(run_model(_save(kept, tmp_path / "kept.onnx"), {"x": x})) == 2


def _save(m: onnx.ModelProto, path: Path) -> Path:
    onnx.save(m, str(path))
    return path


def _present(m: onnx.ModelProto | None) -> onnx.ModelProto:
    assert m is not None, "every weight is per channel here"
    return m
