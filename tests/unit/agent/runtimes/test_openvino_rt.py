"""The OpenVINO runtime on this machine's CPU plugin: ONNX and IR, options, devices, per-thread infer requests."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from edgeopt_agent.harness import run
from edgeopt_agent.protocol import Request

ov = pytest.importorskip("openvino", reason="openvino not installed: pip install -e .[openvino]")

from edgeopt_agent.runtimes.openvino_rt import OpenVinoRuntime  # noqa: E402


@pytest.fixture(scope="module")
def ir_model(tiny_cnn: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    xml = tmp_path_factory.mktemp("ir") / "cnn.xml"
    ov.save_model(ov.convert_model(str(tiny_cnn)), str(xml), compress_to_fp16=False)  # exact weights
    return xml


def _run(model: Path, **options: object) -> dict:
    raw = run(Request(model_path=str(model), runtime="openvino", runtime_options=dict(options), iterations=5,
                      min_duration_s=0, warmup=1, threads=1), lambda e: None)
    assert raw.ok, raw.error
    return raw.runtime


def test_onnx_on_cpu_reports_devices_config_and_precision(tiny_cnn):
    info = _run(tiny_cnn)
    assert info["device_requested"] == "CPU" and "CPU" in info["devices_available"]
    assert info["devices_used"] == ["CPU"]
    assert info["config"] == {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": 1}
    assert info["performance_hint"] == "LATENCY" and info["inference_num_threads"] == 1
    assert info["inference_precision"] in ("f32", "bf16", "f16")
    assert info["device_names"]["CPU"]


def test_throughput_hint_is_passed_and_reported(tiny_cnn):
    info = _run(tiny_cnn, performance_hint="throughput")
    assert info["performance_hint"] == "THROUGHPUT"


def test_auto_device_reports_the_device_it_chose(tiny_cnn):
    info = _run(tiny_cnn, device="AUTO")
    assert info["device_requested"] == "AUTO" and "CPU" in " ".join(info["devices_used"])
    assert "threads_ignored" in info  # INFERENCE_NUM_THREADS is a CPU-plugin property


def test_ir_loads_and_matches_onnx(tiny_cnn, ir_model):
    outs = []
    for path in (tiny_cnn, ir_model):
        rt = OpenVinoRuntime()
        rt.load(str(path), {}, 1)
        x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
        outs.append(rt.bind({rt.inputs()[0].name: x})()[0])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-4, atol=1e-5)


def test_ir_without_bin_names_the_missing_file(ir_model, tmp_path):
    lonely = tmp_path / "lonely.xml"
    lonely.write_text(ir_model.read_text())
    with pytest.raises(ValueError, match=r"lonely\.bin"):
        OpenVinoRuntime().load(str(lonely), {}, 0)


@pytest.mark.parametrize("options,needle", [
    ({"device": "TPU"}, "device 'TPU'"),
    ({"performance_hint": "FAST"}, "performance_hint"),
    ({"inference_precision": "int3"}, "inference_precision"),
])
def test_bad_options_are_input_errors(tiny_cnn, options, needle):
    with pytest.raises(ValueError, match=needle):
        OpenVinoRuntime().load(str(tiny_cnn), options, 0)


def test_a_device_this_machine_lacks_is_refused_with_what_exists(tiny_cnn):
    import openvino

    if any(d.startswith("NPU") for d in openvino.Core().available_devices):
        pytest.skip("this machine has an NPU")
    with pytest.raises(ValueError, match=r"NPU is not available here \(available: .*CPU"):
        OpenVinoRuntime().load(str(tiny_cnn), {"device": "NPU"}, 0)


def test_each_thread_gets_its_own_infer_request(tiny_cnn):
    rt = OpenVinoRuntime()
    rt.load(str(tiny_cnn), {}, 1)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    infer = rt.bind({"input": x})
    expected = infer()[0]
    results: list = []
    requests: list = []

    def worker() -> None:
        for _ in range(20):
            results.append(infer()[0])
        requests.append(rt._local.request)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 60 and all(np.allclose(r, expected, atol=1e-5) for r in results)
    assert len({id(r) for r in requests}) == 3 and rt._local.request not in requests


def test_fp16_ir_keeps_the_input_name_the_model_file_states(tiny_cnn, tmp_path):
    """OpenVINO folds an FP16 model's input Cast into the Parameter and the compiled port gains the Cast's name;
    the agent must keep reporting the model's own input name (eval data and --shape are keyed by it)."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    m16 = convert_float_to_float16(onnx.load(str(tiny_cnn)), keep_io_types=True)
    onnx.save(m16, str(tmp_path / "cnn16.onnx"))
    xml = tmp_path / "cnn16.xml"
    ov.save_model(ov.convert_model(str(tmp_path / "cnn16.onnx")), str(xml))
    want_in = [i.name for i in m16.graph.input]
    want_out = [o.name for o in m16.graph.output]
    compiled = ov.Core().compile_model(str(xml), "CPU")
    assert any(len(p.get_names()) > 1 for p in compiled.inputs), "the folded Cast's name is what this test is about"
    rt = OpenVinoRuntime()
    rt.load(str(xml), {}, 1)
    assert [i.name for i in rt.inputs()] == want_in
    assert [o.name for o in rt.outputs()] == want_out
