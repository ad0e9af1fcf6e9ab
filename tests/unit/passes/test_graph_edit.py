"""Gemm -> MatMul + Add keeps the numbers; topological sorting fixes appended nodes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from edgeopt.passes.graph_edit import gemm_to_matmul, topological_sort

from .builders import mlp_model, op_types, run_model


def test_gemm_rewrite_is_exact(tmp_path: Path) -> None:
    path = mlp_model(tmp_path / "mlp.onnx")
    model = onnx.load(str(path))
    assert gemm_to_matmul(model) == 2
    onnx.checker.check_model(model)
    rewritten = tmp_path / "rewritten.onnx"
    onnx.save(model, str(rewritten))
    assert "Gemm" not in op_types(rewritten) and op_types(rewritten).count("MatMul") == 2
    x = np.random.default_rng(0).standard_normal((3, 64)).astype(np.float32)
    np.testing.assert_allclose(run_model(rewritten, {"x": x})[0], run_model(path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_topological_sort_moves_appended_producers_first() -> None:
    nodes = [
        helper.make_node("Relu", ["a"], ["y"], name="late"),
        helper.make_node("Identity", ["x"], ["a"], name="producer"),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    topological_sort(graph)
    assert [n.name for n in graph.node] == ["producer", "late"]
    onnx.checker.check_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
