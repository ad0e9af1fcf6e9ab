"""Contract: the host's descriptors (``edgeopt.registry``) and the agent's runtime registry
(``edgeopt_agent.runtimes``, which cannot import edgeopt) describe the same runtimes.

Formats, packages and profiling support are declared once, by the agent class, and read by the host descriptor;
what is left to agree on: the same names on both sides, every host descriptor finds its agent class, and the
accelerator-specific packages the host judges a device by (``extra_packages``) are packages the agent's probe
reports. The checks are functions so the plug-in tests run them with plug-ins active too.
"""

from __future__ import annotations

import pytest

from edgeopt.names import ModelFormat, RuntimeName
from edgeopt.passes.registry import load_pass_registry
from edgeopt.registry import (
    RegistryError,
    format_names,
    format_registry,
    get_format,
    get_runtime,
    runtime_names,
    runtime_registry,
)
from edgeopt_agent import runtimes as agent


def agreement_problems() -> list[str]:
    """Every disagreement between the host's runtime descriptors and the agent's runtimes, one line each."""
    problems = []
    host, device = set(runtime_names()), set(agent.names())
    if host != device:
        problems.append(f"runtime names differ: host only {sorted(host - device)}, agent only {sorted(device - host)}")
    for name in sorted(host):
        desc = get_runtime(name)
        try:
            cls = desc.agent_class()
        except RegistryError as exc:
            problems.append(f"{name}: {exc}")
            continue
        probed = {module for module, _ in cls.packages}
        extra = {e.package for e in desc.extra_packages}
        if not extra <= probed:
            problems.append(f"{name}: host expects extra packages {sorted(extra - probed)} the agent does not probe")
        if cls.loads_any == bool(cls.formats):
            problems.append(f"{name}: the agent class must declare formats or loads_any, not both or neither")
    return problems


def reference_problems() -> list[str]:
    """Names a descriptor refers to that nothing registers (a format, a runtime, a converter pass)."""
    formats, runtimes = set(format_names()), set(runtime_names())
    passes = load_pass_registry()
    problems = []
    for fmt in format_registry().all():
        refs = [("loads_as", [fmt.loads_as] if fmt.loads_as else [], formats),
                ("validated_by", list(fmt.validated_by), runtimes), ("loaded_by", list(fmt.loaded_by), runtimes),
                ("converter", [fmt.converter] if fmt.converter else [], set(passes.names()))]
        problems += [f"format {fmt.name}: {field} '{v}' is not registered" for field, vals, known in refs
                     for v in vals if v not in known]
    for rt in runtime_registry().all():
        problems += [f"runtime {rt.name}: format '{f}' is not registered" for f in rt.formats if f not in formats]
        if rt.delivers and rt.delivers not in rt.formats:
            problems.append(f"runtime {rt.name} delivers {rt.delivers} but does not load it")
    return problems


def test_host_and_agent_registries_agree():
    assert agreement_problems() == []


def test_descriptors_refer_only_to_registered_names():
    assert reference_problems() == []


def test_engine_suffixes_are_the_agents():
    from edgeopt_agent.runtimes.tensorrt_rt import TensorRtRuntime

    assert get_format("tensorrt_engine").suffixes == TensorRtRuntime.engine_suffixes
    assert ".trt" in TensorRtRuntime.engine_suffixes


def test_every_builtin_name_constant_has_a_descriptor():
    assert set(ModelFormat.constants()) <= set(format_names())
    assert set(RuntimeName.constants()) <= set(runtime_names())


@pytest.mark.parametrize("name", agent.names())
def test_agent_runtime_class_name_matches_its_registration(name):
    assert agent.runtime_class(name).name == name


def test_a_disagreement_is_reported(monkeypatch):
    from edgeopt_agent.runtimes.tflite_rt import TfliteRuntime

    monkeypatch.setattr(TfliteRuntime, "packages", TfliteRuntime.packages[:2])  # pycoral no longer probed
    assert any(p.startswith("tflite: host expects extra packages ['pycoral']") for p in agreement_problems())


def test_host_descriptors_read_formats_and_packages_from_the_agent_class(monkeypatch):
    from edgeopt_agent.runtimes.onnxruntime_rt import OnnxRuntime

    monkeypatch.setattr(OnnxRuntime, "formats", ("onnx", "tflite"))
    assert get_runtime("onnxruntime").formats == ("onnx", "tflite") and get_runtime("onnxruntime").loads("tflite")
    assert get_runtime("tflite").packages == ("ai_edge_litert", "tflite_runtime")  # pycoral: an extra package
    assert get_runtime("null").loads_any and get_runtime("onnxruntime").profiles and not get_runtime("tflite").profiles
