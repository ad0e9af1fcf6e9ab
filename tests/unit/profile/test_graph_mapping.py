"""Mapping runtime layers back to ONNX nodes, on real ONNX graphs with the layer lists the runtimes report."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.profile.graph import load_graph
from edgeopt.profile.join import join_layers
from edgeopt.profile.mapping import map_layers
from edgeopt.profile.schema import LayerOrigin
from edgeopt_agent.runtimes.layer_events import layer_event
from tests.conftest import make_matmul_model
from tests.profile_models import big_conv_model, quantize_qdq


def _layer(name: str, us: float, *, op: str = "Op", names: list[str] | None = None, index: int | None = None,
           executed: bool = True, precision: str = "fp32") -> dict:
    event = layer_event(name, op_type=op, impl="k", provider="CPU", precision=precision, duration_us=us,
                        original_names=names, node_index=index, executed=executed)
    return {**event, "median_us": us, "p90_us": us, "mean_us": us, "share": 0.0, "calls": 1, "order": 0}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("graphs")
    fp32 = big_conv_model(root / "big.onnx")
    return fp32, quantize_qdq(fp32, root / "big.int8.onnx")


def test_resolve_names_as_runtimes_write_them(models):
    g = load_graph(models[0])
    label = {i: n.label for i, n in enumerate(g.nodes)}
    assert label[g.resolve("big_conv")] == "big_conv"  # node name
    assert label[g.resolve("y_nchwc")] == "big_conv"  # ORT: output tensor + suffix
    assert label[g.resolve("big_conv_token_12")] == "big_conv"  # ORT: node name + token
    assert label[g.resolve("big_conv/WithoutBiases")] == "big_conv"  # OpenVINO
    assert label[g.resolve("node_of_out")] == "squash"  # TensorRT, unnamed source node
    assert g.resolve("ReorderOutput") is None and g.resolve("Transpose_token_3") is None


def test_costs_and_qdq_detection(models):
    g = load_graph(models[0])
    conv = g.nodes[g.resolve("big_conv")]
    assert conv.macs == 64 * 64 * 9 * 56 * 56 and conv.flops > 2 * conv.macs - 1
    conv_bytes = g.boundary_bytes([conv.index])
    assert conv_bytes == 4 * (2 * 64 * 56 * 56 + 64 * 64 * 9 + 64)  # input, output, weights, bias in fp32
    q = load_graph(models[1])
    assert q.quantized(q.resolve("big_conv")) and not q.quantized(q.resolve("x_QuantizeLinear"))
    assert q.boundary_bytes([q.resolve("big_conv")]) > 0


def test_ort_fused_layers_cover_their_nodes_and_inserted_reorders_none(models):
    g = load_graph(models[0])
    layers = [_layer("ReorderInput", 5, op="ReorderInput"), _layer("y_nchwc", 900, op="Conv"),
              _layer("p_nchwc", 10, op="GlobalAveragePool"), _layer("ReorderOutput", 3, op="ReorderOutput"),
              _layer("flat", 2, op="Flatten", index=2), _layer("scale", 2, op="Mul", index=3),
              _layer("shift", 2, op="Add", index=4), _layer("act", 2, op="Relu", index=5),
              _layer("squash", 2, op="Sigmoid", index=6)]
    records, unmapped = join_layers(layers, g, None)
    by = {r.kernel: r for r in records}
    assert records[0].kernel == "y_nchwc" and by["y_nchwc"].onnx_nodes == ["big_conv"]
    assert by["y_nchwc"].flops == g.nodes[0].flops and by["y_nchwc"].achieved_gops > 0
    assert by["ReorderInput"].origin is LayerOrigin.INSERTED and by["ReorderInput"].onnx_nodes == []
    assert by["p_nchwc"].onnx_nodes == ["gap"] and unmapped == []


def test_openvino_original_names_and_fused_subgraphs(models):
    g = load_graph(models[1])
    layers = [_layer("x_QuantizeLinear", 50, op="Subgraph", names=["x_QuantizeLinear"]),
              _layer("x_reorder", 60, op="Reorder", names=[]),
              _layer("big_conv/WithoutBiases", 600, op="Convolution", precision="int8",
                     names=["big_conv/WithoutBiases", "Multiply_123", "big_conv", "y_QuantizeLinear"]),
              _layer("gap", 10, op="Reduce", names=["gap"], precision="int8"),
              _layer("flat", 0, op="Reshape", names=["flat"], executed=False),
              _layer("out", 5, op="Subgraph", names=["scale", "shift", "out_QuantizeLinear"]),
              _layer("Convert_77", 1, op="Convert", names=["Convert_77"])]
    cover = map_layers(layers, g)
    names = [[g.nodes[i].label for i in c] for c in cover.covered]
    conv = set(names[2])
    assert {"big_conv", "y_QuantizeLinear", "w_DequantizeLinear", "b_DequantizeLinear", "x_DequantizeLinear"} <= conv
    assert names[1] == [] and names[6] == []  # the plugin's reorder and convert cover no ONNX node
    assert {"scale", "shift", "squash", "r_DequantizeLinear"} <= set(names[5])  # fused into OpenVINO's Subgraph
    assert "flat" in names[4]  # a layer that did not run still covers its node (Reshape in place)
    assert cover.unmapped_nodes == []
    records, _ = join_layers(layers, g, None)
    conv_record = next(r for r in records if r.kernel == "big_conv/WithoutBiases")
    assert conv_record.quantized_in_onnx and conv_record.primary_op == "Conv"
    assert {r.kernel: r.origin for r in records}["Convert_77"] is LayerOrigin.INSERTED


def test_unnamed_nodes_map_through_ort_node_index(tmp_path):
    g = load_graph(make_matmul_model(tmp_path / "mm.onnx"))
    assert g.nodes[0].label == "MatMul#0"
    cover = map_layers([_layer("", 7, op="MatMul", index=0)], g)
    assert cover.covered == [[0]]
    cover = map_layers([_layer("", 7, op="Gemm", index=0)], g)  # a node_index whose type does not match: not it
    assert cover.covered == [[]] and cover.unmapped_nodes == [0]


def _bn_chain(path: Path) -> Path:
    """x -> conv_a -> bn_a_mul -> bn_a_add -> relu_a -> conv_b -> bn_b_mul -> bn_b_add -> relu_b -> y: two convs,
    each followed by a BatchNorm written as Mul and Add (as paddle2onnx writes PP-OCR's)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, shape: tuple[int, ...]) -> onnx.TensorProto:
        return numpy_helper.from_array(np.full(shape, 0.5, dtype=np.float32), name)

    nodes, inits, x = [], [], "x"
    for s in ("a", "b"):
        inits += [const(f"w_{s}", (8, 8, 3, 3)), const(f"k_{s}", (1, 8, 1, 1)), const(f"c_{s}", (1, 8, 1, 1))]
        nodes += [helper.make_node("Conv", [x, f"w_{s}"], [f"t_{s}"], name=f"conv_{s}", pads=[1, 1, 1, 1]),
                  helper.make_node("Mul", [f"t_{s}", f"k_{s}"], [f"m_{s}"], name=f"bn_{s}_mul"),
                  helper.make_node("Add", [f"m_{s}", f"c_{s}"], [f"n_{s}"], name=f"bn_{s}_add"),
                  helper.make_node("Relu", [f"n_{s}"], [f"r_{s}"], name=f"relu_{s}")]
        x = f"r_{s}"
    shape = [1, 8, 16, 16]
    graph = helper.make_graph(nodes, "bn_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, shape)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_conv_whose_layer_openvino_named_after_its_folded_batchnorm_maps_to_that_layer(tmp_path):
    """OpenVINO folds a BatchNorm's Mul into the conv before it and names the fused layer after that Mul
    (``Multiply_13093``), listing only the ops after it: neither the conv nor the Mul is named. The conv belongs to
    the layer its output reaches past the Mul, not to the layer before it (PP-OCRv4 rec, session 22: each depthwise
    conv was charged the time of the 1x1 conv before it, so the INT8 search ranked the wrong convs)."""
    g = load_graph(_bn_chain(tmp_path / "bn.onnx"))
    layers = [_layer("Multiply_11", 300, op="Convolution", names=["Multiply_11", "bn_a_add", "relu_a"]),
              _layer("Multiply_22", 100, op="Convolution", names=["Multiply_22", "bn_b_add", "relu_b"])]
    names = [sorted(g.nodes[i].label for i in c) for c in map_layers(layers, g).covered]
    assert names == [["bn_a_add", "bn_a_mul", "conv_a", "relu_a"], ["bn_b_add", "bn_b_mul", "conv_b", "relu_b"]]
