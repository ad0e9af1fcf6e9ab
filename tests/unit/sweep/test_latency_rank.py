"""Latency-aware float sets: per-layer times mapped to ONNX nodes, free nodes first, cheapest float set kept."""

from __future__ import annotations

from typing import Any

import pytest

from edgeopt.errors import InputError
from edgeopt.sweep.int8.float_sets import (
    choose_float_set,
    grow_int8_set,
    narrow_float_set,
    quantize_order,
    rank_for_float,
)
from edgeopt.sweep.int8.node_gains import float_cost, latency_gain, node_times


def ev(name: str, op: str, us: float, *orig: str, executed: bool = True) -> dict[str, Any]:
    return {"name": name, "op_type": op, "impl": "x", "original_names": list(orig) or [name], "duration_us": us,
            "executed": executed}


# The float model: OpenVINO renamed conv2 after a fused Multiply (its ONNX name is gone); conv1/fc keep theirs.
FLOAT = [ev("conv1/WithoutBiases", "Convolution", 400, "conv1/WithoutBiases", "conv1", "relu1"),
         ev("Multiply_7", "GroupConvolution", 100, "Multiply_7", "Add_3"),
         ev("reorder", "Reorder", 50, executed=True),
         ev("Multiply_9", "Convolution", 900, "Multiply_9"),
         ev("fc", "FullyConnected", 300, "fc"),
         ev("skipped", "Convolution", 999, "conv1", executed=False)]
INT8 = [ev("conv1/WithoutBiases", "Convolution", 100, "conv1/WithoutBiases", "conv1", "q1_QuantizeLinear"),
        ev("conv2/WithoutBiases", "GroupConvolution", 120, "conv2/WithoutBiases", "conv2"),
        ev("conv3/WithoutBiases", "Convolution", 200, "conv3/WithoutBiases", "conv3"),
        ev("fc", "FullyConnected", 80, "fc", "fc/DequantizationMultiply"),
        ev("subgraph", "Subgraph", 40, "Convert_1", "Subtract_2")]
NODES = ["conv1", "conv2", "conv3", "fc"]


def test_node_times_by_name_split_and_unmapped() -> None:
    t = node_times(FLOAT, NODES)
    assert t.ms == {"conv1": pytest.approx(0.4), "fc": pytest.approx(0.3)}  # not-executed layer ignored
    assert [u[0] for u in t.unmapped] == ["Multiply_7", "Multiply_9"]
    shared = node_times([ev("fused", "Convolution", 300, "conv1", "conv3")], NODES)
    assert shared.ms == {"conv1": pytest.approx(0.15), "conv3": pytest.approx(0.15)}


def test_gain_uses_execution_order_for_renamed_layers() -> None:
    gain = latency_gain(FLOAT, INT8, NODES)
    assert gain == {"conv1": pytest.approx(0.3), "conv2": pytest.approx(-0.02), "conv3": pytest.approx(0.7),
                    "fc": pytest.approx(0.22)}


def test_float_cost_sums_the_float_nodes_gains_and_names_the_costliest() -> None:
    """A float set's cost by the profile: its nodes' gains (an INT8 kernel slower than float counts 0), the three
    costliest named; nodes the set does not hold are not counted."""
    gain = {"a": 0.5, "b": 1.25, "c": -0.2, "d": 0.003, "e": 0.75, "f": 2.0}
    cost = float_cost(["a", "b", "c", "d", "e"], gain)
    assert cost == {"nodes": 5, "profiled_ms": 2.503, "costliest": {"b": 1.25, "e": 0.75, "a": 0.5}}
    assert list(cost["costliest"]) == ["b", "e", "a"], "costliest first"
    assert float_cost(["c"], gain) == {"nodes": 1, "profiled_ms": 0.0, "costliest": {}}


def test_free_nodes_first_then_accuracy_per_ms() -> None:
    gain = {"conv1": 0.3, "conv2": -0.02, "conv3": 0.7, "fc": 0.22}
    sens = {"conv1": 0.03, "conv2": 0.001, "conv3": 0.035, "fc": 0.02}
    # conv2 is free (INT8 slower); then conv1 (0.1/ms), fc (0.09/ms), conv3 (0.05/ms): conv3 is the most sensitive
    # node but the most expensive to keep in float
    assert rank_for_float(sens, gain) == ["conv2", "conv1", "fc", "conv3"]
    with pytest.raises(InputError, match="no node sensitivity"):
        rank_for_float({}, gain)


def needs_c_and_b_or_d(fs: list[str]) -> bool:
    return "c" in fs and ("b" in fs or "d" in fs)


def test_narrow_finds_the_smallest_passing_prefix() -> None:
    gain = {"a": 0.0, "b": 0.5, "c": 0.1, "d": 0.4}
    assert narrow_float_set(["a", "b", "c", "d"], needs_c_and_b_or_d, gain_ms=gain) == [["a", "b", "c"]]
    assert narrow_float_set(["a", "b"], lambda fs: False) == []


