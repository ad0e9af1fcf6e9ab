"""A YOLOv8-style detection head built in the test (nothing downloaded): ``x [N, 4+C, A] -> Conv1d(k=1) -> y``.

The reference head is the identity, so its output is the input: boxes (``cx, cy, w, h`` in pixels) and class
scores are known by construction. Variants perturb the class rows (``class_mix``: each class score becomes
``(1 - m) * own + m * next class's``, as a badly pruned head would) or shift the boxes (``cx_shift`` pixels).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CLASSES = 3
ANCHORS = 64
ROWS = 4 + CLASSES


def head_model(path: Path, *, class_mix: float = 0.0, cx_shift: float = 0.0) -> Path:
    """Write the head to ``path``; batch dim symbolic (``N``)."""
    w = np.eye(ROWS, dtype=np.float32)
    for c in range(CLASSES):
        row = 4 + c
        w[row] = 0.0
        w[row, row] = 1.0 - class_mix
        w[row, 4 + (c + 1) % CLASSES] += class_mix
    b = np.zeros(ROWS, dtype=np.float32)
    b[0] = cx_shift
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[1], name="head")
    graph = helper.make_graph(
        [node], "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", ROWS, ANCHORS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", ROWS, ANCHORS])],
        [numpy_helper.from_array(w[:, :, None], "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def head_inputs(samples: int = 6, objects: int = 8, seed: int = 0) -> np.ndarray:
    """``[samples, 4+C, A]``: every anchor a box; ``objects`` anchors per sample score 0.6-0.95 on one class,
    the rest score below 0.2 on every class."""
    rng = np.random.default_rng(seed)
    x = np.zeros((samples, ROWS, ANCHORS), dtype=np.float32)
    x[:, 0:2] = rng.uniform(60, 580, size=(samples, 2, ANCHORS))
    x[:, 2:4] = rng.uniform(40, 120, size=(samples, 2, ANCHORS))
    x[:, 4:] = rng.uniform(0.0, 0.2, size=(samples, CLASSES, ANCHORS))
    for s in range(samples):
        for a in rng.choice(ANCHORS, size=objects, replace=False):
            x[s, 4 + rng.integers(CLASSES), a] = rng.uniform(0.6, 0.95)
    return x


def run(path: Path, x: np.ndarray) -> np.ndarray:
    """The model's output on every sample, one inference per sample (as the agent's evaluate does)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run(None, {"x": x[i:i + 1]})[0] for i in range(len(x))])
