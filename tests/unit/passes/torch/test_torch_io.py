"""Loading PyTorch models: .pt2, TorchScript, factory specs, and a one-line InputError for each way it fails."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from .conftest import TORCH_REASON

torch = pytest.importorskip("torch", reason=TORCH_REASON)

from edgeopt.errors import InputError, ModelLoadError, ShapeError  # noqa: E402
from edgeopt.passes.base import ArtifactFormat  # noqa: E402
from edgeopt.passes.torch_io import (  # noqa: E402
    TorchModelKind,
    is_factory_spec,
    load_torch_model,
    looks_like_torch_model,
    save_exported_program,
    torch_artifact,
)

from .models import SPEC  # noqa: E402

CNN = f"{SPEC}:small_cnn"
SHAPE = {"x": [1, 1, 8, 8]}


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    assert isinstance(exc.value, InputError)
    return text


def test_factory_spec_loads_in_eval_mode_with_forward_names() -> None:
    loaded = load_torch_model(CNN, SHAPE)
    assert loaded.kind is TorchModelKind.FACTORY and loaded.is_eager
    assert loaded.input_names == ["x"] and loaded.inputs[0].shape == (1, 1, 8, 8)
    assert not loaded.module.training
    (x,) = loaded.example_inputs(batch=3)
    assert tuple(x.shape) == (3, 1, 8, 8)
    assert torch.equal(loaded.example_inputs(seed=1)[0], loaded.example_inputs(seed=1)[0])


@pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")
def test_pt2_and_torchscript_round_trip(tmp_path: Path) -> None:
    loaded = load_torch_model(CNN, SHAPE)
    pt2, dynamic = save_exported_program(loaded.module, loaded, tmp_path / "m.pt2", dynamic_batch=True)
    assert dynamic
    back = load_torch_model(pt2)  # a .pt2 knows its inputs: no shapes needed
    assert back.kind is TorchModelKind.EXPORTED_PROGRAM and not back.is_eager and back.dynamic_batch
    assert back.input_names == ["x"] and back.inputs[0].shape == (1, 1, 8, 8)
    x = torch.randn(5, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(back.module(x), loaded.module(x))

    script = torch.jit.trace(loaded.module, (x,))
    ts = tmp_path / "m.ts"
    script.save(str(ts))
    ts_loaded = load_torch_model(ts, {"x": [2, 1, 8, 8]})
    assert ts_loaded.kind is TorchModelKind.TORCHSCRIPT and ts_loaded.inputs[0].shape == (2, 1, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(ts_loaded.module(x), loaded.module(x))


def test_input_artifacts_for_factory_and_file(tmp_path: Path) -> None:
    art = torch_artifact(CNN)
    assert art.format is ArtifactFormat.PYTORCH and art.path == CNN and art.size_bytes == 0 and len(art.sha256) == 64
    assert is_factory_spec(CNN) and looks_like_torch_model(CNN) and looks_like_torch_model("m.pt2")
    assert not looks_like_torch_model("model.onnx") and not is_factory_spec("model.onnx")
    loaded = load_torch_model(CNN, SHAPE)
    pt2, _ = save_exported_program(loaded.module, loaded, tmp_path / "m.pt2", dynamic_batch=False)
    assert torch_artifact(pt2).size_bytes == pt2.stat().st_size


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("no_such_pkg_for_edgeopt.models:build", "cannot import module 'no_such_pkg_for_edgeopt.models'"),
        (f"{SPEC}:no_such_factory", "has no attribute 'no_such_factory'"),
        (f"{SPEC}:SPEC", "is not callable"),
        (f"{SPEC}:not_a_module", r"not_a_module\(\) returned int, not a torch.nn.Module"),
        (f"{SPEC}:broken_factory", r"calling broken_factory\(\) failed \(RuntimeError: weights file missing\)"),
    ],
)
def test_bad_factory_specs_are_one_line_errors(spec: str, expected: str) -> None:
    with pytest.raises(ModelLoadError) as exc:
        load_torch_model(spec, SHAPE)
    assert re.search(expected, _one_line(exc)), str(exc.value)
    assert spec in str(exc.value)


def test_missing_file_and_non_torch_files(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError) as exc:
        load_torch_model(tmp_path / "missing.pt2")
    assert "not found" in _one_line(exc) and "missing.pt2" in str(exc.value)
    with pytest.raises(ModelLoadError):
        torch_artifact(tmp_path / "missing.pt")

    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"\x00not a zip at all" * 10)
    with pytest.raises(ModelLoadError) as exc:
        load_torch_model(garbage, SHAPE)
    assert "is not a PyTorch archive" in _one_line(exc)

    checkpoint = tmp_path / "weights.pth"
    torch.save({"w": torch.zeros(2)}, checkpoint)  # a state_dict checkpoint, not a model
    with pytest.raises(ModelLoadError) as exc:
        load_torch_model(checkpoint, SHAPE)
    assert "neither a .pt2 ExportedProgram nor TorchScript" in _one_line(exc) and "factory" in str(exc.value)

    corrupt = tmp_path / "corrupt.pt2"
    with zipfile.ZipFile(corrupt, "w") as zf:
        zf.writestr("m/archive_format", "pt2")
    with pytest.raises(ModelLoadError) as exc:
        load_torch_model(corrupt)
    assert "could not be loaded as a .pt2" in _one_line(exc)


def test_input_shapes_are_required_and_checked() -> None:
    with pytest.raises(ShapeError) as exc:
        load_torch_model(CNN)
    assert "--input-shape x=" in _one_line(exc)
    with pytest.raises(ShapeError) as exc:
        load_torch_model(CNN, {"image": [1, 1, 8, 8]})
    assert "has inputs x but --input-shape names image" in _one_line(exc)
