"""The INT8 ceiling line (issue 32 item 2): the all-INT8 level on the recommendation's runtime, the share of its
speedup captured and what the float nodes cost, from the table's own numbers (nothing measured)."""

from __future__ import annotations

from edgeopt.sweep.rank.ceiling import ceiling_line
from edgeopt.sweep.result import Int8SearchResult, Int8Trial, Recommendation
from tests.unit.sweep.test_decision_rules import level


def _rec(recipe: str, runtime: str, ms: float) -> Recommendation:
    return Recommendation(recipe=recipe, runtime=runtime, artifact=f"/x/{recipe}", retention=0.99, latency_ms=ms,
                          size_bytes=1000)


def _search(runtime: str, float_nodes: int) -> Int8SearchResult:
    excluded = {"nodes_to_exclude": [f"n{i}" for i in range(float_nodes)]}
    chosen = Int8Trial(trial=3, label="latency-aware", config=excluded, retention=0.99, latency_ms=41.0,
                       passed=True, artifact="/x/t3.onnx", runtime=runtime)
    return Int8SearchResult(runtime=runtime, trials=[chosen], chosen=chosen, sensitivity=[], host_checks=[],
                            quantized_nodes=80, float_nodes=[], latency_cost_ms_vs_naive_int8=None, best_model=None,
                            best_model_passed=True, seconds=1.0, chosen_by_runtime={runtime: chosen})


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
