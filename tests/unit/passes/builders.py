"""Tiny models and helpers for the pass tests (built here, nothing downloaded)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from edgeopt.enums import Precision
from edgeopt.passes.base import Artifact, ArtifactFormat, PassContext
from edgeopt.targets import load_registry


def save(model: onnx.ModelProto, path: Path) -> Path:
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def mlp_model(path: Path, *, k: int = 64, hidden: int = 96, classes: int = 10, seed: int = 0) -> Path:
    """x[N, k] -> Gemm(transB) -> Relu -> Gemm(alpha, beta) -> logits: two exported nn.Linear layers."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((hidden, k)) / np.sqrt(k)).astype(np.float32)
    b1 = rng.standard_normal(hidden).astype(np.float32) * 0.1
    w2 = (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(np.float32)
    b2 = rng.standard_normal(classes).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2", alpha=0.5, beta=2.0),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", k])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return save(model, path)


def paddle_style_model(path: Path, *, opset: int = 11) -> Path:
    """A Paddle-export-like conv net: weights in Constant nodes, opset 11, BatchNormalization, stale value_info."""
    rng = np.random.default_rng(1)

    def const(name: str, arr: np.ndarray) -> onnx.NodeProto:
        return helper.make_node("Constant", [], [name], name=f"{name}_const",
                                value=numpy_helper.from_array(arr.astype(np.float32), name))

    nodes = [
        const("conv_w", rng.standard_normal((8, 3, 3, 3)) * 0.3),
        const("bn_s", rng.random(8) + 0.5), const("bn_b", rng.standard_normal(8) * 0.1),
        const("bn_m", rng.standard_normal(8) * 0.1), const("bn_v", rng.random(8) + 0.5),
        helper.make_node("Conv", ["x", "conv_w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], name="bn"),
        helper.make_node("Relu", ["bn"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="gap"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        const("fc_w", rng.standard_normal((8, 4)) * 0.3),
        helper.make_node("MatMul", ["f", "fc_w"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "paddle_like", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
        value_info=[helper.make_tensor_value_info("c", TensorProto.FLOAT, [7, 7])],  # stale, wrong on purpose
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, str(path))
    return path


def artifact(path: Path, precision: Precision = Precision.FP32) -> Artifact:
    return Artifact.from_file(path, name="input", format=ArtifactFormat.ONNX, precision=precision)


class Recorder:
    """A Reporter that keeps everything it is told."""

    def __init__(self) -> None:
        self.infos: list[str] = []
        self.warnings: list[str] = []
        self.progress_events: list[tuple[str, int, int | None]] = []

    def info(self, message: str) -> None:
        self.infos.append(message)

    def warn(self, message: str) -> None:
        self.warnings.append(message)

    def progress(self, task: str, done: int, total: int | None) -> None:
        self.progress_events.append((task, done, total))


def context(tmp_path: Path, name: str = "out.onnx", target: str = "local", **kwargs: object) -> PassContext:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return PassContext(work_dir=work, output_path=tmp_path / name, target=load_registry().get(target),
                       **kwargs)  # type: ignore[arg-type]


def run_model(path: Path, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, feed)]


def op_types(path: Path) -> list[str]:
    return [n.op_type for n in onnx.load(str(path)).graph.node]
