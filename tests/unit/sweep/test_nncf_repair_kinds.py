"""Which of NNCF's repairs the INT8 search builds (:func:`edgeopt.sweep.int8.nncf_repair.try_repairs`), with the
builds replaced by their measured outcomes: PP-OCRv4 det's (plain min-max INT8 0.684 on the host, NNCF's fast bias
correction 0.733, threshold 0.99), a model whose biases are the problem, and a repair its bound rules out
(:mod:`edgeopt.sweep.int8.repair_bounds`, tested on real quantized nets in ``test_repair_bounds.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from edgeopt.sweep.int8.nncf_repair import NncfRepair, try_repairs

FAST = NncfRepair("fast_bias_correction", "defaults", {}, kind="bias")
QUANTILE = NncfRepair("range_mean_quantile", "ranges", {"range_estimator": "mean_quantile"}, 3.3, kind="ranges")
FULL = NncfRepair("bias_correction", "full bias correction", {"fast_bias_correction": False}, 1.5, kind="bias")


def _builds(outcomes: dict[str, float], built: list[str]) -> Callable[[NncfRepair], tuple[Path, float, float]]:
    def build(rep: NncfRepair) -> tuple[Path, float, float]:
        built.append(rep.name)
        return Path(f"{rep.name}.xml"), 10.0, outcomes[rep.name]
    return build


def test_a_bias_repair_that_barely_helped_rules_out_the_costlier_one() -> None:
    built: list[str] = []
    rows, winner = try_repairs([FAST, FULL], _builds({"fast_bias_correction": 0.733, "bias_correction": 0.733}, built),
                               0.99, baseline=0.684, allowance_s=100)
    assert winner is None and built == ["fast_bias_correction"]
    assert rows[1]["not_tried"].startswith("fast_bias_correction closed 16% of the gap between plain min-max INT8 "
                                           "(0.6840) and the threshold 0.99 (under 25%)"), rows[1]
    # another kind of repair is still tried: the rule speaks only for its own kind
    built.clear()
    rows, _ = try_repairs([FAST, QUANTILE, FULL], _builds({"fast_bias_correction": 0.733, "range_mean_quantile": 0.7,
                                                            "bias_correction": 0.733}, built),
                          0.99, baseline=0.684, allowance_s=1000)
    assert built == ["fast_bias_correction", "range_mean_quantile"] and "not_tried" in rows[2]


def test_a_bias_repair_that_closed_most_of_the_gap_goes_on_and_no_baseline_rules_nothing_out() -> None:
    built: list[str] = []
    _, winner = try_repairs([FAST, FULL], _builds({"fast_bias_correction": 0.90, "bias_correction": 0.995}, built),
                            0.99, baseline=0.684, allowance_s=100)
    assert built == ["fast_bias_correction", "bias_correction"]
    assert winner is not None and winner[0].name == "bias_correction"
    built.clear()
    try_repairs([FAST, FULL], _builds({"fast_bias_correction": 0.733, "bias_correction": 0.733}, built), 0.99,
                allowance_s=100)
    assert built == ["fast_bias_correction", "bias_correction"], "without min-max's retention there is no gap to read"


SMOOTH = NncfRepair("smooth_quant", "SmoothQuant", {"smooth_quant": True}, 1.2, kind="smoothing")


def test_a_repair_its_bound_rules_out_is_not_built() -> None:
    built: list[str] = []
    why = "with its 13 quantized MatMuls in float (the rest INT8) the host keeps 0.9625 < 0.99"
    rows, winner = try_repairs([FAST, SMOOTH], _builds({"fast_bias_correction": 0.961, "smooth_quant": 0.995}, built),
                               0.99, baseline=0.9625, allowance_s=100,
                               cannot_pass=lambda rep: why if rep.kind == "smoothing" else None)
    assert winner is None and built == ["fast_bias_correction"]
    assert rows[1]["not_tried"] == why and "cpu_seconds" not in rows[1]
