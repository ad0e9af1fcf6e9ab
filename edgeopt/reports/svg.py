"""Small inline-SVG charts (histogram, CDF, bars, Pareto scatter) for the self-contained HTML report.

Plain strings, no plotting library and nothing fetched: every chart is an ``<svg>`` element with its own axes,
ticks and labels, styled by :data:`CHART_CSS` (the HTML report includes it once; a chart
written as a file of its own gets it inline through :func:`standalone`). All text is XML-escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

WIDTH = 640
HEIGHT = 260
_M_LEFT, _M_RIGHT, _M_TOP, _M_BOTTOM = 58, 16, 18, 42
MAX_CDF_POINTS = 400
SVG_NS = "http://www.w3.org/2000/svg"

# The chart classes, with literal colours so a chart renders the same alone as inside the report.
CHART_CSS = """\
.chart { max-width: 100%; height: auto; border: 1px solid #d1d9e0; border-radius: 6px; background: #fff;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.chart .plot { fill: #fff; stroke: #d1d9e0; } .chart .grid { stroke: #eef1f4; } .chart .axis { stroke: #8c959f; }
.chart .tick { font-size: 11px; fill: #59636e; } .chart .label { font-size: 12px; fill: #1f2328; }
.chart .bar { fill: #54aeff; } .chart .bar-over { fill: #ff8182; }
.chart .line { fill: none; stroke: #0969da; stroke-width: 2; }
.chart .marker { stroke: #6e7781; stroke-dasharray: 4 3; } .chart .marker-text { font-size: 11px; fill: #6e7781; }
.chart .limit { stroke: #cf222e; stroke-width: 2; } .chart .limit-text { font-size: 11px; fill: #cf222e; }
.chart .front { fill: none; stroke: #1a7f37; stroke-width: 2; } .chart .pt { fill: #8c959f; }
.chart .pt-front { fill: #1a7f37; }
"""


@dataclass(frozen=True)
class Marker:
    """A vertical line at ``x`` with a label (a percentile, or a gate's limit when ``limit`` is set)."""

    label: str
    x: float
    limit: bool = False


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering ``[low, high]`` (steps of 1, 2 or 5 x 10^k)."""
    if not math.isfinite(low) or not math.isfinite(high):
        return [0.0]
    if high <= low:
        high = low + (abs(low) or 1.0)
    raw = (high - low) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    start = math.floor(low / step) * step
    ticks = []
    v = start
    while v <= high + step * 1e-9:
        if v >= low - step * 1e-9:
            ticks.append(round(v, 12))
        v += step
    return ticks


def fmt(value: float) -> str:
    """A compact axis label."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"
    return f"{value:.3g}"


class _Frame:
    """Maps data coordinates into the plot area and draws the axes."""

    def __init__(self, x_range: tuple[float, float], y_range: tuple[float, float], width: int = WIDTH,
                 height: int = HEIGHT) -> None:
        self.w, self.h = width, height
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1.0
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1.0
        self.left, self.right = _M_LEFT, width - _M_RIGHT
        self.top, self.bottom = _M_TOP, height - _M_BOTTOM

    def x(self, v: float) -> float:
        return self.left + (v - self.x0) / (self.x1 - self.x0) * (self.right - self.left)

    def y(self, v: float) -> float:
        return self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)

    def axes(self, x_label: str, y_label: str, x_ticks: Sequence[float], y_ticks: Sequence[float]) -> list[str]:
        out = [f'<rect class="plot" x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
               f'height="{self.bottom - self.top}"/>']
        for t in y_ticks:
            if self.y0 <= t <= self.y1:
                yy = self.y(t)
                out.append(f'<line class="grid" x1="{self.left}" x2="{self.right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
                out.append(f'<text class="tick" x="{self.left - 6}" y="{yy + 4:.1f}" text-anchor="end">'
                           f"{escape(fmt(t))}</text>")
        for t in x_ticks:
            if self.x0 <= t <= self.x1:
                xx = self.x(t)
                out.append(f'<line class="axis" x1="{xx:.1f}" x2="{xx:.1f}" y1="{self.bottom}" '
                           f'y2="{self.bottom + 4}"/>')
                out.append(f'<text class="tick" x="{xx:.1f}" y="{self.bottom + 16}" text-anchor="middle">'
                           f"{escape(fmt(t))}</text>")
        out.append(f'<text class="label" x="{(self.left + self.right) / 2:.1f}" y="{self.h - 6}" '
                   f'text-anchor="middle">{escape(x_label)}</text>')
        out.append(f'<text class="label" x="14" y="{(self.top + self.bottom) / 2:.1f}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {(self.top + self.bottom) / 2:.1f})">{escape(y_label)}</text>')
        return out

    def markers(self, markers: Sequence[Marker]) -> list[str]:
        out = []
        for i, m in enumerate(markers):
            if not (self.x0 <= m.x <= self.x1):
                continue
            xx = self.x(m.x)
            cls = "limit" if m.limit else "marker"
            out.append(f'<line class="{cls}" x1="{xx:.1f}" x2="{xx:.1f}" y1="{self.top}" y2="{self.bottom}"/>')
            near_right = xx > self.right - 8 * len(m.label)  # keep the label inside the plot
            anchor, tx = ("end", xx - 3) if near_right else ("start", xx + 3)
            out.append(f'<text class="{cls}-text" x="{tx:.1f}" y="{self.top + 12 + 12 * (i % 3)}" '
                       f'text-anchor="{anchor}">{escape(m.label)}</text>')
        return out


def _svg(body: list[str], title: str, width: int = WIDTH, height: int = HEIGHT, css: str = "chart") -> str:
    return (f'<svg class="{css}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>' + "".join(body) + "</svg>")


def standalone(chart: str) -> str:
    """``chart`` (from this module) as the text of an ``.svg`` file: XML declaration and its own stylesheet, so it
    renders alone (a browser, an image viewer, a CI artifact page) exactly as inside the HTML report."""
    head, sep, rest = chart.partition("><title>")
    if not sep or not head.startswith("<svg "):
        raise ValueError("not a chart made by edgeopt.reports.svg")
    head = f'<svg xmlns="{SVG_NS}" ' + head[len("<svg "):]  # inline in HTML it needs none; alone it must have it
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{head}><style>{escape(CHART_CSS, quote=False)}</style>'
            f"<title>{rest}\n")


def _x_range(values: np.ndarray, markers: Sequence[Marker]) -> tuple[float, float]:
    """From the minimum to p99.9 (so one outlier does not flatten the chart), widened to show limit markers."""
    low = float(values.min())
    high = float(np.percentile(values, 99.9)) if values.size >= 1000 else float(values.max())
    for m in markers:
        if m.limit and m.x < high * 4:  # a limit far beyond the data would squash it; it is stated in the table
            high = max(high, m.x)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
    return max(0.0, low - pad), high + pad


def histogram(samples_ms: Sequence[float], *, markers: Sequence[Marker] = (), bins: int = 40,
              title: str = "Latency histogram") -> str:
    """Histogram of latencies (ms) with percentile and limit markers; samples beyond the range are counted."""
    values = np.asarray(samples_ms, dtype=np.float64)
    if values.size == 0:
        return _svg(['<text class="label" x="20" y="40">no samples</text>'], title)
    x0, x1 = _x_range(values, markers)
    counts, edges = np.histogram(np.clip(values, x0, x1), bins=bins, range=(x0, x1))
    frame = _Frame((x0, x1), (0.0, float(counts.max()) * 1.1))
    body = frame.axes("latency (ms)", "inferences", nice_ticks(x0, x1), nice_ticks(0, float(counts.max()) * 1.1, 4))
    for c, lo, hi in zip(counts, edges[:-1], edges[1:], strict=True):
        if c == 0:
            continue
        xa, xb, yy = frame.x(float(lo)), frame.x(float(hi)), frame.y(float(c))
        body.append(f'<rect class="bar" x="{xa:.1f}" y="{yy:.1f}" width="{max(xb - xa - 1, 0.5):.1f}" '
                    f'height="{frame.bottom - yy:.1f}"><title>{fmt(float(lo))}-{fmt(float(hi))} ms: {int(c)}'
                    "</title></rect>")
    body.extend(frame.markers(markers))
    beyond = int((values > x1).sum())
    if beyond:
        body.append(f'<text class="tick" x="{frame.right - 4}" y="{frame.top + 12}" text-anchor="end">'
                    f"{beyond} beyond {escape(fmt(x1))} ms (in the last bar)</text>")
    return _svg(body, title)


def cdf(samples_ms: Sequence[float], *, markers: Sequence[Marker] = (), title: str = "Latency CDF") -> str:
    """Empirical cumulative distribution of latencies (ms), percent of inferences at or below each latency."""
    values = np.sort(np.asarray(samples_ms, dtype=np.float64))
    if values.size == 0:
        return _svg(['<text class="label" x="20" y="40">no samples</text>'], title)
    x0, x1 = _x_range(values, markers)
    frame = _Frame((x0, x1), (0.0, 100.0))
    body = frame.axes("latency (ms)", "% of inferences <= x", nice_ticks(x0, x1), [0, 25, 50, 75, 100])
    idx = np.unique(np.linspace(0, values.size - 1, min(values.size, MAX_CDF_POINTS)).astype(int))
    pts = [(frame.x(min(float(values[i]), x1)), frame.y((i + 1) / values.size * 100.0)) for i in idx]
    pts.insert(0, (frame.x(float(values[0])), frame.y(0.0)))
    body.append('<polyline class="line" points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
    body.extend(frame.markers(markers))
    return _svg(body, title)


def bars(items: Sequence[tuple[str, float | None]], *, unit: str, limit: float | None = None,
         limit_label: str = "limit", title: str = "Bars", judged: int | None = None) -> str:
    """Horizontal bars (label, value) with an optional limit line; missing values are labelled n/a.

    ``judged``: index of the one bar the limit applies to (only it can be painted over the limit); None: all.
    """
    height = 40 + 30 * max(len(items), 1)
    known = [v for _, v in items if v is not None]
    top = max([*known, limit or 0.0, 1e-9]) * 1.1
    left, right = 170, WIDTH - 70
    body = []

    def xpos(v: float) -> float:
        return left + v / top * (right - left)

    for i, (label, value) in enumerate(items):
        y = 16 + 30 * i
        body.append(f'<text class="tick" x="{left - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        if value is None:
            body.append(f'<text class="tick" x="{left + 4}" y="{y + 15}">n/a</text>')
            continue
        over = limit is not None and value > limit and judged in (None, i)
        body.append(f'<rect class="{"bar-over" if over else "bar"}" x="{left}" y="{y}" '
                    f'width="{max(xpos(value) - left, 1):.1f}" height="20"/>')
        body.append(f'<text class="tick" x="{xpos(value) + 4:.1f}" y="{y + 15}">{escape(fmt(value))} {escape(unit)}'
                    "</text>")
    if limit is not None:
        xl = xpos(limit)
        body.append(f'<line class="limit" x1="{xl:.1f}" x2="{xl:.1f}" y1="8" y2="{height - 16}"/>')
        body.append(f'<text class="limit-text" x="{xl + 3:.1f}" y="{height - 4}">{escape(limit_label)} '
                    f"{escape(fmt(limit))} {escape(unit)}</text>")
    return _svg(body, title, height=height)


def pareto_front(points: Sequence[tuple[str, float, float]]) -> list[int]:
    """Indices of points not dominated when lower x (latency) and higher y (retention) are better."""
    front = []
    for i, (_, x, y) in enumerate(points):
        dominated = any((x2 <= x and y2 >= y) and (x2 < x or y2 > y) for j, (_, x2, y2) in enumerate(points)
                        if j != i)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][1])


def pareto(points: Sequence[tuple[str, float, float]], *, title: str = "Pareto: latency vs retention") -> str:
    """Scatter of (label, latency_ms, retention) with the Pareto frontier drawn and its points highlighted."""
    if not points:
        return _svg(['<text class="label" x="20" y="40">no sweep points</text>'], title)
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    xpad = (max(xs) - min(xs)) * 0.08 or max(xs) * 0.1
    ypad = (max(ys) - min(ys)) * 0.15 or 0.01
    frame = _Frame((max(0.0, min(xs) - xpad), max(xs) + xpad), (min(ys) - ypad, max(ys) + ypad))
    body = frame.axes("latency (ms)", "retention", nice_ticks(frame.x0, frame.x1), nice_ticks(frame.y0, frame.y1, 4))
    front = pareto_front(points)
    if len(front) > 1:
        body.append('<polyline class="front" points="' + " ".join(
            f"{frame.x(points[i][1]):.1f},{frame.y(points[i][2]):.1f}" for i in front) + '"/>')
    for i, (label, x, y) in enumerate(points):
        cls = "pt-front" if i in front else "pt"
        body.append(f'<circle class="{cls}" cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="5"><title>'
                    f"{escape(label)}: {fmt(x)} ms, retention {y:.4f}</title></circle>")
        body.append(f'<text class="tick" x="{frame.x(x) + 7:.1f}" y="{frame.y(y) - 6:.1f}">{escape(label)}</text>')
    return _svg(body, title)


def tradeoff(points: Sequence[tuple[str, float, float]], *, best: Sequence[int] = (),
             title: str = "Latency vs throughput") -> str:
    """Scatter of (label, p99 latency per call in ms, throughput in items/s), joined in the given order (e.g. by
    batch); the points in ``best`` (the real-time and the throughput choice) are highlighted."""
    if not points:
        return _svg(['<text class="label" x="20" y="40">no points</text>'], title)
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    xpad = (max(xs) - min(xs)) * 0.08 or max(xs) * 0.1
    ypad = (max(ys) - min(ys)) * 0.12 or max(ys) * 0.1
    frame = _Frame((max(0.0, min(xs) - xpad), max(xs) + xpad), (max(0.0, min(ys) - ypad), max(ys) + ypad))
    body = frame.axes("p99 latency per call (ms)", "throughput (items/s)", nice_ticks(frame.x0, frame.x1),
                      nice_ticks(frame.y0, frame.y1, 4))
    if len(points) > 1:
        body.append('<polyline class="front" points="' + " ".join(
            f"{frame.x(x):.1f},{frame.y(y):.1f}" for _, x, y in points) + '"/>')
    for i, (label, x, y) in enumerate(points):
        cls = "pt-front" if i in best else "pt"
        body.append(f'<circle class="{cls}" cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="5"><title>'
                    f"{escape(label)}: p99 {fmt(x)} ms, {fmt(y)} items/s</title></circle>")
        body.append(f'<text class="tick" x="{frame.x(x) + 7:.1f}" y="{frame.y(y) - 6:.1f}">{escape(label)}</text>')
    return _svg(body, title)
