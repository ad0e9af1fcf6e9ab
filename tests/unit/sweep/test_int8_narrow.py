"""The host-side narrowing of the INT8 search: smallest passing prefix, then pruned, within its budget."""

from __future__ import annotations

from edgeopt.sweep.int8.steps import narrow, variants

RANKING = [f"n{i}" for i in range(20)]


def test_smallest_prefix_then_pruned() -> None:
    needed = {"n0", "n5", "n9"}  # passes iff these three stay float; n9 is 10th in the ranking
    calls: list[list[str]] = []

    def passes(nodes: list[str]) -> bool:
        calls.append(nodes)
        return needed <= set(nodes)

    pruned, prefix = narrow(RANKING, passes, lambda: True)
    assert prefix == RANKING[:10], "bisection stops at the shortest passing prefix"
    assert set(pruned) == needed, "nodes not needed are quantized again"
    assert [len(c) for c in calls[:5]] == [1, 2, 4, 8, 16], "doubling first"


def test_prefix_already_minimal_gives_one_candidate() -> None:
    assert narrow(RANKING, lambda nodes: {"n0", "n1"} <= set(nodes), lambda: True) == [["n0", "n1"]]


def test_nothing_passes_gives_no_candidate() -> None:
    seen: list[int] = []
    assert narrow(RANKING, lambda nodes: seen.append(len(nodes)) is not None, lambda: True) == []
    assert seen[-1] == len(RANKING), "the whole ranking is tried before giving up"


def test_budget_stops_the_search() -> None:
    calls: list[int] = []

    def passes(nodes: list[str]) -> bool:
        calls.append(len(nodes))
        return False

    assert narrow(RANKING, passes, lambda: len(calls) < 2) == []
    assert calls == [1, 2]


def test_variants_flip_the_targets_reduce_range() -> None:
    assert ("reduce_range=False", {"reduce_range": False}) in variants(True)
    assert ("reduce_range=True", {"reduce_range": True}) in variants(False)
    assert variants(True)[0] == ("default", {})
