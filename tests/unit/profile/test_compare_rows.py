"""How ``edgeopt profile A --vs B`` puts the two sides' layers into rows (:func:`edgeopt.profile.compare._group`):
through the weight ops they share, so two runtimes that fuse a conv's epilogue differently do not chain every row
into one (PP-OCRv4 det, INT8 against bf16 on OpenVINO with AMX: one row of 358 nodes before)."""

from __future__ import annotations

from edgeopt.profile.compare import _group
from edgeopt.profile.schema import LayerRecord


def _layer(*nodes: tuple[str, str]) -> LayerRecord:
    return LayerRecord.model_construct(onnx_nodes=[n for n, _ in nodes], onnx_op_types=[op for _, op in nodes],
                                       executed=True)


def _rows(a: list[LayerRecord], b: list[LayerRecord]) -> list[set[str]]:
    groups, _ = _group({"a": a, "b": b})
    rows: dict[tuple[str, int], set[str]] = {}
    for key in list(groups.parent):
        side, i = key
        rows.setdefault(groups.find(key), set()).update(({"a": a, "b": b}[side][i]).onnx_nodes)
    return sorted(rows.values(), key=sorted)


def test_convs_fused_with_different_neighbours_on_each_side_stay_in_their_own_rows() -> None:
    # A fuses each conv with the activation after it; B fuses each activation into the next conv's input
    a = [_layer(("conv1", "Conv"), ("act1", "HardSigmoid")), _layer(("conv2", "Conv"), ("act2", "HardSigmoid")),
         _layer(("conv3", "Conv"))]
    b = [_layer(("conv1", "Conv")), _layer(("act1", "HardSigmoid"), ("conv2", "Conv")),
         _layer(("act2", "HardSigmoid"), ("conv3", "Conv"))]
    rows = _rows(a, b)
    assert len(rows) == 3, rows  # one row per conv, not one chained row of all five nodes
    assert all(len([n for n in r if n.startswith("conv")]) == 1 for r in rows), rows


def test_an_activation_one_side_runs_apart_joins_the_conv_row_that_covers_it() -> None:
    a = [_layer(("conv1", "Conv"), ("add1", "Add"), ("mul1", "Mul"))]
    b = [_layer(("conv1", "Conv")), _layer(("add1", "Add"), ("mul1", "Mul")), _layer(("relu9", "Relu"))]
    rows = _rows(a, b)
    assert rows == [{"conv1", "add1", "mul1"}, {"relu9"}], rows
    # elementwise layers both sides run apart share a row through their nodes
    rows = _rows([_layer(("mul2", "Mul"), ("add2", "Add"))], [_layer(("mul2", "Mul")), _layer(("add2", "Add"))])
    assert rows == [{"mul2", "add2"}], rows


def test_an_activation_layer_joins_the_row_its_other_side_put_with_a_conv_and_never_merges_two_rows() -> None:
    # A runs (bias, add) apart but (add) also sits in conv1's layer on B: A's layer goes to conv1's row; B's lone
    # (bias) layer then follows A's layer there instead of making a one-sided row (PP-OCRv4 rec: 3 such rows)
    a = [_layer(("conv1", "Conv")), _layer(("bias", "Add"), ("add", "Add"))]
    b = [_layer(("conv1", "Conv"), ("add", "Add")), _layer(("bias", "Add"))]
    assert _rows(a, b) == [{"conv1", "add", "bias"}]
    # a lone layer touching two rows joins the first, and the two rows stay apart
    a = [_layer(("conv1", "Conv"), ("x", "Mul")), _layer(("conv2", "Conv"), ("y", "Mul"))]
    b = [_layer(("conv1", "Conv")), _layer(("conv2", "Conv")), _layer(("x", "Mul")), _layer(("y", "Mul")),
         _layer(("x", "Mul"), ("y", "Mul"))]
    rows = _rows(a, b)
    assert len(rows) == 2 and {"conv1", "x"} <= rows[0] and {"conv2", "y"} <= rows[1], rows
    # layers without weight ops on both sides: one covering two others' nodes joins the first, not both
    rows = _rows([_layer(("x", "Mul")), _layer(("y", "Mul"))], [_layer(("x", "Mul"), ("y", "Mul"))])
    assert len(rows) == 2 and {"x", "y"} in rows and {"y"} in rows, rows
