"""A run on hardware that is not its target's is flagged (issue 16, item 2); the local target never is."""

from __future__ import annotations

from edgeopt.metrics.target_match import cpu_vendor, target_mismatch
from edgeopt.targets import load_registry

X86_HOST = {"machine": "x86_64", "cpu": "AMD EPYC 9654 96-Core Processor", "cores": 16, "accelerators": []}
PI5 = {"machine": "aarch64", "cpu": "Cortex-A76", "cores": 4, "accelerators": []}


def test_x86_host_is_not_a_raspberry_pi_5():
    reasons = target_mismatch(load_registry().get("rpi5"), X86_HOST)
    assert any("architecture: the device is x86_64, target rpi5 is aarch64" in r for r in reasons)
    assert any("CPU vendor" in r and "amd" in r for r in reasons)
    assert any("cores: the device has 16 CPUs, target rpi5 has 4" in r for r in reasons)


def test_a_pi_matches_its_target_and_the_local_target_always_matches():
    registry = load_registry()
    assert target_mismatch(registry.get("rpi5"), PI5) == []
    assert target_mismatch(registry.get("local"), X86_HOST) == []
    assert target_mismatch(registry.get("local"), PI5) == []


def test_a_jetson_target_without_a_gpu_and_an_old_agent_without_accelerators():
    jetson = load_registry().get("jetson-orin-nano")
    board = {"machine": "aarch64", "cpu": "ARMv8 Processor rev 1 (v8l)", "cores": 6}
    assert target_mismatch(jetson, {**board, "accelerators": ["nvidia_gpu"]}) == []
    (reason,) = target_mismatch(jetson, {**board, "accelerators": []})
    assert reason.startswith("accelerator: target jetson-orin-nano has a nvidia_gpu accelerator")
    assert target_mismatch(jetson, board) == []  # an agent that does not report accelerators cannot be judged


def test_cpu_vendor_from_model_strings():
    assert cpu_vendor("Intel(R) Core(TM) i7-1360P") is cpu_vendor("GenuineIntel")
    assert cpu_vendor("AMD EPYC").value == "amd" and cpu_vendor("Cortex-A72").value == "arm"
    assert cpu_vendor("test cpu") is None
