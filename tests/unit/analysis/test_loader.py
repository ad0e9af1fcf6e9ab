"""Every way a model file can be wrong gives a one-line ModelLoadError naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from onnx.external_data_helper import uses_external_data

from edgeopt.analysis import load_model, model_size_bytes, read_model
from edgeopt.errors import ModelLoadError

from .builders import conv_stack


def _save_external(directory: Path, location: str = "w.bin") -> Path:
    path = directory / "m.onnx"
    onnx.save_model(
        conv_stack(),
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=location,
        size_threshold=0,
    )
    return path


def _relocate(path: Path, location: str) -> None:
    """Rewrite every external-data location of the model at ``path`` to ``location``."""
    m = onnx.load_model(str(path), load_external_data=False)
    for tensor in m.graph.initializer:
        for entry in tensor.external_data:
            if entry.key == "location":
                entry.value = location
    path.write_bytes(m.SerializeToString())


def _raises(path: Path, match: str) -> str:
    with pytest.raises(ModelLoadError, match=match) as info:
        load_model(path)
    message = str(info.value)
    assert path.name in message
    assert "\n" not in message
    return message


def test_loads_a_plain_model(stack_path: Path) -> None:
    assert len(load_model(stack_path).graph.node) == 7


def test_missing_file(tmp_path: Path) -> None:
    _raises(tmp_path / "absent.onnx", "not found: check the path")


def test_directory(tmp_path: Path) -> None:
    folder = tmp_path / "model.onnx"
    folder.mkdir()
    _raises(folder, "is a directory")


def test_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.onnx"
    path.write_text("this is not a model, just some text\n" * 5)
    _raises(path, "not an ONNX model .*export it to .onnx first")


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "noise.onnx"
    path.write_bytes(bytes((i * 73 + 41) % 256 for i in range(4096)))
    _raises(path, "not (an|a complete) ONNX model")


def test_zip_archive_gets_a_pytorch_hint(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    _raises(path, "torch.onnx.export")


def test_model_cut_in_half(tmp_path: Path, stack_path: Path) -> None:
    data = stack_path.read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    _raises(cut, "truncated")


def test_model_cut_after_first_field(tmp_path: Path, stack_path: Path) -> None:
    cut = tmp_path / "stub.onnx"
    cut.write_bytes(stack_path.read_bytes()[:2])  # just ir_version: parses, but is no model
    _raises(cut, "not a complete ONNX model")


def test_external_data_loads_and_counts_in_size(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    raw = read_model(path)
    assert all(uses_external_data(t) for t in raw.graph.initializer)
    expected = path.stat().st_size + (tmp_path / "w.bin").stat().st_size
    assert model_size_bytes(path, raw) == expected
    loaded = load_model(path)
    assert not any(uses_external_data(t) for t in loaded.graph.initializer)
    assert onnx.numpy_helper.to_array(loaded.graph.initializer[0]).shape == (16, 3, 3, 3)


@pytest.mark.parametrize("location", ["/etc/passwd", "../w.bin", "sub/../../w.bin"])
def test_external_data_outside_the_model_dir_is_refused(tmp_path: Path, location: str) -> None:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    path = _save_external(model_dir)
    (model_dir / "w.bin").rename(tmp_path / "w.bin")
    _relocate(path, location)
    _raises(path, "path traversal")


def test_external_data_symlinked_outside_is_refused(tmp_path: Path) -> None:
    model_dir, outside = tmp_path / "model", tmp_path / "outside"
    model_dir.mkdir()
    outside.mkdir()
    path = _save_external(model_dir)
    (model_dir / "w.bin").rename(outside / "w.bin")
    os.symlink(outside / "w.bin", model_dir / "w.bin")
    _raises(path, "path traversal")


def test_missing_external_data_file(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    (tmp_path / "w.bin").unlink()
    message = _raises(path, "external data file 'w.bin'.* not found")
    assert "copy the data file next to the model" in message


def test_truncated_external_data_file(tmp_path: Path) -> None:
    path = _save_external(tmp_path)
    data = tmp_path / "w.bin"
    data.write_bytes(data.read_bytes()[:100])
    _raises(path, "truncated")


def test_external_data_in_a_subfolder_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    path = _save_external(tmp_path, location="data/w.bin")
    assert model_size_bytes(path, read_model(path)) == path.stat().st_size + (tmp_path / "data/w.bin").stat().st_size
    assert len(load_model(path).graph.initializer) == 6
