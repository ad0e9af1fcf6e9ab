"""Which runtimes' INT8 search is skipped: their full INT8 model is already clearly slower than a passing level
(issue 21, "fast enough": the search's device trials are the slowest part of a detector's sweep)."""

from __future__ import annotations

from functools import partial

from edgeopt.sweep.int8.latency import HOPELESS_RATIO, hopeless_runtimes
from tests.unit.sweep.level_kit import level

_lv = partial(level, failed_retention=0.9)  # a failing level's retention


def test_a_runtime_whose_full_int8_is_far_slower_than_a_passing_level_is_skipped_with_its_reason() -> None:
    # PP-OCRv4 rec on the Xeon: int8@onnxruntime ~12 ms, fp32@openvino (passes) ~7 ms, int8@openvino ~5.5 ms
    levels = [_lv("fp32", "openvino", 7.3, passed=True), _lv("int8", "onnxruntime", 12.2, passed=False),
              _lv("int8", "openvino", 5.5, passed=False), _lv("int8+bf16", "openvino", 4.9, passed=False)]
    skip = hopeless_runtimes(levels, ["onnxruntime", "openvino"])
    assert list(skip) == ["onnxruntime"]
    assert "int8 search on onnxruntime skipped" in skip["onnxruntime"] and "fp32@openvino" in skip["onnxruntime"]
    assert "1.67x slower" in skip["onnxruntime"]


def test_the_fastest_plain_int8_of_a_runtime_counts_its_low_precision_level() -> None:
    levels = [_lv("bf16", "openvino", 2.0, passed=True), _lv("int8", "openvino", 6.0, passed=False),
              _lv("int8+bf16", "openvino", 2.4, passed=False)]
    assert hopeless_runtimes(levels, ["openvino"]) == {}  # int8+bf16 is within reach of bf16
    assert list(hopeless_runtimes(levels[:2], ["openvino"])) == ["openvino"]


def test_noise_and_single_runs_decide_nothing() -> None:
    edge = 2.0 * HOPELESS_RATIO * 1.05 / 0.95  # just past the rule with 5 % intervals
    tight = [_lv("fp32", "openvino", 2.0, passed=True), _lv("int8", "onnxruntime", edge * 1.01, passed=False)]
    assert list(hopeless_runtimes(tight, ["onnxruntime"])) == ["onnxruntime"]
    wide = [_lv("fp32", "openvino", 2.0, passed=True, spread=0.4),
            _lv("int8", "onnxruntime", edge * 1.01, passed=False, spread=0.4)]
    assert hopeless_runtimes(wide, ["onnxruntime"]) == {}  # the intervals overlap the margin: search
    single = [_lv("fp32", "openvino", 1.0, passed=True), _lv("int8", "onnxruntime", 5.0, passed=False, confirmed=False)]
    tiny = [_lv("fp32", "openvino", 0.03, passed=True), _lv("int8", "onnxruntime", 0.5, passed=False)]
    assert hopeless_runtimes(tiny, ["onnxruntime"]) == {}  # sub-ms: QDQ overhead dominates, a mix can beat full INT8
    assert hopeless_runtimes(single, ["onnxruntime"]) == {}
    nothing_passes = [_lv("fp32", "openvino", 1.0, passed=False), _lv("int8", "onnxruntime", 5.0, passed=False)]
    assert hopeless_runtimes(nothing_passes, ["onnxruntime"]) == {}
