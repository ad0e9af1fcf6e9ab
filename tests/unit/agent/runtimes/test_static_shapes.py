"""Static shapes where the run is static: OpenVINO reshapes before compiling, ONNX Runtime overrides free dims by
name; the dynamic model stays available with ``static_shapes: false``; outputs are the same either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgeopt_agent import runtimes
from edgeopt_agent.evaluate import evaluate
from edgeopt_agent.harness import run
from edgeopt_agent.onnx_signature import graph_inputs
from edgeopt_agent.profile import profile
from edgeopt_agent.protocol import RawRun, Request


def _conv(path: Path, dims: list, *, w: int = 3, external: bool = False) -> Path:
    """x[dims] -> Conv(3x3, pad 1, 4 filters) -> Relu -> y; ``dims`` may hold symbols, None (unnamed) or -1."""
    weight = np.random.default_rng(0).standard_normal((4, 3, w, w)).astype(np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [d if d != -1 else None for d in dims])
    if -1 in dims:  # Paddle writes -1 for a dynamic dim
        for dim, value in zip(x.type.tensor_type.shape.dim, dims, strict=True):
            if value == -1:
                dim.dim_value = -1
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[w, w], pads=[w // 2] * 4),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv", [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, str(path), save_as_external_data=external, location="w.bin", size_threshold=0)
    return path


def _available(name: str) -> bool:
    try:
        runtimes.create(name)
    except runtimes.RuntimeMissing:
        return False
    return True


NAMES = [n for n in ("onnxruntime", "openvino") if _available(n)]
SHAPE = [1, 3, 16, 20]


def _evaluate(model: Path, runtime: str, tmp: Path, tag: str, **options: object) -> tuple[RawRun, np.ndarray]:
    data = tmp / "eval.npz"
    np.savez(data, x=np.random.default_rng(1).standard_normal((3, *SHAPE[1:])).astype(np.float32))
    out = tmp / f"{runtime}-{tag}.npz"
    raw = evaluate(Request(model_path=str(model), runtime=runtime, runtime_options=dict(options), eval_npz=str(data),
                           eval_output=str(out), progress_interval_s=0), lambda e: None)
    assert raw.ok, raw.error
    with np.load(out) as got:
        return raw, got["out0"]


@pytest.mark.parametrize("runtime", NAMES)
def test_symbolic_dims_become_static_and_outputs_do_not_change(runtime: str, tmp_path: Path) -> None:
    model = _conv(tmp_path / "m.onnx", ["batch", 3, "height", "width"])
    raw, static = _evaluate(model, runtime, tmp_path, "static")
    info = raw.runtime["static_shapes"]
    assert info["applied"] and info["static"] and info["shapes"] == {"x": [1, 3, 16, 20]}
    if runtime == "onnxruntime":
        assert info["overrides"] == {"batch": 1, "height": 16, "width": 20}
    raw_dyn, dynamic = _evaluate(model, runtime, tmp_path, "dynamic", static_shapes=False)
    assert raw_dyn.runtime["static_shapes"] == {"applied": False, "static": False,
                                                "reason": "runtime option static_shapes: false"}
    np.testing.assert_allclose(static, dynamic, rtol=1e-6, atol=1e-6)  # other kernels may round differently
    assert static.shape == (3, 4, 16, 20)


@pytest.mark.parametrize("runtime", NAMES)
def test_the_benchmark_loop_compiles_for_the_given_shape(runtime: str, tmp_path: Path) -> None:
    model = _conv(tmp_path / "m.onnx", ["batch", 3, "height", "width"])
    raw = run(Request(model_path=str(model), runtime=runtime, shapes={"x": SHAPE}, iterations=3, min_duration_s=0,
                      warmup=1, threads=1, energy={"enabled": False}), lambda e: None)
    assert raw.ok, raw.error
    assert raw.runtime["static_shapes"]["static"] and raw.inputs == [{"name": "x", "shape": SHAPE, "dtype": "float32"}]
    # Without --shape the height is unknown before loading: the model stays dynamic and the run says why.
    rt = runtimes.create(runtime)
    rt.expect_inputs({}, 1)
    rt.load(str(model), {}, 1)
    assert not rt.details()["static_shapes"]["applied"]
    assert "pass --shape x=" in rt.details()["static_shapes"]["reason"]


@pytest.mark.parametrize("runtime", NAMES)
def test_the_profile_command_compiles_for_the_given_shape_too(runtime: str, tmp_path: Path) -> None:
    """Per-layer times of the model the benchmark runs: the profiled load (ORT session profiling, OpenVINO
    PERF_COUNT) gets the same static shapes as the timed loop, and ``static_shapes: false`` still keeps it dynamic."""
    model = _conv(tmp_path / "m.onnx", ["batch", 3, "height", "width"])
    raw = profile(Request(model_path=str(model), runtime=runtime, shapes={"x": SHAPE}, iterations=2, warmup=0,
                          threads=1, progress_interval_s=0), lambda e: None)
    assert raw.ok, raw.error
    info = raw.runtime["static_shapes"]
    assert info["applied"] and info["static"] and info["shapes"] == {"x": SHAPE}
    assert raw.inputs == [{"name": "x", "shape": SHAPE, "dtype": "float32"}] and raw.profile["layers"]
    dyn = profile(Request(model_path=str(model), runtime=runtime, shapes={"x": SHAPE}, iterations=2, warmup=0,
                          threads=1, runtime_options={"static_shapes": False}, progress_interval_s=0), lambda e: None)
    assert dyn.ok, dyn.error
    assert dyn.runtime["static_shapes"] == {"applied": False, "static": False,
                                            "reason": "runtime option static_shapes: false"}


def test_openvino_compiled_model_is_static_after_load(tmp_path: Path) -> None:
    if "openvino" not in NAMES:
        pytest.skip("openvino not installed: pip install -e .[openvino]")
    model = _conv(tmp_path / "m.onnx", [-1, 3, -1, None])  # Paddle -1 dims and an unnamed dim
    rt = runtimes.create("openvino")
    rt.expect_inputs({"x": SHAPE}, 1)
    rt.load(str(model), {}, 1)
    compiled = rt._compiled  # noqa: SLF001 - the property under test is OpenVINO's own
    assert compiled.inputs[0].get_partial_shape().is_static
    assert list(compiled.inputs[0].get_partial_shape().to_shape()) == SHAPE
    assert list(compiled.outputs[0].get_partial_shape().to_shape()) == [1, 4, 16, 20]


def test_onnxruntime_overrides_what_has_a_name_and_says_what_stays_dynamic(tmp_path: Path) -> None:
    unnamed = _conv(tmp_path / "u.onnx", ["N", 3, -1, None])
    rt = runtimes.create("onnxruntime")
    rt.expect_inputs({"x": SHAPE}, 1)
    rt.load(str(unnamed), {}, 1)
    info = rt.details()["static_shapes"]
    assert info["overrides"] == {"N": 1} and not info["static"]
    assert "x[2] (unnamed)" in info["reason"] and "x[3] (unnamed)" in info["reason"]
    assert rt.inputs()[0].shape[:2] == [1, 3]
    # One symbol for two dims of different sizes ('?' in some exports) cannot be overridden by name.
    shared = _conv(tmp_path / "s.onnx", ["p2o.DynamicDimension.0", 3, "?", "?"])
    rt = runtimes.create("onnxruntime")
    rt.expect_inputs({"x": SHAPE}, 1)
    rt.load(str(shared), {}, 1)
    info = rt.details()["static_shapes"]
    assert info["overrides"] == {"p2o.DynamicDimension.0": 1} and "symbol '?'" in info["reason"]


def test_signature_reader_matches_onnx(tmp_path: Path) -> None:
    model = _conv(tmp_path / "ext.onnx", ["p2o.DynamicDimension.1", 3, -1, None], external=True)
    assert (tmp_path / "w.bin").is_file()
    assert graph_inputs(str(model)) == [("x", ["p2o.DynamicDimension.1", 3, None, None])]
    static = _conv(tmp_path / "st.onnx", SHAPE)
    assert graph_inputs(str(static)) == [("x", SHAPE)]


def test_a_bad_option_value_is_an_input_error(tmp_path: Path) -> None:
    model = _conv(tmp_path / "m.onnx", SHAPE)
    for runtime in NAMES:
        raw = run(Request(model_path=str(model), runtime=runtime, runtime_options={"static_shapes": "yes"},
                          iterations=1, min_duration_s=0, energy={"enabled": False}), lambda e: None)
        assert raw.error_kind == "input" and "static_shapes 'yes'" in (raw.error or "")
        info = run(Request(model_path=str(model), runtime=runtime, iterations=1, min_duration_s=0,
                           energy={"enabled": False}), lambda e: None).runtime["static_shapes"]
        assert info == {"applied": False, "static": True, "reason": "the model's inputs are static"}


def test_results_of_agents_without_the_field_still_parse() -> None:
    old = RawRun(status="ok", runtime={"name": "onnxruntime", "version": "1.16"}).to_dict()
    assert RawRun.from_dict(old).runtime == {"name": "onnxruntime", "version": "1.16"}
