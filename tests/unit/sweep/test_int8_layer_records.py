"""The adopted INT8 config's per-layer rows (sweep.int8.repair_step.layer_records): each float node says why."""

from __future__ import annotations

from edgeopt.sweep.int8.repair_step import layer_records


def test_a_float_node_gets_the_config_reason_and_its_own() -> None:
    cfg = {"op_types_to_quantize": ["Conv"], "nodes_to_exclude": ["conv_a", "conv_b"]}
    rows = layer_records(None, cfg, None, "kept in float by grow on openvino",
                         {"conv_a": "tried in INT8 and refused: the threshold failed with it"})
    assert [(r["node"], r["repair"]) for r in rows] == [("conv_a", "float"), ("conv_b", "float")]
    assert rows[0]["why"] == ("kept in float by grow on openvino: tried in INT8 and refused: the threshold failed "
                              "with it")
    assert rows[1]["why"] == "kept in float by grow on openvino", "a node without its own reason keeps the config's"
    assert layer_records(None, cfg, None, "kept in float by narrow on openvino") == [
        {"node": n, "repair": "float", "tensors": [], "why": "kept in float by narrow on openvino"}
        for n in ("conv_a", "conv_b")]
