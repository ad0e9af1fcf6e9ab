"""Hand-counted MACs and FLOPs of the convolution, Gemm and MatMul counters."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from edgeopt.analysis.flops import COUNTERS, register
from edgeopt.errors import EdgeoptError

from .builders import count, model, single, tensor, weight


def test_conv_with_bias() -> None:
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3])
    got = count(single(node, [1, 3, 32, 32], [weight("w", [16, 3, 3, 3]), weight("b", [16])]))
    macs = 1 * 16 * 30 * 30 * 3 * 3 * 3  # N * Cout * out H * out W * Cin * kH * kW
    assert got.macs == macs
    assert got.flops == 2 * macs + 1 * 16 * 30 * 30  # one bias add per output element


def test_grouped_conv() -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2)
    got = count(single(node, [1, 8, 16, 16], [weight("w", [16, 4, 3, 3])]))
    macs = 1 * 16 * 16 * 16 * (8 // 2) * 3 * 3
    assert (got.macs, got.flops) == (macs, 2 * macs)


def test_depthwise_conv() -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=8)
    got = count(single(node, [1, 8, 16, 16], [weight("w", [8, 1, 3, 3])]))
    assert got.macs == 1 * 8 * 16 * 16 * 1 * 3 * 3


def test_strided_padded_conv() -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[7, 7], strides=[2, 2], pads=[3, 3, 3, 3])
    got = count(single(node, [2, 3, 224, 224], [weight("w", [32, 3, 7, 7])]))
    macs = 2 * 32 * 112 * 112 * 3 * 7 * 7  # (224 + 6 - 7) // 2 + 1 = 112
    assert (got.macs, got.flops) == (macs, 2 * macs)


def test_conv_1d_and_3d() -> None:
    conv1d = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[5])
    assert count(single(conv1d, [1, 4, 50], [weight("w", [8, 4, 5])])).macs == 1 * 8 * 46 * 4 * 5
    conv3d = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3, 3])
    got = count(single(conv3d, [1, 2, 8, 8, 8], [weight("w", [4, 2, 3, 3, 3])]))
    assert got.macs == 1 * 4 * 6 * 6 * 6 * 2 * 3 * 3 * 3


def test_conv_transpose_with_bias() -> None:
    node = helper.make_node(
        "ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]
    )
    got = count(single(node, [1, 16, 8, 8], [weight("w", [16, 8, 4, 4]), weight("b", [8])]))
    macs = 1 * 16 * 8 * 8 * 8 * 4 * 4  # N * Cin * in H * in W * Cout/group * kH * kW
    assert got.macs == macs
    assert got.flops == 2 * macs + 1 * 8 * 16 * 16  # output is 1x8x16x16: (8-1)*2 - 2 + 4 = 16


def test_grouped_conv_transpose() -> None:
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3, 3], group=2)
    got = count(single(node, [1, 16, 8, 8], [weight("w", [16, 4, 3, 3])]))
    assert got.macs == 1 * 16 * 8 * 8 * 4 * 3 * 3


def test_gemm_trans_b_with_bias() -> None:
    node = helper.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1)
    got = count(single(node, [4, 256], [weight("w", [128, 256]), weight("c", [128])]))
    macs = 4 * 128 * 256  # M * N * K
    assert (got.macs, got.flops) == (macs, 2 * macs + 4 * 128)


def test_gemm_trans_a_without_bias() -> None:
    node = helper.make_node("Gemm", ["x", "w"], ["y"], transA=1)
    got = count(single(node, [256, 4], [weight("w", [256, 64])]))
    assert (got.macs, got.flops) == (4 * 64 * 256, 2 * 4 * 64 * 256)


def test_batched_matmul_with_broadcast() -> None:
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    got = count(single(node, [2, 1, 8, 32], [weight("w", [3, 32, 16])]))
    macs = 2 * 3 * 8 * 16 * 32  # broadcast batch [2, 3] * M * N * K
    assert (got.macs, got.flops) == (macs, 2 * macs)


@pytest.mark.parametrize(("x_dims", "w_dims", "expected"), [([32], [32, 16], 16 * 32), ([4, 32], [32], 4 * 32)])
def test_matmul_one_dimensional_operands(x_dims: list[int], w_dims: list[int], expected: int) -> None:
    node = helper.make_node("MatMul", ["x", "w"], ["y"])
    assert count(single(node, x_dims, [weight("w", w_dims)])).macs == expected


def test_matmul_nbits_counts_from_attributes() -> None:
    node = helper.make_node("MatMulNBits", ["x", "qw", "s"], ["y"], domain="com.microsoft", K=64, N=32)
    m = model(
        [node],
        [tensor("x", [1, 5, 64])],
        [tensor("y", [1, 5, 32])],
        [weight("qw", [32, 2, 16], dtype=np.uint8), weight("s", [64])],
        extra_opsets=[("com.microsoft", 1)],
    )
    got = count(m)
    assert got.macs == 1 * 5 * 32 * 64
    assert got.uncounted_ops == []


def test_duplicate_registration_is_an_error() -> None:
    with pytest.raises(EdgeoptError, match="registered twice"):
        register("Conv")(COUNTERS["Conv"])
