"""Hand-counted FLOPs of pooling, normalization, elementwise and zero-cost ops."""

from __future__ import annotations

from onnx import helper

from .builders import count, model, single, tensor, weight


def test_maxpool() -> None:
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    got = count(single(node, [1, 16, 32, 32]))
    assert (got.macs, got.flops) == (0, 1 * 16 * 16 * 16 * 2 * 2)  # output elements * kernel elements


def test_global_average_pool() -> None:
    node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
    got = count(single(node, [1, 64, 7, 7]))
    assert (got.macs, got.flops) == (0, 1 * 64 * 7 * 7)  # input elements


def test_batch_normalization() -> None:
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])
    inits = [weight(name, [16]) for name in ("s", "b", "m", "v")]
    assert count(single(node, [1, 16, 8, 8], inits)).flops == 2 * 1 * 16 * 8 * 8


def test_layer_norm_and_softmax() -> None:
    ln = helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-1)
    assert count(single(ln, [2, 10, 64], [weight("s", [64])])).flops == 5 * 2 * 10 * 64
    sm = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
    assert count(single(sm, [2, 10, 64])).flops == 3 * 2 * 10 * 64


def test_relu_and_broadcast_add() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Add", ["r", "b"], ["y"])]
    m = model(nodes, [tensor("x", [1, 16, 8, 8])], [tensor("y", None)], [weight("b", [16, 1, 1])])
    got = count(m)
    assert (got.macs, got.flops) == (0, 1 * 16 * 8 * 8 + 1 * 16 * 8 * 8)  # one FLOP per output element each
    assert got.per_op["Relu"].flops == got.per_op["Add"].flops == 1 * 16 * 8 * 8


def test_reduce_mean() -> None:
    node = helper.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3])
    assert count(single(node, [1, 8, 4, 4], opset=17)).flops == 1 * 8 * 4 * 4


def test_data_movement_is_zero_and_counted() -> None:
    nodes = [
        helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
        helper.make_node("Identity", ["t"], ["y"]),
    ]
    got = count(model(nodes, [tensor("x", [3, 4])], [tensor("y", None)]))
    assert (got.macs, got.flops, got.uncounted_ops, got.unresolved_nodes) == (0, 0, [], [])


def test_unknown_op_is_uncounted_and_blocks_downstream_shapes() -> None:
    nodes = [
        helper.make_node("Mystery", ["x"], ["m"], domain="custom", name="mystery"),
        helper.make_node("Relu", ["m"], ["y"], name="after"),
    ]
    m = model(nodes, [tensor("x", [1, 4])], [tensor("y", None)], extra_opsets=[("custom", 1)])
    got = count(m)
    assert got.uncounted_ops == ["custom.Mystery"]
    assert got.unresolved_nodes == ["after"]
    assert got.flops == 0


def test_subgraph_nodes_are_reported_not_counted() -> None:
    branch = helper.make_graph([helper.make_node("Relu", ["x"], ["z"])], "branch", [], [tensor("z", [1, 4])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch, else_branch=branch, name="if")]
    m = model(nodes, [tensor("x", [1, 4]), tensor("c", [], elem=9)], [tensor("y", [1, 4])])
    got = count(m)
    assert got.subgraph_nodes == 2
    assert got.uncounted_ops == ["If", "Relu (in subgraph)"]
    assert got.flops == 0
