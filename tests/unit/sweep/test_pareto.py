from __future__ import annotations

from edgeopt.sweep import pareto_indices


def test_pareto_keeps_non_dominated_sorted_by_objective() -> None:
    pts = [(10.0, 1.0), (5.0, 0.99), (6.0, 0.98), (2.0, 0.5), (5.0, 0.97)]
    assert pareto_indices(pts) == [3, 1, 0]


def test_pareto_single_and_ties() -> None:
    assert pareto_indices([(1.0, 1.0)]) == [0]
    assert pareto_indices([(1.0, 1.0), (1.0, 1.0)]) == [0, 1]
