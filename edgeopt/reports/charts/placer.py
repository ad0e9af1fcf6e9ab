"""Greedy label placement: each label goes to the first candidate position around its point that collides with
nothing already placed, nearest positions first, then farther ones joined to the point by a leader line.

A label with no free position is not drawn over another: the caller numbers the point instead (a short label the
placer tries again) and lists the name in a key beside the chart (:func:`edgeopt.reports.charts.points.label_points`).
Obstacles (points, drawn lines' labels, a key) are boxes the labels keep clear of.
"""

from __future__ import annotations

from dataclasses import dataclass

from .text import ASCENT, DESCENT, Box, text_box

GAP = 3.0  # px between a point's edge and its label
RINGS = (0.0, 10.0, 22.0, 38.0, 58.0)  # extra distance of each ring of candidates; beyond the first: leader line
FAR_RINGS = (*RINGS, 84.0, 116.0, 156.0)  # for a point's number, the last resort before the key alone
# (dx, dy) unit directions, in the order tried: right, left, above, below, then the diagonals
DIRECTIONS = ((1, 0), (-1, 0), (0, -1), (0, 1), (1, -1), (1, 1), (-1, -1), (-1, 1))


@dataclass(frozen=True)
class Placed:
    """Where a label is drawn: baseline position, ``text-anchor``, its box, and a leader line when it is away from
    its point (``(x1, y1, x2, y2)``)."""

    x: float
    y: float
    anchor: str
    box: Box
    leader: tuple[float, float, float, float] | None = None


class Placer:
    """Places labels inside ``bounds`` so no two labels, and no label and obstacle, overlap (``pad`` apart)."""

    def __init__(self, bounds: Box, obstacles: list[Box] | None = None, pad: float = 1.5) -> None:
        self.bounds = bounds
        self.taken: list[Box] = list(obstacles or [])
        self.pad = pad

    def free(self, box: Box) -> bool:
        """Inside the bounds and clear of everything placed so far."""
        return box.inside(self.bounds) and not any(box.intersects(t, self.pad) for t in self.taken)

    def reserve(self, box: Box) -> None:
        """Keep later labels away from ``box`` (a fixed label, a point, a key)."""
        self.taken.append(box)

    def fixed(self, x: float, y: float, text: str, size: float, anchor: str = "start") -> Placed | None:
        """Take exactly this position if it is free (a label whose place is its meaning, e.g. an axis marker)."""
        box = text_box(x, y, text, size, anchor)
        if not self.free(box):
            return None
        self.reserve(box)
        return Placed(x, y, anchor, box)

    def place(self, px: float, py: float, text: str, size: float, radius: float = 0.0,
              rings: tuple[float, ...] = RINGS, bold: bool = False) -> Placed | None:
        """The first free position of ``text`` around the point ``(px, py)``, trying each ring of ``rings`` (extra
        distances) in turn; None when every candidate collides."""
        for ring in rings:
            d = radius + GAP + ring
            for dx, dy in DIRECTIONS:
                x, y, anchor = _candidate(px, py, dx, dy, d, size)
                box = text_box(x, y, text, size, anchor, bold)
                if self.free(box):
                    self.reserve(box)
                    leader = _leader(px, py, radius, box) if ring else None
                    return Placed(x, y, anchor, box, leader)
        return None


def _candidate(px: float, py: float, dx: int, dy: int, d: float, size: float) -> tuple[float, float, str]:
    """Baseline and anchor of a label ``d`` px from the point in direction ``(dx, dy)``."""
    diag = 0.75 if dx and dy else 1.0
    anchor = "start" if dx > 0 else "end" if dx < 0 else "middle"
    x = px + dx * d * diag
    if dy < 0:
        y = py - d * diag - DESCENT * size
    elif dy > 0:
        y = py + d * diag + ASCENT * size
    else:
        y = py + (ASCENT - DESCENT) / 2 * size
    return x, y, anchor


def _leader(px: float, py: float, radius: float, box: Box) -> tuple[float, float, float, float]:
    """A line from the point's edge to the nearest point of the label's box."""
    qx, qy = min(max(px, box.x0), box.x1), min(max(py, box.y0), box.y1)
    dist = max(((qx - px) ** 2 + (qy - py) ** 2) ** 0.5, 1e-9)
    return (px + (qx - px) / dist * radius, py + (qy - py) / dist * radius, qx, qy)
