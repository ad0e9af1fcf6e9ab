"""Contract: the host's descriptors (``edgeopt.registry``) and the agent's runtime registry
(``edgeopt_agent.runtimes``, which cannot import edgeopt) describe the same runtimes.

Fails when a runtime is added on one side only, when the agent declares formats the host descriptor does not
list (or the other way round), or when the packages ``devices check`` judges a device by differ from those the
agent's probe reports. The checks are functions so the plug-in tests run them with plug-ins active too.
"""

from __future__ import annotations

import pytest

from edgeopt.names import ModelFormat, RuntimeName
from edgeopt.passes.registry import load_pass_registry
from edgeopt.registry import format_names, format_registry, get_runtime, runtime_names, runtime_registry
from edgeopt_agent import runtimes as agent


def agreement_problems() -> list[str]:
    """Every disagreement between the host's runtime descriptors and the agent's runtimes, one line each."""
    problems = []
    host, device = set(runtime_names()), set(agent.names())
    if host != device:
        problems.append(f"runtime names differ: host only {sorted(host - device)}, agent only {sorted(device - host)}")
    for name in sorted(host & device):
        desc, cls = get_runtime(name), agent.runtime_class(name)
        if cls.formats and set(cls.formats) != set(desc.formats):
            problems.append(f"{name}: agent loads {sorted(cls.formats)}, host descriptor says {sorted(desc.formats)}")
        if not cls.formats and desc.formats:
            problems.append(f"{name}: host descriptor lists formats {sorted(desc.formats)}, the agent declares none")
        agent_pkgs = {module for module, _ in cls.packages}
        host_pkgs = set(desc.packages) | {extra.package for extra in desc.extra_packages}
        if agent_pkgs != host_pkgs:
            problems.append(f"{name}: agent probes packages {sorted(agent_pkgs)}, host expects {sorted(host_pkgs)}")
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


def test_every_builtin_name_constant_has_a_descriptor():
    assert set(ModelFormat.constants()) <= set(format_names())
    assert set(RuntimeName.constants()) <= set(runtime_names())


@pytest.mark.parametrize("name", agent.names())
def test_agent_runtime_class_name_matches_its_registration(name):
    assert agent.runtime_class(name).name == name


def test_a_disagreement_is_reported(monkeypatch):
    from edgeopt_agent.runtimes.onnxruntime_rt import OnnxRuntime

    monkeypatch.setattr(OnnxRuntime, "formats", ("onnx", "tflite"))
    assert any(p.startswith("onnxruntime: agent loads ['onnx', 'tflite']") for p in agreement_problems())
