"""Labels for the points of a scatter chart, and the key that names the points whose label did not fit.

Every point's circle is reserved first, so no label covers a point. Labels are placed in the caller's order (the
points that matter most first); a point whose label finds no free place gets a number instead, and the number and
the full name go in a key drawn under the chart (:func:`key_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .placer import FAR_RINGS, Placed, Placer
from .text import Box, shorten, text_width

SIZE = 11.0  # px, the font size of point labels and the key (the ``tick`` class)
BOLD_CLASSES = ("rec-text", "num")  # drawn bold by CHART_CSS, so wider


@dataclass(frozen=True)
class PointLabel:
    """A point at ``(px, py)`` px of ``radius``, its on-chart ``text`` and the ``key`` line naming it in full."""

    px: float
    py: float
    text: str
    key: str
    radius: float = 5.0
    css: str = "tick"


def _text(p: Placed, text: str, css: str) -> str:
    line = ""
    if p.leader:
        x1, y1, x2, y2 = p.leader
        line = f'<line class="lead" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}"/>'
    return (f'{line}<text class="{css}" x="{p.x:.1f}" y="{p.y:.1f}" text-anchor="{p.anchor}">{escape(text)}'
            "</text>")


def label_points(placer: Placer, points: Sequence[PointLabel], order: Sequence[int]) -> tuple[list[str], list[str]]:
    """Draw the labels of ``points`` (in ``order``), numbering those that do not fit.

    Returns:
        The SVG elements, and the key lines ("3  name: values") of the numbered points, in number order.
    """
    for p in points:
        placer.reserve(Box(p.px - p.radius, p.py - p.radius, p.px + p.radius, p.py + p.radius))
    body, missed = [], []
    for i in order:
        p = points[i]
        spot = placer.place(p.px, p.py, p.text, SIZE, p.radius, bold=p.css in BOLD_CLASSES)
        if spot is None:
            missed.append(i)
        else:
            body.append(_text(spot, p.text, p.css))
    key = []
    for n, i in enumerate(missed, start=1):
        p = points[i]
        spot = placer.place(p.px, p.py, str(n), SIZE, p.radius, FAR_RINGS, bold=True)
        if spot is not None:
            body.append(_text(spot, str(n), "num"))
        key.append(f"{n if spot is not None else '-'}  {p.key}")
    return body, key


def key_rows(lines: Sequence[str], x: float, y: float, width: float) -> tuple[list[str], float]:
    """``lines`` in as many columns as fit ``width`` from ``(x, y)`` (top left); the elements and their height."""
    if not lines:
        return [], 0.0
    row_h = SIZE * 1.45
    col_w = min(max(text_width(t, SIZE) for t in lines) + 18, width)
    cols = max(1, int(width // col_w))
    rows = math.ceil(len(lines) / cols)
    out = []
    for i, line in enumerate(lines):
        cx, cy = x + (i // rows) * col_w, y + (i % rows + 1) * row_h - 3
        out.append(f'<text class="tick" x="{cx:.1f}" y="{cy:.1f}">{escape(shorten(line, SIZE, col_w - 12))}</text>')
    return out, rows * row_h + 4
