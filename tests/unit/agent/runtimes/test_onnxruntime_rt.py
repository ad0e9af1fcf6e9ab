"""ONNX Runtime's provider handling: an unavailable provider fails, unless the host asked for a fallback."""

from __future__ import annotations

from edgeopt_agent.harness import run
from edgeopt_agent.protocol import ERROR_INPUT, Request

WANTED = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]


def _run(model, options):
    return run(Request(model_path=str(model), runtime="onnxruntime", runtime_options=options, iterations=3,
                       min_duration_s=0, warmup=0), lambda e: None)


def test_unavailable_provider_is_an_input_error_naming_it(tiny_cnn):
    raw = _run(tiny_cnn, {"providers": WANTED})
    assert not raw.ok and raw.error_kind == ERROR_INPUT
    assert "TensorrtExecutionProvider" in raw.error and "available:" in raw.error


def test_fallback_drops_unavailable_providers_and_reports_them(tiny_cnn):
    import onnxruntime

    available = onnxruntime.get_available_providers()
    raw = _run(tiny_cnn, {"providers": WANTED, "providers_fallback": True})
    assert raw.ok, raw.error
    assert raw.runtime["providers_requested"] == WANTED
    assert raw.runtime.get("providers_unavailable", []) == [p for p in WANTED if p not in available]
    assert raw.runtime["providers_used"][-1] == "CPUExecutionProvider"


def test_fallback_with_nothing_available_runs_on_cpu(tiny_cnn):
    raw = _run(tiny_cnn, {"providers": ["NoSuchExecutionProvider"], "providers_fallback": True})
    assert raw.ok, raw.error
    assert raw.runtime["providers_used"] == ["CPUExecutionProvider"]
    assert raw.runtime["providers_unavailable"] == ["NoSuchExecutionProvider"]
