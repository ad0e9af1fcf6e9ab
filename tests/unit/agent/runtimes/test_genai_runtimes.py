"""The LLM runtimes of the agent stay importable where their library is missing, and say so in one line."""

from __future__ import annotations

import sys

import pytest

from edgeopt_agent import deps, runtimes
from edgeopt_agent.generate import workload
from edgeopt_agent.protocol import Request
from edgeopt_agent.runtimes.generative import GenerativeRuntime


@pytest.mark.parametrize(("name", "module", "pip"), [("onnxruntime_genai", "onnxruntime_genai", "onnxruntime-genai"),
                                                     ("openvino_genai", "openvino_genai", "openvino-genai"),
                                                     ("llama_cpp", "llama_cpp", "llama-cpp-python")])
def test_missing_library_is_a_clear_not_installed_line(monkeypatch, name, module, pip):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    cls = runtimes.runtime_class(name)  # the class imports without its library
    assert issubclass(cls, GenerativeRuntime) and cls.formats
    with pytest.raises(runtimes.RuntimeMissing, match=f"pip install {pip}"):
        runtimes.create(name)
    line = deps.runtime_problem(name)
    assert line is not None and line.startswith(f"{name} is not installed for ") and "\n" not in line


def test_workload_defaults_and_bad_values_are_refused():
    spec = workload(Request(model_path="x", generate={"prompt_tokens": [16, 32]}))
    assert spec["prompt_tokens"] == [16, 32] and spec["gen_tokens"] == [128] and spec["threads"] == [0]
    with pytest.raises(ValueError, match="unknown generate key"):
        workload(Request(model_path="x", generate={"prompt": [1]}))
    with pytest.raises(ValueError, match="gen_tokens values must be >= 1"):
        workload(Request(model_path="x", generate={"gen_tokens": [0]}))


def test_a_graph_runtime_is_refused_by_generate():
    from edgeopt_agent.generate import generate

    raw = generate(Request(model_path="x", runtime="null", generate={}), lambda e: None)
    assert not raw.ok and raw.error_kind == "input" and "not generative" in raw.error
