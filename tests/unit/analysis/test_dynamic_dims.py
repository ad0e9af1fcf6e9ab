"""inspect on models with dynamic dims: which dims are symbolic, the shape the count is for (the target's default
input, the model's own example shape, --shape), never a partial count as the headline, a --shape hint a user can
type."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from edgeopt.analysis import inspect_model
from edgeopt.api import inspect
from edgeopt.cli.main import main

from .builders import model, save, tensor, weight

P2O = ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"]


def _conv(tmp_path: Path, dims: list, name: str = "m.onnx", metadata: dict[str, str] | None = None) -> Path:
    """x -> Conv(8 filters, 3x3, stride 1, no pad) -> y, x declared ``dims`` (-1: a Paddle-style dynamic dim)."""
    x = tensor("x", [None if d == -1 else d for d in dims])
    for dim, value in zip(x.type.tensor_type.shape.dim, dims, strict=True):
        if value == -1:
            dim.dim_value = -1
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], name="conv")
    m = model([node], [x], [tensor("y", None)], [weight("w", [8, 3, 3, 3])])
    for key, value in (metadata or {}).items():
        onnx.helper.set_model_props(m, {**{p.key: p.value for p in m.metadata_props}, key: value})
    return save(m, tmp_path, name)


def macs(h: int, w: int, n: int = 1) -> int:
    return n * 8 * (h - 2) * (w - 2) * 3 * 3 * 3


def test_paddle_symbols_give_no_partial_headline_and_a_typeable_hint(tmp_path: Path) -> None:
    r = inspect(_conv(tmp_path, P2O))
    assert r.macs is None and r.flops is None and r.arithmetic_intensity is None
    assert r.partial_macs == 0 and r.unresolved_nodes == ["conv"]
    assert r.shape_hint == "--shape x=1x3x640x640"
    assert [(d.input, d.axis, d.symbol, d.value, d.source) for d in r.symbolic_dims] == [
        ("x", 0, "p2o.DynamicDimension.0", 1, "--batch 1"),
        ("x", 2, "p2o.DynamicDimension.1", None, None),
        ("x", 3, "p2o.DynamicDimension.2", None, None),
    ]
    assert any("pass --shape x=1x3x640x640" in n for n in r.notes)
    assert not any("<" in n for n in r.notes)
    fixed = inspect(_conv(tmp_path, P2O), shapes={"x": [1, 3, 64, 48]})
    assert fixed.macs == macs(64, 48) and fixed.partial_macs is None and fixed.shape_hint is None
    assert {d.source for d in fixed.symbolic_dims} == {"--shape"}


def test_unnamed_and_minus_one_dims_are_symbolic_without_a_name(tmp_path: Path) -> None:
    r = inspect(_conv(tmp_path, [-1, 3, None, -1]))
    assert [(d.axis, d.symbol, d.value) for d in r.symbolic_dims] == [(0, None, 1), (2, None, None), (3, None, None)]
    assert r.macs is None and r.shape_hint == "--shape x=1x3x640x640"
    mm = model([helper.make_node("MatMul", ["ids", "w"], ["y"], name="mm")], [tensor("ids", ["batch", "seq", 16])],
               [tensor("y", None)], [weight("w", [16, 8])])
    seq = inspect(save(mm, tmp_path, "seq.onnx"), batch=2)
    assert seq.shape_hint == "--shape ids=2x128x16"  # not an image: a sequence-length placeholder


def test_only_a_symbolic_batch_counts_at_batch_one_and_says_so(tmp_path: Path) -> None:
    r = inspect(_conv(tmp_path, ["N", 3, 32, 32]))
    assert r.macs == macs(32, 32) and r.input_shapes == {"x": [1, 3, 32, 32]}
    assert [(d.symbol, d.value, d.source) for d in r.symbolic_dims] == [("N", 1, "--batch 1")]


def test_the_models_own_example_shape_from_ultralytics_metadata(tmp_path: Path) -> None:
    path = _conv(tmp_path, ["batch", 3, "height", "width"], metadata={"imgsz": "[640, 480]", "batch": "1"})
    r = inspect(path)
    assert r.macs == macs(640, 480) and r.input_shapes == {"x": [1, 3, 640, 480]}
    assert r.symbolic_dims[1].source == "model metadata imgsz=[640, 480]"
    assert inspect(path, shapes={"x": [1, 3, 320, 320]}).macs == macs(320, 320)  # --shape wins
    # The low-level function counts only what it is told unless asked (bench passes its own run shapes).
    assert inspect_model(path).macs is None


def test_the_targets_default_input_shape(tmp_path: Path) -> None:
    src = (Path(__file__).resolve().parents[3] / "targets" / "rpi5.yaml").read_text()
    targets = tmp_path / "targets"
    targets.mkdir()
    (targets / "cam.yaml").write_text(src.replace("name: rpi5", "name: cam") + "default_input_shape: [1, 3, 96, 128]\n")
    path = _conv(tmp_path, P2O, metadata={"imgsz": "640"})
    r = inspect(path, target="cam", targets_dirs=[targets])
    assert r.macs == macs(96, 128) and r.roofline is not None
    assert r.symbolic_dims[2].source == "target cam default_input_shape"
    # A default that does not fit the input (another rank) is not used: the metadata is.
    (targets / "cam.yaml").write_text(src.replace("name: rpi5", "name: cam") + "default_input_shape: [1, 64]\n")
    assert inspect(path, target="cam", targets_dirs=[targets]).macs == macs(640, 640)
    partial = inspect(_conv(tmp_path, P2O, "p.onnx"), target="rpi5")
    assert partial.roofline is None and any("no roofline on rpi5" in n for n in partial.notes)


def test_cli_headline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _conv(tmp_path, P2O)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "unknown: pass --shape x=1x3x640x640" in out and "'p2o.DynamicDimension.1' open" in out
    assert "[p2o.DynamicDimension.0, 3, p2o.DynamicDimension.1, p2o.DynamicDimension.2]" in out
    assert main(["inspect", str(path), "--shape", "x=1x3x64x64", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["macs"] == macs(64, 64) and data["shape_hint"] is None
    assert main(["inspect", str(path), "--shape", "x=1x3x64x64"]) == 0
    out = capsys.readouterr().out
    assert f"{macs(64, 64):,}" in out and "at x=1x3x64x64" in out and "unknown: pass" not in out


def _anchor_grid(tmp_path: Path) -> Path:
    """YOLOv8-style: x -> Conv -> y, plus an anchor grid ``Range(0, data-dependent limit) + 0.5`` whose Add has no
    static shape whatever --shape says (the grid's length comes from the data)."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], name="conv"),
        helper.make_node("ReduceMax", ["x"], ["m"], keepdims=0, name="rmax"),
        helper.make_node("Cast", ["m"], ["limit"], to=onnx.TensorProto.FLOAT, name="cast"),
        helper.make_node("Range", ["zero", "limit", "one"], ["grid"], name="range"),
        helper.make_node("Add", ["grid", "half"], ["anchors"], name="anchor_add"),
    ]
    inits = [onnx.numpy_helper.from_array(np.array(v, dtype=np.float32), n)
             for n, v in (("zero", 0.0), ("one", 1.0), ("half", 0.5))]
    m = model(nodes, [tensor("x", ["N", 3, "H", "W"])], [tensor("y", None), tensor("anchors", None)],
              [weight("w", [8, 3, 3, 3]), *inits])
    return save(m, tmp_path, "yolo.onnx")


def test_unresolved_zero_mac_nodes_leave_the_macs_complete(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = _anchor_grid(tmp_path)
    r = inspect(path, shapes={"x": [1, 3, 64, 48]})
    assert r.unresolved_nodes == ["anchor_add"]
    assert r.macs == macs(64, 48) and r.partial_macs is None
    assert r.flops is None and r.partial_flops is not None and r.partial_flops >= 2 * macs(64, 48)
    assert any("flops is partial" in n and "macs is complete" in n for n in r.notes)
    assert main(["inspect", str(path), "--shape", "x=1x3x64x48"]) == 0
    out = capsys.readouterr().out
    assert f"{macs(64, 48):,}" in out and "FLOPs" in out and "partial" in out and "unknown" not in out.split("FLOPs")[0]
