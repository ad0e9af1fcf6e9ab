"""The INT8 ceiling line (issue 32 item 2): the all-INT8 level on the recommendation's runtime, the share of its
speedup captured and what the float nodes cost, from the table's own numbers (nothing measured)."""

from __future__ import annotations

from typing import Any

from edgeopt.sweep.rank.ceiling import ceiling_line
from edgeopt.sweep.result import Int8SearchResult, Int8Trial, Recommendation
from tests.unit.sweep.test_decision_rules import level


def _rec(recipe: str, runtime: str, ms: float) -> Recommendation:
    return Recommendation(recipe=recipe, runtime=runtime, artifact=f"/x/{recipe}", retention=0.99, latency_ms=ms,
                          size_bytes=1000)


def _search(runtime: str, float_nodes: int, float_cost: dict[str, Any] | None = None,
            label: str = "latency-aware on openvino: 31 float nodes") -> Int8SearchResult:
    excluded = {"nodes_to_exclude": [f"n{i}" for i in range(float_nodes)]}
    chosen = Int8Trial(trial=3, label=label, config=excluded, retention=0.99, latency_ms=41.0,
                       passed=True, artifact="/x/t3.onnx", runtime=runtime)
    sets = {runtime: {"strategy": "grow", "float_nodes": float_nodes, **({"float_cost": float_cost} if float_cost
                                                                         else {})}}
    return Int8SearchResult(runtime=runtime, trials=[chosen], chosen=chosen, sensitivity=[], host_checks=[],
                            quantized_nodes=80, float_nodes=[], latency_cost_ms_vs_naive_int8=None, best_model=None,
                            best_model_passed=True, seconds=1.0, chosen_by_runtime={runtime: chosen},
                            float_sets=sets)


def test_the_line_says_the_ceiling_the_share_captured_and_the_float_cost():
    levels = [level("fp32", "openvino", 46.1), level("int8", "openvino", 33.4, retention=0.67, passed=False),
              level("int8-search", "openvino", 41.5, retention=0.99), level("int8", "onnxruntime", 20.0, 0.5)]
    line = ceiling_line(levels, _rec("int8-search", "openvino", 41.5), _search("openvino", 31), 0.99)
    assert line is not None
    assert "captured 36% of the INT8 speedup on openvino" in line  # (46.1 - 41.5) / (46.1 - 33.4)
    assert "1.38x over fp32" in line and "keeps only retention 0.6700" in line and "recommended 1.11x" in line
    assert "31 nodes kept in float cost 8.100 ms" in line  # 41.5 - 33.4


def test_no_line_without_both_levels_and_a_plain_note_where_int8_is_not_faster():
    assert ceiling_line([level("fp32", "openvino", 10.0)], _rec("fp32", "openvino", 10.0), None, 0.99) is None
    slower = [level("fp32", "onnxruntime", 10.0), level("int8", "onnxruntime", 12.0, retention=0.995)]
    line = ceiling_line(slower, _rec("fp32", "onnxruntime", 10.0), None, 0.99)
    assert line is not None and line.startswith("no INT8 ceiling on onnxruntime") and "not faster" in line
    fp32 = ceiling_line([level("fp32", "x", 10.0), level("int8", "x", 5.0, 0.9)], _rec("fp32", "x", 10.0), None, 0.99)
    assert fp32 is not None and fp32.startswith("captured 0% of the INT8 speedup") and "float" not in fp32


def test_where_the_runtime_defaults_to_a_lower_precision_the_line_gives_the_ceiling_over_it_too():
    """On an AMX CPU OpenVINO runs the FP32 model in bf16 by default: all-INT8 1.81x over fp32 is 1.03x over
    what the user gets with no compression (PP-OCRv4 det, session 19)."""
    levels = [level("fp32", "openvino", 29.0), level("bf16", "openvino", 16.52, retention=0.9811),
              level("int8", "openvino", 16.01, retention=0.70, passed=False),
              level("int8-search", "openvino", 19.4, retention=0.99)]
    line = ceiling_line(levels, _rec("int8-search", "openvino", 19.4), _search("openvino", 55), 0.99)
    assert line is not None and "1.81x over fp32" in line
    assert line.endswith("over bf16, openvino's default here (16.520 ms), all-INT8 is 1.03x")
    plain = ceiling_line([lv for lv in levels if lv.recipe != "bf16"], _rec("int8-search", "openvino", 19.4),
                         _search("openvino", 55), 0.99)
    assert plain is not None and "default" not in plain


def test_the_float_cost_is_split_by_the_per_layer_profile_into_float_kernels_and_the_rest():
    """The float set's profiled cost (``float_sets.<rt>.float_cost``: its nodes' per-layer gains) says how much of
    the measured cost over all-INT8 their float kernels hold; the rest is in no node's gain (the quantize steps and
    reorders where float and INT8 parts meet, layers the profile gave to no node) or noise."""
    levels = [level("fp32", "openvino", 46.1), level("int8", "openvino", 33.4, retention=0.67, passed=False),
              level("int8-search", "openvino", 41.5, retention=0.99)]
    cost = {"nodes": 31, "profiled_ms": 5.2, "costliest": {"conv_a": 1.1, "conv_b": 0.8, "conv_c": 0.5}}
    line = ceiling_line(levels, _rec("int8-search", "openvino", 41.5), _search("openvino", 31, cost), 0.99)
    assert line is not None and line.endswith(
        "31 nodes kept in float cost 8.100 ms: 5.200 ms in their float kernels by the per-layer profile (costliest: "
        "conv_a 1.10 ms, conv_b 0.80 ms, conv_c 0.50 ms), 2.900 ms in no node's gain (conversions where float and "
        "INT8 parts meet, layers given to no node, the rounds' noise)")
    over = ceiling_line(levels, _rec("int8-search", "openvino", 41.5),
                        _search("openvino", 31, {**cost, "profiled_ms": 9.0}), 0.99)
    assert over is not None and "(9.000 ms in their float kernels" in over and "0.900 ms more than measured" in over
    # another float set than the profiled one (a fallback trial), or no profile: the measured total alone
    for other in (_search("openvino", 30, cost), _search("openvino", 31, cost, label="nncf accuracy control"),
                  _search("openvino", 31)):
        plain = ceiling_line(levels, _rec("int8-search", "openvino", 41.5), other, 0.99)
        assert plain is not None and plain.endswith("nodes kept in float cost 8.100 ms"), plain
