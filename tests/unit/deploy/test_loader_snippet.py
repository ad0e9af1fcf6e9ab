"""The loader snippet of docs/sweep.md ("Deploying the recommendation") runs on a real deployment folder and applies
exactly the recorded options (onnxruntime and OpenVINO)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper, save

from edgeopt.sweep.result import Level
from edgeopt.sweep.ship.deployment import SweepFacts, publish, stage

DOC = Path(__file__).resolve().parents[3] / "docs" / "sweep.md"


def test_doc_loaders_apply_the_recorded_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("openvino")
    w = numpy_helper.from_array(np.eye(8, dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])], [w])
    model = tmp_path / "m.onnx"
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    options = {"graph_optimization_level": "basic", "inference_precision": "f32", "performance_hint": "THROUGHPUT"}
    level = Level(recipe="fp32", runtime="onnxruntime", runtime_version="1", artifact=str(model), size_bytes=1,
                  latency_ms=1.0, latency_ms_p99=1.0, memory_mb_peak=None, energy_mj=None, energy_source=None,
                  metric="top1", metric_value=1.0, retention=1.0, meets_retention=True, meets_budget=True, passed=True,
                  valid=True, cached=False, runtime_options=options, threads=1)
    facts = SweepFacts(target="local", metric="top1", min_retention=0.99, eval_samples=1, threads=1, streams=1,
                       batch=1, shapes={"x": [1, 8]}, environment={}, model_sha256="")
    publish(stage(tmp_path, level, facts)[0], tmp_path)
    code = re.search(r"## Deploying the recommendation.*?```python\n(.*?)```", DOC.read_text(), re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    ns: dict[str, object] = {}
    exec(code.group(1), ns)  # noqa: S102 - the documented snippet, run as a user would
    so = ns["session"].get_session_options()  # type: ignore[attr-defined]
    assert so.graph_optimization_level == ort.GraphOptimizationLevel.ORT_ENABLE_BASIC and so.intra_op_num_threads == 1
    compiled = ns["compiled"]
    import openvino as ov

    assert compiled.get_property("INFERENCE_PRECISION_HINT") == ov.Type.f32  # type: ignore[attr-defined]
    assert str(compiled.get_property("PERFORMANCE_HINT")) == "THROUGHPUT"  # type: ignore[attr-defined]
    assert list(compiled.inputs[0].get_shape()) == [1, 8]  # type: ignore[attr-defined]
