"""Deciding that an input is a PyTorch model, without torch: one set of rules for optimize and the passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgeopt.errors import ModelLoadError
from edgeopt.optimize.api import _input_artifact
from edgeopt.passes.base import ArtifactFormat
from edgeopt.passes.torch_input import is_factory_spec, looks_like_torch_model, torch_artifact, torch_stem

from .builders import mlp_model


def test_the_module_does_not_import_torch() -> None:
    code = "import sys, edgeopt.passes.torch_input; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["m.pt2", "m.PT2", "m.pt", "m.pth", "m.ts", "m.torchscript", "m.jit", "m.zip",
                                  "pkg.models:build"])
def test_torch_inputs(name: str) -> None:
    assert looks_like_torch_model(name)


@pytest.mark.parametrize("name", ["m.onnx", "m", "dir/m.onnx", "not a spec:x y"])
def test_other_inputs(name: str) -> None:
    assert not looks_like_torch_model(name) and not is_factory_spec(name)


def test_optimize_uses_the_same_rules(tmp_path: Path) -> None:
    ts = tmp_path / "model.torchscript"
    ts.write_bytes(b"PK\x03\x04 not read here")
    assert _input_artifact(ts) == torch_artifact(ts)
    assert _input_artifact("pkg.models:build") == torch_artifact("pkg.models:build")
    assert _input_artifact("pkg.models:build").format is ArtifactFormat.PYTORCH
    onnx_file = mlp_model(tmp_path / "m.onnx")
    assert _input_artifact(onnx_file).format is ArtifactFormat.ONNX
    with pytest.raises(ModelLoadError, match="PyTorch model .*missing.pt not found"):
        _input_artifact(tmp_path / "missing.pt")


def test_output_names_keep_their_stem() -> None:
    assert torch_stem("/models/net.pt2") == "net"
    assert torch_stem("factory_only:build") == "build"
