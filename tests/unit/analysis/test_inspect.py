"""inspect_model end to end on small models: totals, sizes, metadata, notes and the JSON form."""

from __future__ import annotations

import json
from pathlib import Path

import onnx
import pytest
from onnx import helper

from edgeopt.analysis import InspectResult, inspect_model
from edgeopt.enums import Precision
from edgeopt.fsutil import sha256_file

from .builders import model, save, tensor, weight

# Hand counts of builders.conv_stack at batch 1 (input 1x3x32x32, every conv padded to keep 32x32).
CONV1_MACS = 1 * 16 * 32 * 32 * 3 * 3 * 3
DW_MACS = 1 * 16 * 32 * 32 * 1 * 3 * 3
FC_MACS = 1 * 10 * 16
PROJ_MACS = 1 * 10 * 10
STACK_MACS = CONV1_MACS + DW_MACS + FC_MACS + PROJ_MACS
STACK_FLOPS = (
    (2 * CONV1_MACS + 16 * 32 * 32)  # conv1 + bias
    + 16 * 32 * 32  # relu
    + 2 * DW_MACS  # depthwise, no bias
    + 16 * 32 * 32  # global average pool: input elements
    + (2 * FC_MACS + 10)  # gemm + C
    + 2 * PROJ_MACS  # matmul
)
STACK_PARAMS = 16 * 3 * 3 * 3 + 16 + 16 * 1 * 3 * 3 + 10 * 16 + 10 + 10 * 10
STACK_ACTIVATIONS = 4 * (3 * 32 * 32 + 3 * 16 * 32 * 32 + 16 + 16 + 10 + 10)  # x, c1, r1, c2, p, f, g, y


def test_totals_match_hand_counts(stack_path: Path) -> None:
    result = inspect_model(stack_path)
    assert result.macs == STACK_MACS
    assert result.flops == STACK_FLOPS
    assert result.params == STACK_PARAMS
    assert result.weight_bytes == 4 * STACK_PARAMS
    assert result.activation_bytes == STACK_ACTIVATIONS
    assert result.arithmetic_intensity == pytest.approx(STACK_FLOPS / (4 * STACK_PARAMS + STACK_ACTIVATIONS))
    assert result.unresolved_nodes == [] and result.uncounted_ops == [] and result.notes == []


def test_per_op_sums_equal_totals(stack_path: Path) -> None:
    result = inspect_model(stack_path, batch=3)
    assert sum(s.macs for s in result.per_op.values()) == result.macs == 3 * STACK_MACS
    assert sum(s.flops for s in result.per_op.values()) == result.flops == 3 * STACK_FLOPS
    assert sum(s.count for s in result.per_op.values()) == sum(result.ops.values()) == 7
    assert result.per_op["Conv"].macs == 3 * (CONV1_MACS + DW_MACS)
    assert list(result.ops) == ["Conv", "Flatten", "Gemm", "GlobalAveragePool", "MatMul", "Relu"]
    assert list(result.per_op)[0] == "Conv"  # most FLOPs first


def test_metadata_inputs_and_outputs(stack_path: Path) -> None:
    result = inspect_model(stack_path, batch=2)
    assert result.path == str(stack_path)
    assert result.sha256 == sha256_file(stack_path)
    assert result.size_bytes == stack_path.stat().st_size
    assert (result.opset, result.ir_version, result.producer) == (17, 8, "edgeopt-tests 1")
    assert result.precision is Precision.FP32
    assert [(t.name, t.dtype, t.shape) for t in result.inputs] == [("x", "float32", ["N", 3, 32, 32])]
    assert [(t.name, t.dtype, t.shape) for t in result.outputs] == [("y", "float32", ["N", 10])]
    assert result.input_shapes == {"x": [2, 3, 32, 32]}
    assert result.roofline is None


def test_size_and_counts_with_external_data(tmp_path: Path, stack_model: onnx.ModelProto) -> None:
    path = tmp_path / "ext.onnx"
    onnx.save_model(
        stack_model,
        str(path),
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="w.bin",
        size_threshold=0,
    )
    result = inspect_model(path)
    assert result.size_bytes == path.stat().st_size + (tmp_path / "w.bin").stat().st_size
    assert result.size_bytes > 4 * STACK_PARAMS
    assert (result.macs, result.params) == (STACK_MACS, STACK_PARAMS)


def test_unresolved_nodes_get_a_shape_hint(tmp_path: Path) -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], name="conv")
    m = model([node], [tensor("x", ["N", 3, "H", "W"])], [tensor("y", None)], [weight("w", [8, 3, 3, 3])])
    result = inspect_model(save(m, tmp_path), batch=4)
    assert result.unresolved_nodes == ["conv"]
    assert result.input_shapes == {"x": [4, 3, "H", "W"]}
    assert any("--shape x=" in note and "conv" in note for note in result.notes)
    fixed = inspect_model(save(m, tmp_path), shapes={"x": [4, 3, 10, 10]})
    assert fixed.macs == 4 * 8 * 8 * 8 * 3 * 3 * 3 and fixed.notes == []


def test_json_round_trip(stack_path: Path) -> None:
    result = inspect_model(stack_path)
    data = json.loads(result.model_dump_json())
    assert data["macs"] == STACK_MACS
    assert data["precision"] == "fp32"
    assert data["inputs"][0]["shape"] == ["N", 3, 32, 32]
    assert data["per_op"]["Gemm"] == {"count": 1, "macs": FC_MACS, "flops": 2 * FC_MACS + 10}
    assert InspectResult.model_validate(data) == result
