"""Fixtures shared by the analysis tests."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from .builders import conv_stack, save


@pytest.fixture
def stack_model() -> onnx.ModelProto:
    """The Conv/depthwise/Gemm/MatMul model of :func:`builders.conv_stack`."""
    return conv_stack()


@pytest.fixture
def stack_path(tmp_path: Path, stack_model: onnx.ModelProto) -> Path:
    """:func:`builders.conv_stack` saved as ``m.onnx`` in a temp dir."""
    return save(stack_model, tmp_path)