def test_narrow_puts_the_most_expensive_node_back_first() -> None:
    gain = {"b": 0.5, "c": 0.1, "d": 0.4}
    # prefix [b, d, c]; b (0.5 ms) goes back to INT8 first and d (0.4 ms) stays: 0.5 ms of float, where putting
    # back the least sensitive node first (d) would keep b: 0.6 ms
    assert narrow_float_set(["b", "d", "c"], needs_c_and_b_or_d, gain_ms=gain) == [["d", "c"], ["b", "d", "c"]]


def test_narrow_stops_when_the_budget_is_spent() -> None:
    calls: list[list[str]] = []

    def passes(fs: list[str]) -> bool:
        calls.append(fs)
        return True

    assert narrow_float_set(["a", "b"], passes, budget=lambda: len(calls) < 1) == [["a"]]
    assert len(calls) == 1


def test_narrow_bounds_the_put_backs_to_the_most_expensive() -> None:
    gain = {"a": 0.3, "b": 0.5, "c": 0.1, "d": 0.2}
    tried: list[list[str]] = []

    def passes(fs: list[str]) -> bool:
        tried.append(fs)
        return "c" in fs

    sets = narrow_float_set(["a", "b", "c", "d"], passes, gain_ms=gain, max_putbacks=1)
    assert sets == [["a", "c"], ["a", "b", "c"]]  # only b (0.5 ms), the most expensive, was put back
    assert tried[-1] == ["a", "c"]
    assert narrow_float_set(["a", "b", "c", "d"], passes, gain_ms=gain) == [["c"], ["a", "b", "c"]]


def test_quantize_order_time_saved_per_accuracy_lost() -> None:
    gain = {"a": 0.5, "b": 0.4, "c": 0.001, "d": 0.2}
    sens = {"a": 0.05, "b": 0.001, "c": 0.0, "d": 0.002}
    assert quantize_order(None, gain) == ["a", "b", "d"]  # c saves nothing: never tried
    assert quantize_order(sens, gain) == ["b", "d", "a"]  # b: 400 ms per unit lost, d: 100, a: 10


def test_grow_keeps_each_node_only_while_the_threshold_holds() -> None:
    nodes = ["a", "b", "c", "d"]
    tried: list[list[str]] = []

    def passes(float_nodes: list[str]) -> bool:  # a and d cannot both be INT8
        tried.append(float_nodes)
        return not ({"a", "d"} <= set(nodes) - set(float_nodes))

    assert grow_int8_set(["a", "b", "d"], nodes, passes) == ["c", "d"]
    assert tried == [["b", "c", "d"], ["c", "d"], ["c"]]
    assert grow_int8_set(["a", "b", "d"], nodes, passes, max_tries=1) == ["b", "c", "d"]
    assert grow_int8_set(["a"], nodes, lambda fs: False) == nodes


def test_choose_narrows_when_a_few_nodes_carry_the_error() -> None:
    nodes = [f"n{i}" for i in range(8)]
    gain = {n: 0.1 * (i + 1) for i, n in enumerate(nodes)}
    sens = {n: (0.5 if n == "n5" else 0.001) for n in nodes}
    choice = choose_float_set(nodes, gain, lambda fs: "n5" in fs, sensitivity=sens)
    assert choice.strategy == "narrow" and choice.float_nodes == ["n5"], choice
    assert choice.evaluations <= 24


def test_choose_grows_when_the_error_is_spread_out() -> None:
    nodes = [f"n{i}" for i in range(8)]
    gain = {n: 0.1 * (i + 1) for i, n in enumerate(nodes)}

    def passes(fs: list[str]) -> bool:  # any 2 nodes in INT8 are fine, 3 are not
        return len(nodes) - len(fs) <= 2

    choice = choose_float_set(nodes, gain, passes, max_evaluations=12)
    assert choice.strategy == "grow"
    assert set(nodes) - set(choice.float_nodes) == {"n7", "n6"}  # the two that save the most time
    assert choice.evaluations <= 12
    none = choose_float_set(nodes, gain, lambda fs: False, max_evaluations=6)
    assert none.strategy == "none" and none.float_nodes == nodes and none.evaluations == 6


def test_narrowing_that_cannot_work_costs_one_evaluation() -> None:
    """Half the nodes in float failing ends narrowing: no smaller prefix of the same ranking is evaluated (the
    doubling used to try 1, 2 and 4 float nodes first), so the evaluations go to growing."""
    nodes = [f"n{i}" for i in range(8)]
    gain = {n: 0.1 * (i + 1) for i, n in enumerate(nodes)}
    tried: list[list[str]] = []

    def passes(fs: list[str]) -> bool:  # any 2 nodes in INT8 are fine, 3 are not
        tried.append(fs)
        return len(nodes) - len(fs) <= 2

    choice = choose_float_set(nodes, gain, passes, max_evaluations=12)
    assert choice.strategy == "grow"
    assert len(tried[0]) == 4 and all(len(fs) > 4 for fs in tried[1:]), tried
    assert choice.evaluations == len(tried) == len({tuple(fs) for fs in tried})
