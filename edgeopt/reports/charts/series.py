"""Line charts of a few named series over a shared x axis (the LLM report: TPOT over the generation, TTFT vs prompt
length), with an optional horizontal limit line (a gate's threshold). Built on :mod:`edgeopt.reports.svg`'s frame,
so it looks like the other charts and renders alone through ``svg.standalone``."""

from __future__ import annotations

from collections.abc import Sequence

from ...untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .. import svg

# Literal colours (a chart must render the same alone as inside the report); after these, series repeat them.
PALETTE = ("#0969da", "#1a7f37", "#8250df", "#bc4c00", "#6e7781", "#bf3989")
Series = tuple[str, Sequence[tuple[float, float]]]


def series_chart(series: Sequence[Series], *, x_label: str, y_label: str, title: str,
                 limit: tuple[str, float] | None = None, points: bool = False) -> str:
    """Each series as a polyline (and dots with ``points``), its name in the legend; ``limit``: ``(label, y)``."""
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts]
    if not xs:
        return svg._svg(['<text class="label" x="20" y="40">no data</text>'], title)
    top = max(ys) * 1.1 or 1.0
    if limit is not None and limit[1] < max(ys) * 4:  # a limit far above the data would flatten it; the table says it
        top = max(top, limit[1] * 1.05)
    frame = svg._Frame((min(xs), max(xs)), (0.0, top))
    body = frame.axes(x_label, y_label, frame.x_ticks(), frame.y_ticks())
    if limit is not None and limit[1] <= top:
        yy = frame.y(limit[1])
        body.append(f'<line class="limit" x1="{frame.left}" x2="{frame.right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
        body.append(f'<text class="limit-text" x="{frame.right - 4}" y="{yy - 4:.1f}" text-anchor="end">'
                    f"{escape(limit[0])}</text>")
    for i, (name, pts) in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        coords = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in pts)
        body.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{coords}">'
                    f"<title>{escape(name)}</title></polyline>")
        if points or len(pts) == 1:
            body.extend(f'<circle cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="3.5" fill="{colour}"><title>'
                        f"{escape(name)}: {svg.fmt(x)}, {svg.fmt(y)}</title></circle>" for x, y in pts)
        ly = frame.top + 14 + 14 * i
        body.append(f'<rect x="{frame.right - 20}" y="{ly - 8}" width="12" height="3" fill="{colour}"/>'
                    f'<text class="tick" x="{frame.right - 24}" y="{ly - 3}" text-anchor="end">{escape(name)}</text>')
    return svg._svg(body, title)
