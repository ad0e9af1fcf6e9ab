"""One template run against every runtime registered in the agent: each must load, infer and be timed alike.

Each runtime gets a small real model in its own format (ONNX for onnxruntime, openvino and tensorrt; a
FULLY_CONNECTED ``.tflite`` written with flatbuffers for tflite; an ML program for coreml). A runtime whose
library is not installed here is skipped with the package to install.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from edgeopt.zoo import build
from edgeopt_agent import inputs, runtimes
from edgeopt_agent.harness import run
from edgeopt_agent.protocol import Request
from tests.tflite_models import reference_fully_connected, write_fully_connected


@dataclass(frozen=True)
class ContractModel:
    path: Path
    input_shape: list[int]
    output_shape: list[int]
    reference: Callable[[dict[str, np.ndarray]], list[np.ndarray]]


def _onnx_cnn(tmp: Path) -> ContractModel:
    path = build("mobilenet-tiny", tmp / "mobilenet-tiny.onnx")

    def reference(feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        import onnxruntime as ort

        return list(ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds))

    return ContractModel(path, [1, 3, 32, 32], [1, 10], reference)


def _tflite_fc(tmp: Path) -> ContractModel:
    path = write_fully_connected(tmp / "fc.tflite", n_in=16, n_out=4, seed=0)
    return ContractModel(path, [1, 16], [1, 4], lambda feeds: [reference_fully_connected(0, feeds["x"])])


def _coreml_program(tmp: Path) -> ContractModel:
    """A tiny ML program (y = relu(x)) built with coremltools' MIL builder; only ever used on macOS."""
    import coremltools as ct
    from coremltools.converters.mil import Builder as mb

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 16))])
    def prog(x):  # type: ignore[no-untyped-def]
        return mb.relu(x=x, name="y")

    path = tmp / "relu.mlpackage"
    ct.convert(prog, convert_to="mlprogram").save(str(path))
    return ContractModel(path, [1, 16], [1, 16], lambda feeds: [np.maximum(next(iter(feeds.values())), 0)])


# The model each registered runtime is checked with. A new runtime must add its entry (a test enforces it).
MODELS: dict[str, Callable[[Path], ContractModel]] = {
    "null": _onnx_cnn,
    "onnxruntime": _onnx_cnn,
    "openvino": _onnx_cnn,
    "tensorrt": _onnx_cnn,
    "tflite": _tflite_fc,
    "coreml": _coreml_program,
}


# Generative runtimes (LLM folders) have no single forward pass to bind and time: their contract is the
# ``generate`` command's, checked on real tiny models in tests/integration/llm; the template here covers the rest.
GENERATIVE = [n for n in runtimes.names() if getattr(runtimes.runtime_class(n), "generative", False)]
GRAPH = [n for n in runtimes.names() if n not in GENERATIVE]


# Options that make a runtime compute in the model's own precision. OpenVINO's CPU plugin runs FP32 models in bf16
# by default on CPUs with native bf16 (AVX512_BF16/AMX, e.g. this project's AMD EPYC): ~1e-2 relative error.
FULL_PRECISION_OPTIONS: dict[str, dict[str, object]] = {"openvino": {"inference_precision": "f32"}}


def _runtime_or_skip(name: str) -> runtimes.Runtime:
    try:
        return runtimes.create(name)
    except runtimes.RuntimeMissing as exc:
        pytest.skip(f"{name} not installed here: {exc}")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("contract-models")


def test_every_registered_runtime_has_a_contract_model():
    assert set(GRAPH) == set(MODELS) and {"onnxruntime_genai", "openvino_genai"} <= set(GENERATIVE)


@pytest.mark.parametrize("name", GENERATIVE)
def test_generative_runtime_refuses_a_per_inference_run_plainly(name, model_dir):
    _runtime_or_skip(name)
    raw = run(Request(model_path=str(_onnx_cnn(model_dir).path), runtime=name, iterations=2, warmup=0),
              lambda e: None)
    assert not raw.ok and raw.error_kind == "input" and "edgeopt bench LLM_FOLDER" in raw.error


@pytest.mark.parametrize("name", GRAPH)
def test_runtime_contract(name, model_dir):
    rt = _runtime_or_skip(name)
    assert rt.name == name and rt.version()
    model = MODELS[name](model_dir)
    raw = run(Request(model_path=str(model.path), runtime=name, iterations=20, min_duration_s=0, warmup=2),
              lambda e: None)
    assert raw.ok, raw.error
    assert raw.runtime["name"] == name and raw.runtime["version"] == rt.version()
    assert len(raw.samples_ns) == 20 and all(s > 0 for s in raw.samples_ns)
    assert raw.load_ms is not None and raw.first_inference_ms is not None
    if name != "null":  # a real runtime reports the model's real tensors
        assert raw.inputs[0]["shape"] == model.input_shape and raw.outputs[0]["shape"] == model.output_shape


@pytest.mark.parametrize("name", [n for n in GRAPH if n != "null"])
def test_runtime_outputs_match_reference(name, model_dir):
    """Binding and inferring give the model's true outputs (checked against ONNX Runtime or numpy)."""
    rt = _runtime_or_skip(name)
    model = MODELS[name](model_dir)
    rt.load(str(model.path), dict(FULL_PRECISION_OPTIONS.get(name, {})), 1)
    feeds = inputs.generate(rt.inputs(), {}, 1, seed=3)
    got = rt.bind(feeds)()
    want = model.reference(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", GRAPH)
def test_runtime_runs_concurrent_streams(name, model_dir):
    """Two streams run at once without sharing state a runtime cannot share (interpreters, infer requests)."""
    _runtime_or_skip(name)
    model = MODELS[name](model_dir)
    raw = run(Request(model_path=str(model.path), runtime=name, iterations=15, min_duration_s=0, warmup=1,
                      streams=2), lambda e: None)
    assert raw.ok, raw.error
    assert raw.timed_inferences == 30 and len(raw.samples_ns) == 30


@pytest.mark.parametrize("name", [n for n in GRAPH if n != "null"])
def test_runtime_refuses_unknown_option(name, model_dir):
    _runtime_or_skip(name)
    model = MODELS[name](model_dir)
    raw = run(Request(model_path=str(model.path), runtime=name, runtime_options={"warp_drive": True},
                      iterations=1, min_duration_s=0, warmup=0), lambda e: None)
    assert not raw.ok and raw.error_kind == "input"
    assert "warp_drive" in raw.error and "known:" in raw.error


def test_registry_unknown_name_lists_known():
    with pytest.raises(KeyError, match="known runtimes: .*onnxruntime"):
        runtimes.create("tensorflow-js")
