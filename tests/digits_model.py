"""A small real classifier for accuracy tests: an MLP trained on scikit-learn's digits, as an ONNX Gemm graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def build_digits(tmp: Path, hidden: int = 32, seed: int = 0) -> tuple[Path, Path]:
    """Train (numpy, seconds) and export; returns (model.onnx, eval.npz with ``x`` and real ``labels``)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(x))
    train, test = order[:1400], order[1400:]
    import warnings

    warnings.filterwarnings("ignore", message=".*Maximum iterations.*")
    clf = MLPClassifier(hidden_layer_sizes=(hidden, hidden), max_iter=60, random_state=seed).fit(x[train], y[train])
    inits, nodes, prev = [], [], "x"
    for i, (w, b) in enumerate(zip(clf.coefs_, clf.intercepts_, strict=False)):
        inits += [numpy_helper.from_array(w.astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(b.astype(np.float32), f"b{i}")]
        out = f"h{i}" if i < len(clf.coefs_) - 1 else "logits"
        nodes.append(helper.make_node("Gemm", [prev, f"w{i}", f"b{i}"], [out + ("_pre" if out != "logits" else "")],
                                      name=f"gemm{i}"))
        if out != "logits":
            nodes.append(helper.make_node("Relu", [out + "_pre"], [out], name=f"relu{i}"))
        prev = out
    graph = helper.make_graph(nodes, "digits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp / "digits.onnx"
    onnx.save(model, str(path))
    data = tmp / "digits_eval.npz"
    np.savez(data, x=x[test], labels=y[test].astype(np.int64))
    return path, data
