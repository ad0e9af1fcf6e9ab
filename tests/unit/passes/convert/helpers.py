"""A tiny CNN built in the test (conv + pool + linear, 10 classes) and its FP32 ONNX."""

from __future__ import annotations

from pathlib import Path

import pytest


def tiny_cnn_onnx(path: Path) -> Path:
    torch = pytest.importorskip("torch", reason="torch builds the test CNN")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 10),
    ).eval()
    torch.onnx.export(model, (torch.randn(1, 1, 8, 8),), str(path), input_names=["x"], output_names=["logits"],
                      opset_version=17, dynamo=False)
    return path
