"""Pareto frontier: lower objective and higher retention are better."""

from __future__ import annotations

from collections.abc import Sequence


def pareto_indices(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of points (objective, retention) that no other point dominates, sorted by objective."""
    front = []
    for i, (x, y) in enumerate(points):
        if not any(x2 <= x and y2 >= y and (x2 < x or y2 > y) for j, (x2, y2) in enumerate(points) if j != i):
            front.append(i)
    return sorted(front, key=lambda i: (points[i][0], -points[i][1]))
