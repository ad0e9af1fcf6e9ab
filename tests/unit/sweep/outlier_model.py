"""A conv net whose calibration outlier ruins min-max INT8 ranges (built here, nothing downloaded): the INT8
search's repair tests (range repair, NNCF's repairs, the sweep end to end)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def outlier_convnet(path: Path, size: int = 32, *, matmul: bool = False, batch: int | str = "N") -> Path:
    """x[N,4,S,S] -> 1x1 conv -> Relu -> 3x3 conv -> Relu -> 1x1 conv (-> MatMul with a weight when ``matmul``).

    Input channel 0 feeds only channel 0 of the first conv (which copies it), and nothing downstream reads that
    channel: an outlier put there in the calibration data stretches the min-max ranges of ``x``, ``c1`` and ``r1``
    alone, so min-max INT8 ruins ``conv1`` and ``conv2`` while a clipped range (percentile, quantile) keeps them.
    """
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((8, 4, 1, 1)) * 0.5).astype(np.float32)
    w1[0], w1[:, 0] = 0.0, 0.0
    w1[0, 0] = 1.0
    w2 = (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)
    w2[:, 0] = 0.0
    w3 = (rng.standard_normal((4, 8, 1, 1)) * 0.4).astype(np.float32)
    b2 = (rng.standard_normal(8) * 0.1).astype(np.float32)  # an int32 bias quantized at r1's scale x w2's
    inits = [numpy_helper.from_array(w, n) for w, n in ((w1, "w1"), (w2, "w2"), (w3, "w3"), (b2, "b2"))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
             helper.make_node("Conv", ["r2", "w3"], ["c3" if matmul else "y"], name="conv3")]
    if matmul:
        inits.append(numpy_helper.from_array((rng.standard_normal((size, size)) * 0.1).astype(np.float32), "wm"))
        nodes.append(helper.make_node("MatMul", ["c3", "wm"], ["y"], name="mm"))
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [batch, 4, size, size]) for n in ("x", "y")]
    model = helper.make_model(helper.make_graph(nodes, "outlier", io[:1], io[1:], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def outlier_data(folder: Path, size: int = 32, *, every_sample: bool = False) -> tuple[Path, Path]:
    """``calib.npz`` (64 samples, batch 1 each: ``[64, 1, 4, S, S]``) with a 400.0 in input channel 0 of one
    sample (of every sample with ``every_sample``), and a clean ``eval.npz`` (16 samples, ``[16, 4, S, S]``)."""
    rng = np.random.default_rng(1)
    calib = rng.standard_normal((64, 1, 4, size, size)).astype(np.float32)
    for c in calib if every_sample else calib[3:4]:
        c[0, 0, rng.integers(size), rng.integers(size)] = 400.0
    np.savez(folder / "calib.npz", x=calib)
    np.savez(folder / "eval.npz", x=rng.standard_normal((16, 4, size, size)).astype(np.float32))
    return folder / "calib.npz", folder / "eval.npz"
