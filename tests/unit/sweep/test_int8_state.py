"""The INT8 search's typed state: fastest passing trial, most accurate trial, and its JSON shape."""

from __future__ import annotations

from edgeopt.sweep.int8.core import SearchState
from edgeopt.sweep.result import Int8SearchResult, Level


def level(retention: float, latency_ms: float, passed: bool) -> Level:
    return Level(recipe="int8-search", runtime="onnxruntime", runtime_version="1", artifact="/x.onnx", size_bytes=1,
                 latency_ms=latency_ms, latency_ms_p99=latency_ms, memory_mb_peak=None, energy_mj=None,
                 energy_source=None, metric="agreement", metric_value=retention, retention=retention,
                 meets_retention=passed, meets_budget=True, passed=passed, valid=True, cached=False)


def test_best_is_the_fastest_passing_and_closest_the_most_accurate():
    st = SearchState()
    a = st.record("default", {"op_types_to_quantize": ["Conv"]}, level(0.95, 1.0, False))
    assert st.best is None and st.closest is a and st.keeper is a
    b = st.record("entropy", {}, level(0.995, 2.0, True))
    c = st.record("x + 2 float nodes", {"nodes_to_exclude": ["n1", "n2"]}, level(0.999, 1.5, True))
    st.record("slow", {}, level(0.9999, 3.0, True))
    assert st.best is c and st.closest.label == "slow" and st.keeper is c
    assert [t.trial for t in st.trials] == [0, 1, 2, 3] and b.passed


def test_result_json_has_the_schema_of_sweep_json():
    st = SearchState()
    chosen = st.record("default", {"nodes_to_exclude": ["n"]}, level(0.99, 1.0, True))
    doc = Int8SearchResult(runtime="onnxruntime", trials=st.trials, chosen=chosen, sensitivity=[], host_checks=[],
                           quantized_nodes=0, float_nodes=["n"], latency_cost_ms_vs_naive_int8=0.0,
                           best_model="/out/best.onnx", best_model_passed=True, seconds=1.0).model_dump(mode="json")
    assert list(doc) == ["runtime", "trials", "chosen", "sensitivity", "host_checks", "quantized_nodes",
                         "float_nodes", "latency_cost_ms_vs_naive_int8", "best_model", "best_model_passed", "seconds",
                         "runtimes", "chosen_by_runtime", "float_sets",  # added by issue 14
                         "chosen_low_precision_by_runtime", "low_precision_float_sets",  # issue 21
                         "skipped_runtimes",  # issue 21, session 7
                         "range_repair", "nncf_repairs", "layers_by_runtime",  # issue 32
                         "cost_gate", "phase_seconds",  # issue 32, the cost gate
                         "work"]  # issue 32, faster search
    assert list(doc["chosen"]) == ["trial", "label", "config", "retention", "latency_ms", "passed", "artifact",
                                   "runtime", "precision"]
