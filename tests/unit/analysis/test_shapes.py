"""Shape inference with --shape and --batch overrides, and the errors for overrides that do not fit."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from edgeopt.analysis.shapes import infer_shapes
from edgeopt.errors import ShapeError

from .builders import count, model, tensor, weight


def test_types_of_inputs_intermediates_outputs_and_initializers(stack_model: onnx.ModelProto) -> None:
    info = infer_shapes(stack_model)
    assert info.tensors["x"].shape == (1, 3, 32, 32)  # symbolic batch set to 1
    assert info.tensors["c1"].shape == (1, 16, 32, 32)
    assert info.tensors["y"].shape == (1, 10)
    assert info.tensors["w1"].shape == (16, 3, 3, 3)
    assert info.tensors["y"].elem_type == onnx.TensorProto.FLOAT
    assert info.inputs == {"x": (1, 3, 32, 32)}


def test_model_is_not_modified(stack_model: onnx.ModelProto) -> None:
    before = stack_model.SerializeToString()
    infer_shapes(stack_model, overrides={"x": [2, 3, 32, 32]})
    assert stack_model.SerializeToString() == before


def test_batch_scales_macs(stack_model: onnx.ModelProto) -> None:
    one, four = count(stack_model, batch=1), count(stack_model, batch=4)
    assert four.macs == 4 * one.macs
    assert four.flops == 4 * one.flops


def test_batch_resolves_a_shape_computed_reshape() -> None:
    """Shape -> Gather -> Concat -> Reshape, as exporters write flatten with a dynamic batch."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax"], ["nu"]),
        helper.make_node("Concat", ["nu", "m1"], ["ns"], axis=0),
        helper.make_node("Reshape", ["x", "ns"], ["f"]),
        helper.make_node("MatMul", ["f", "w"], ["y"], name="fc"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "i0"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "ax"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "m1"),
        weight("w", [3 * 8 * 8, 10]),  # large enough to be left out of the inference skeleton
    ]
    m = model(nodes, [tensor("x", ["N", 3, 8, 8])], [tensor("y", None)], inits)
    got = count(m, batch=4)
    assert got.unresolved_nodes == []
    assert got.macs == 4 * 10 * 192


def test_unresolved_dynamic_dims_are_reported() -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], name="conv")
    m = model([node], [tensor("x", ["N", 3, "H", "W"])], [tensor("y", None)], [weight("w", [8, 3, 3, 3])])
    got = count(m)
    assert got.unresolved_nodes == ["conv"]
    assert got.macs == 0
    resolved = count(m, overrides={"x": [1, 3, 10, 10]})
    assert resolved.macs == 1 * 8 * 8 * 8 * 3 * 3 * 3


def test_override_of_a_shared_symbol_resolves_every_input() -> None:
    node = helper.make_node("Add", ["a", "b"], ["y"])
    m = model([node], [tensor("a", ["B", "S", 8]), tensor("b", ["B", "S", 8])], [tensor("y", None)])
    info = infer_shapes(m, overrides={"a": [2, 5, 8]})
    assert info.inputs == {"a": (2, 5, 8), "b": (2, 5, 8)}
    assert info.tensors["y"].shape == (2, 5, 8)


def test_initializers_listed_as_inputs_are_not_inputs() -> None:
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    m = model(
        [node],
        [tensor("x", ["N", 2048]), tensor("w", [2048, 4])],
        [tensor("y", None)],
        [weight("w", [2048, 4])],
    )
    info = infer_shapes(m)
    assert info.inputs == {"x": (1, 2048)}
    assert count(m).macs == 1 * 4 * 2048


@pytest.mark.parametrize(
    ("overrides", "batch", "match"),
    [
        ({"images": [1, 3, 32, 32]}, 1, r"'images', not an input of m\.onnx: use one of 'x'"),
        ({"x": [1, 3, 32]}, 1, r"has 3 dims but input 'x' of m\.onnx has 4"),
        ({"x": [1, 4, 32, 32]}, 1, r"sets dim 1 to 4 but m\.onnx fixes it at 3"),
        ({"x": [1, 3, 0, 32]}, 1, r"m\.onnx: each dim must be a positive integer"),
        (None, 0, r"batch 0 for m\.onnx is not positive"),
    ],
)
def test_bad_overrides(
    stack_model: onnx.ModelProto, overrides: dict[str, list[int]] | None, batch: int, match: str
) -> None:
    with pytest.raises(ShapeError, match=match) as info:
        infer_shapes(stack_model, overrides=overrides, batch=batch, model_name="m.onnx")
    assert "\n" not in str(info.value)
