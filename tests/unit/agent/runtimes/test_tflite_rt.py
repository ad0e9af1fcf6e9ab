"""The TFLite runtime on real .tflite files written in the test: float and quantized I/O, batch, Edge TPU options."""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

import numpy as np
import pytest

from edgeopt_agent import runtimes
from edgeopt_agent.harness import run
from edgeopt_agent.protocol import ERROR_INPUT, ERROR_RUNTIME, Request
from tests.tflite_models import reference_fully_connected, write_fully_connected

try:
    runtimes.create("tflite")
except runtimes.RuntimeMissing as exc:
    pytest.skip(f"no TFLite interpreter here: {exc}", allow_module_level=True)

from edgeopt_agent.runtimes.tflite_rt import TfliteRuntime  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("tflite")
    return {dt: write_fully_connected(tmp / f"fc_{dt}.tflite", dtype=dt) for dt in ("float32", "int8", "uint8")}


def _run(model: Path, **kw: object) -> object:
    base = {"iterations": 5, "min_duration_s": 0, "warmup": 1}
    base.update(kw)
    return run(Request(model_path=str(model), runtime="tflite", **base), lambda e: None)  # type: ignore[arg-type]


def test_reports_package_and_threads(models):
    raw = _run(models["float32"], threads=2)
    assert raw.ok, raw.error
    assert raw.runtime["package"] == "ai_edge_litert"  # the first of the three packages tried
    assert raw.runtime["num_threads"] == 2
    assert "quantization" not in raw.runtime


def test_signature_has_a_dynamic_batch_axis(models):
    rt = TfliteRuntime()
    rt.load(str(models["float32"]), {}, 0)
    (x,) = rt.inputs()
    assert x.name == "x" and x.shape == [None, 16] and x.dtype == "float32"
    assert rt.outputs()[0].shape == [None, 4]


def test_float_output_matches_numpy(models):
    rt = TfliteRuntime()
    rt.load(str(models["float32"]), {}, 1)
    x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
    (y,) = rt.bind({"x": x})()
    np.testing.assert_allclose(y, reference_fully_connected(0, x), rtol=1e-5, atol=1e-5)


def test_batch_resizes_the_interpreter(models):
    raw = _run(models["float32"], batch=3)
    assert raw.ok, raw.error
    assert raw.inputs[0]["shape"] == [3, 16] and raw.outputs[0]["shape"] == [3, 4]


@pytest.mark.parametrize("dtype,zero_point", [("int8", 0), ("uint8", 128)])
def test_quantized_io_runs_on_generated_inputs_and_reports_scales(models, dtype, zero_point):
    raw = _run(models[dtype])
    assert raw.ok, raw.error
    assert raw.inputs[0]["dtype"] == dtype and raw.outputs[0]["dtype"] == dtype
    quant = raw.runtime["quantization"]
    assert quant["inputs"] == [{"name": "x", "dtype": dtype, "scale": pytest.approx(0.05), "zero_point": zero_point}]
    assert quant["outputs"][0]["scale"] == pytest.approx(0.25)


def test_int8_output_is_the_requantized_float_result(models):
    """The int8 model computes round((x_q*s_x) @ (w_q*s_w).T / s_y): check one value against that formula."""
    rt = TfliteRuntime()
    rt.load(str(models["int8"]), {}, 1)
    x = np.arange(16, dtype=np.int8).reshape(1, 16)
    (y,) = rt.bind({"x": x})()
    rng = np.random.default_rng(0)
    w = rng.integers(-100, 100, size=(4, 16)).astype(np.int8)
    b = rng.integers(-500, 500, size=4).astype(np.int32)
    acc = x.astype(np.int32) @ w.T.astype(np.int32) + b
    want = np.clip(np.round(acc * (0.05 * 0.02) / 0.25), -128, 127)
    np.testing.assert_allclose(y.astype(np.int32), want, atol=1)


def _has_libedgetpu() -> bool:
    try:
        ctypes.CDLL("libedgetpu.so.1")
    except OSError:
        return False
    return True


def test_edgetpu_auto_without_the_library_runs_on_cpu_and_says_why(models):
    if _has_libedgetpu():
        pytest.skip("libedgetpu is installed here")
    raw = _run(models["float32"])
    assert raw.ok and raw.runtime["edgetpu"] == {"used": False, "reason": "libedgetpu not found"}


def test_edgetpu_true_without_the_library_fails_with_the_fix(models):
    if _has_libedgetpu():
        pytest.skip("libedgetpu is installed here")
    raw = _run(models["float32"], runtime_options={"edgetpu": True})
    assert not raw.ok and raw.error_kind == ERROR_RUNTIME
    assert "libedgetpu1-std" in raw.error and "edgetpu: false" in raw.error


def test_edgetpu_false_and_xnnpack_false_are_reported(models):
    raw = _run(models["float32"], runtime_options={"edgetpu": False, "xnnpack": False})
    assert raw.ok, raw.error
    assert raw.runtime["edgetpu"] == {"used": False, "reason": "edgetpu: false"}
    assert raw.runtime["xnnpack"] is False


def test_non_boolean_flag_is_an_input_error(models):
    raw = _run(models["float32"], runtime_options={"edgetpu": "yes"})
    assert not raw.ok and raw.error_kind == ERROR_INPUT and "edgetpu must be true or false" in raw.error


def test_a_file_that_is_not_tflite_is_an_input_error(tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"\x00" * 64)
    raw = _run(bad)
    assert not raw.ok and raw.error_kind == ERROR_INPUT and "Flatbuffer" in raw.error


def test_each_thread_gets_its_own_interpreter(models):
    rt = TfliteRuntime()
    rt.load(str(models["float32"]), {}, 1)
    x = np.random.default_rng(2).standard_normal((2, 16)).astype(np.float32)  # resized before the threads start
    infer = rt.bind({"x": x})
    expected = reference_fully_connected(0, x)
    results: list = []
    interpreters: list = []

    def worker() -> None:
        for _ in range(50):
            results.append(infer()[0])
        interpreters.append(rt._local.interp)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 150 and all(np.allclose(r, expected, atol=1e-5) for r in results)
    assert len({id(i) for i in interpreters}) == 3 and rt._primary not in interpreters
