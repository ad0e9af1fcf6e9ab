"""Cache keys of what the SSH runner pushes: content decides, names matter only where files find each other."""

from __future__ import annotations

from pathlib import Path

import onnx

from edgeopt.fsutil import sha256_file
from edgeopt.runners.ssh_cache import agent_bundle, file_bundle, model_bundle, model_files
from tests.conftest import make_matmul_model


def test_lone_model_is_keyed_by_its_own_hash_and_stored_under_a_fixed_name(tmp_path: Path):
    a = make_matmul_model(tmp_path / "a.onnx")
    b = tmp_path / "other-name.onnx"
    b.write_bytes(a.read_bytes())
    ba, bb = model_bundle(a), model_bundle(b)
    assert ba.key == bb.key == sha256_file(a) and ba.main == bb.main == "model.onnx"
    assert file_bundle(a, lone_name="inputs").main == "inputs.onnx"


def test_external_data_files_join_the_bundle_and_change_its_key(tmp_path: Path):
    src = make_matmul_model(tmp_path / "src.onnx")
    (tmp_path / "m" / "w").mkdir(parents=True)
    onnx.save_model(onnx.load(src), tmp_path / "m" / "mm.onnx", save_as_external_data=True, location="w/data.bin",
                    size_threshold=0)
    model = tmp_path / "m" / "mm.onnx"
    assert [p.name for p in model_files(model)] == ["mm.onnx", "data.bin"]
    bundle = model_bundle(model)
    assert [rel for _, rel in bundle.files] == ["mm.onnx", "w/data.bin"] and bundle.main == "mm.onnx"
    key = bundle.key
    data = tmp_path / "m" / "w" / "data.bin"
    raw = bytearray(data.read_bytes())
    raw[0] ^= 0xFF
    data.write_bytes(bytes(raw))
    assert model_bundle(model).key != key  # new weights, new cache entry


def test_openvino_ir_brings_its_bin(tmp_path: Path):
    (tmp_path / "net.xml").write_text("<net/>")
    (tmp_path / "net.bin").write_bytes(b"\0" * 8)
    assert [p.name for p in model_files(tmp_path / "net.xml")] == ["net.xml", "net.bin"]
    assert model_bundle(tmp_path / "net.xml").main == "net.xml"


def test_agent_bundle_covers_every_agent_source_file():
    bundle = agent_bundle()
    rels = {rel for _, rel in bundle.files}
    assert {"edgeopt_agent/__main__.py", "edgeopt_agent/protocol.py", "edgeopt_agent/lock.py"} <= rels
    assert all(rel.endswith(".py") and "__pycache__" not in rel for rel in rels)
    assert agent_bundle().key == bundle.key and len(bundle.key) == 64
