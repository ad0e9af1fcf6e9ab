"""Roofline numbers against hand calculations, with a target built in the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.analysis import inspect_model, roofline
from edgeopt.enums import Bound, Precision
from edgeopt.targets.schema import Target

PEAK = 1.0e12  # 1 TFLOPS
BANDWIDTH = 10e9  # 10 GB/s


@pytest.fixture
def target() -> Target:
    return Target.model_validate(
        {
            "name": "t",
            "description": "test",
            "arch": "x86_64",
            "accelerator": "cpu",
            "peak_fp32_tflops": {"value": 1.0, "source": "test"},
            "memory_gb": {"value": 1, "source": "test"},
            "memory_bandwidth_gbps": {"value": 10, "source": "test"},
            "tdp_w": {"value": 5, "source": "test"},
            "runtimes": ["onnxruntime"],
            "precisions": ["fp32"],
        }
    )


def test_compute_bound(target: Target) -> None:
    roof = roofline(2_000_000_000, 1_000_000, target, Precision.FP32)
    assert roof is not None
    assert roof.ridge_point == pytest.approx(PEAK / BANDWIDTH)  # 100 ops/byte
    assert roof.arithmetic_intensity == pytest.approx(2000.0)
    assert roof.bound is Bound.COMPUTE
    assert roof.compute_time_ms == pytest.approx(2e9 / 1e12 * 1e3)  # 2 ms
    assert roof.memory_time_ms == pytest.approx(1e6 / 10e9 * 1e3)  # 0.1 ms
    assert roof.lower_bound_latency_ms == pytest.approx(2.0)
    assert roof.peak_source == "peak_fp32_tflops: test"


def test_memory_bound(target: Target) -> None:
    roof = roofline(1_000_000, 100_000_000, target, Precision.FP32)
    assert roof is not None
    assert roof.bound is Bound.MEMORY
    assert roof.lower_bound_latency_ms == pytest.approx(1e8 / 10e9 * 1e3)  # 10 ms


def test_int8_falls_back_to_the_fp32_peak(target: Target) -> None:
    roof = roofline(1, 1, target, Precision.INT8)
    assert roof is not None and roof.peak_ops_per_s == PEAK


def test_target_without_numbers_gives_none(stack_path: Path) -> None:
    local = Target.model_validate(
        {"name": "local", "description": "this machine", "arch": "x86_64", "accelerator": "cpu",
         "runtimes": ["onnxruntime"], "precisions": ["fp32"], "detect": True}
    )  # fmt: skip
    assert roofline(10, 10, local, Precision.FP32) is None
    result = inspect_model(stack_path, target=local)
    assert result.roofline is None
    assert any("target local" in note for note in result.notes)


def test_inspect_model_places_the_model_on_the_roofline(stack_path: Path, target: Target) -> None:
    result = inspect_model(stack_path, target=target)
    roof = result.roofline
    assert roof is not None
    moved = result.weight_bytes + result.activation_bytes
    compute_ms, memory_ms = result.flops / PEAK * 1e3, moved / BANDWIDTH * 1e3
    assert roof.compute_time_ms == pytest.approx(compute_ms)
    assert roof.memory_time_ms == pytest.approx(memory_ms)
    assert roof.lower_bound_latency_ms == pytest.approx(max(compute_ms, memory_ms))
    expected = Bound.COMPUTE if result.flops / moved >= PEAK / BANDWIDTH else Bound.MEMORY
    assert roof.bound is expected is Bound.MEMORY  # a few ops/byte, far below the 100 ops/byte ridge
    assert roof.target == "t" and roof.precision is Precision.FP32
