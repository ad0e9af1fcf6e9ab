"""A MobileNet-v1-style CNN in plain ONNX: conv stem, depthwise-separable blocks, pooling, classifier."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mobilenet_like(
    *, image_size: int = 224, width: int = 32, blocks: int = 6, classes: int = 1000, seed: int = 0,
    dynamic_batch: bool = True,
) -> onnx.ModelProto:
    """Build the model.

    Args:
        image_size: height and width of the NCHW float32 input.
        width: channels of the stem; every second block doubles them and halves the resolution.
        blocks: depthwise-separable blocks after the stem.
        classes: outputs of the final Gemm.
        seed: seed of the He-initialised random weights.
        dynamic_batch: make the batch axis symbolic ("N").
    """
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []
    nodes: list[onnx.NodeProto] = []

    def weight(name: str, shape: tuple[int, ...], fan_in: int) -> str:
        w = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name))
        return name

    def conv(x: str, cin: int, cout: int, k: int, stride: int, group: int, name: str) -> str:
        w = weight(f"{name}.w", (cout, cin // group, k, k), (cin // group) * k * k)
        b = weight(f"{name}.b", (cout,), cout)
        nodes.append(helper.make_node(
            "Conv", [x, w, b], [f"{name}.y"], name=name, kernel_shape=[k, k], strides=[stride, stride],
            pads=[k // 2] * 4, group=group))
        nodes.append(helper.make_node("Relu", [f"{name}.y"], [f"{name}.r"], name=f"{name}.relu"))
        return f"{name}.r"

    x = conv("input", 3, width, 3, 2, 1, "stem")
    channels = width
    for i in range(blocks):
        stride = 2 if i % 2 == 1 else 1
        out_channels = channels * 2 if i % 2 == 1 else channels
        x = conv(x, channels, channels, 3, stride, channels, f"b{i}.dw")
        x = conv(x, channels, out_channels, 1, 1, 1, f"b{i}.pw")
        channels = out_channels
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten", axis=1))
    fc_w = weight("fc.w", (classes, channels), channels)
    fc_b = weight("fc.b", (classes,), classes)
    nodes.append(helper.make_node("Gemm", ["flat", fc_w, fc_b], ["logits"], name="fc", transB=1))
    batch: int | str = "N" if dynamic_batch else 1
    graph = helper.make_graph(
        nodes, "mobilenet_like",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, 3, image_size, image_size])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="edgeopt.zoo")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
