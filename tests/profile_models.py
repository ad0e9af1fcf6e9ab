"""Models whose per-layer costs are known by construction, for the profiling tests (built here, nothing fetched).

``big_conv``: one large 3x3 convolution (64 -> 64 channels on 56x56: ~115 M MACs) followed by six tiny ops on 64
values (pool, flatten, mul, add, relu, sigmoid). The convolution must take most of the time on any runtime.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BIG = "big_conv"
TINY = ("gap", "flat", "scale", "shift", "act", "squash")
CHANNELS, SIDE = 64, 56


def big_conv_model(path: Path) -> Path:
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array((rng.standard_normal((CHANNELS, CHANNELS, 3, 3)) * 0.05).astype(np.float32), "w"),
        numpy_helper.from_array(np.zeros(CHANNELS, np.float32), "b"),
        numpy_helper.from_array(np.full((1, CHANNELS), 0.5, np.float32), "k"),
        numpy_helper.from_array(np.full((1, CHANNELS), 0.1, np.float32), "c"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["y"], name=BIG, pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["y"], ["p"], name="gap"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("Mul", ["f", "k"], ["m"], name="scale"),
        helper.make_node("Add", ["m", "c"], ["a"], name="shift"),
        helper.make_node("Relu", ["a"], ["r"], name="act"),
        helper.make_node("Sigmoid", ["r"], ["out"], name="squash"),
    ]
    graph = helper.make_graph(nodes, "big_conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, SIDE, SIDE])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, CHANNELS])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def quantize_qdq(src: Path, dst: Path) -> Path:
    """INT8 QDQ copy of ``src`` (onnxruntime's static quantizer, calibrated on a few random inputs)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            rng = np.random.default_rng(1)
            self.items = iter([{"x": rng.standard_normal((1, CHANNELS, SIDE, SIDE)).astype(np.float32)}
                               for _ in range(4)])

        def get_next(self):  # type: ignore[no-untyped-def]
            return next(self.items, None)

    quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return dst
