"""Small inline-SVG charts (histogram, CDF, bars, Pareto scatter) for the self-contained HTML report.

Plain strings, no plotting library and nothing fetched: every chart is an ``<svg>`` element with its own axes,
ticks and labels, styled by :data:`CHART_CSS` (the HTML report includes it once; a chart
written as a file of its own gets it inline through :func:`standalone`). All text is XML-escaped.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .charts.placer import Placer
from .charts.points import PointLabel, key_rows, label_points
from .charts.scale import log_range, log_ticks, wants_log
from .charts.text import Box, shorten, text_box, text_width

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
.chart .pt-fail { fill: #fff; stroke: #cf222e; stroke-width: 1.5; }
.chart .pt-same { fill: #fff; stroke: #6e7781; stroke-width: 1.5; stroke-dasharray: 2 2; }
.chart .rec { fill: none; stroke: #0969da; stroke-width: 2; } .chart .rec-text { font-size: 11px; fill: #0969da;
  font-weight: 600; } .chart .whisker { stroke: #0969da; stroke-width: 1.5; }
.chart .lead { stroke: #afb8c1; stroke-width: 1; } .chart .num { font-size: 11px; fill: #1f2328; font-weight: 600; }
.chart .threshold { stroke: #9a6700; stroke-width: 1.5; stroke-dasharray: 6 3; }
.chart .threshold-text { font-size: 11px; fill: #9a6700; }
.chart .tick, .chart .num, .chart .rec-text, .chart .limit-text, .chart .marker-text, .chart .threshold-text {
  paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
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
                 height: int = HEIGHT, log_x: bool = False, log_y: bool = False) -> None:
        self.w, self.h = width, height
        self.log_x, self.log_y = log_x and x_range[0] > 0, log_y and y_range[0] > 0
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1.0
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1.0
        self.left: float = _M_LEFT
        self.right: float = width - _M_RIGHT
        self.top, self.bottom = _M_TOP, height - _M_BOTTOM

    @staticmethod
    def _frac(v: float, low: float, high: float, log: bool) -> float:
        if log:
            return (math.log10(max(v, low * 1e-3)) - math.log10(low)) / (math.log10(high) - math.log10(low))
        return (v - low) / (high - low)

    def x(self, v: float) -> float:
        return self.left + self._frac(v, self.x0, self.x1, self.log_x) * (self.right - self.left)

    def y(self, v: float) -> float:
        return self.bottom - self._frac(v, self.y0, self.y1, self.log_y) * (self.bottom - self.top)

    def x_ticks(self, count: int = 5) -> list[float]:
        """Round ticks of the x axis (powers of ten and their 2x, 5x on a log axis)."""
        return log_ticks(self.x0, self.x1) if self.log_x else nice_ticks(self.x0, self.x1, count)

    def y_ticks(self, count: int = 4) -> list[float]:
        return log_ticks(self.y0, self.y1) if self.log_y else nice_ticks(self.y0, self.y1, count)

    def axes(self, x_label: str, y_label: str, x_ticks: Sequence[float], y_ticks: Sequence[float]) -> list[str]:
        out = [f'<rect class="plot" x="{self.left}" y="{self.top}" width="{self.right - self.left}" '
               f'height="{self.bottom - self.top}"/>']
        for t in y_ticks:
            if self.y0 <= t <= self.y1:
                yy = self.y(t)
                out.append(f'<line class="grid" x1="{self.left}" x2="{self.right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
                out.append(f'<text class="tick" x="{self.left - 6}" y="{yy + 4:.1f}" text-anchor="end">'
                           f"{escape(fmt(t))}</text>")
        last: Box | None = None
        for t in x_ticks:
            if self.x0 <= t <= self.x1:
                xx = self.x(t)
                box = text_box(xx, self.bottom + 16, fmt(t), 11, "middle")
                if (last is not None and box.intersects(last, 3)) or box.x0 < 0 or box.x1 > self.w:
                    continue  # a log axis crowds its ticks: keep every label readable
                last = box
                out.append(f'<line class="axis" x1="{xx:.1f}" x2="{xx:.1f}" y1="{self.bottom}" '
                           f'y2="{self.bottom + 4}"/>')
                out.append(f'<text class="tick" x="{xx:.1f}" y="{self.bottom + 16}" text-anchor="middle">'
                           f"{escape(fmt(t))}</text>")
        x_label += ", log scale" if self.log_x and "log scale" not in x_label else ""
        y_label += " (log scale)" if self.log_y else ""
        out.append(f'<text class="label" x="{(self.left + self.right) / 2:.1f}" y="{self.h - 6}" '
                   f'text-anchor="middle">{escape(x_label)}</text>')
        out.append(f'<text class="label" x="14" y="{(self.top + self.bottom) / 2:.1f}" text-anchor="middle" '
                   f'transform="rotate(-90 14 {(self.top + self.bottom) / 2:.1f})">{escape(y_label)}</text>')
        return out

    def markers(self, markers: Sequence[Marker], reserved: Sequence[Box] = ()) -> list[str]:
        """Vertical lines with their labels near the top, each label in the first free row beside its line."""
        placer = Placer(Box(self.left, self.top, self.right, self.bottom), list(reserved))
        out = []
        for m in markers:
            if not (self.x0 <= m.x <= self.x1):
                continue
            xx = self.x(m.x)
            cls = "limit" if m.limit else "marker"
            out.append(f'<line class="{cls}" x1="{xx:.1f}" x2="{xx:.1f}" y1="{self.top}" y2="{self.bottom}">'
                       f"<title>{escape(m.label)}</title></line>")
            spot = None
            for row in range(int((self.bottom - self.top - 14) // 13)):
                y = self.top + 12 + 13 * row
                spot = placer.fixed(xx + 3, y, m.label, 11) or placer.fixed(xx - 3, y, m.label, 11, "end")
                if spot is not None:
                    break
            if spot is not None:
                out.append(f'<text class="{cls}-text" x="{spot.x:.1f}" y="{spot.y:.1f}" '
                           f'text-anchor="{spot.anchor}">{escape(m.label)}</text>')
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
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{head}><style>{html.escape(CHART_CSS, quote=False)}</style>'
            f"<title>{rest}\n")


def _x_range(values: np.ndarray, markers: Sequence[Marker]) -> tuple[float, float, bool]:
    """From the minimum to p99.9 (so one outlier does not flatten the chart), widened to show limit markers; on a
    log axis (the third value) when that range spans more than 10x."""
    low = float(values.min())
    high = float(np.percentile(values, 99.9)) if values.size >= 1000 else float(values.max())
    for m in markers:
        if m.limit and m.x < high * 4:  # a limit far beyond the data would squash it; it is stated in the table
            high = max(high, m.x)
    if wants_log([low, high]):
        return (*log_range(low, high, 1.1), True)
    pad = (high - low) * 0.05 or abs(high) * 0.05 or 1.0
    return max(0.0, low - pad), high + pad, False


def histogram(samples_ms: Sequence[float], *, markers: Sequence[Marker] = (), bins: int = 40,
              title: str = "Latency histogram") -> str:
    """Histogram of latencies (ms) with percentile and limit markers; samples beyond the range are counted. On a
    log axis the bins are log-spaced, so a long tail and the body both show."""
    values = np.asarray(samples_ms, dtype=np.float64)
    if values.size == 0:
        return _svg(['<text class="label" x="20" y="40">no samples</text>'], title)
    x0, x1, log = _x_range(values, markers)
    edges_in = np.geomspace(x0, x1, bins + 1) if log else np.linspace(x0, x1, bins + 1)
    counts, edges = np.histogram(np.clip(values, x0, x1), bins=edges_in)
    frame = _Frame((x0, x1), (0.0, float(counts.max()) * 1.1), log_x=log)
    body = frame.axes("latency (ms)", "inferences", frame.x_ticks(), nice_ticks(0, float(counts.max()) * 1.1, 4))
    for c, lo, hi in zip(counts, edges[:-1], edges[1:], strict=True):
        if c == 0:
            continue
        xa, xb, yy = frame.x(float(lo)), frame.x(float(hi)), frame.y(float(c))
        body.append(f'<rect class="bar" x="{xa:.1f}" y="{yy:.1f}" width="{max(xb - xa - 1, 0.5):.1f}" '
                    f'height="{frame.bottom - yy:.1f}"><title>{fmt(float(lo))}-{fmt(float(hi))} ms: {int(c)}'
                    "</title></rect>")
    beyond = int((values > x1).sum())
    note = f"{beyond} beyond {fmt(x1)} ms (in the last bar)"
    reserved = [text_box(frame.right - 4, frame.top + 12, note, 11, "end")] if beyond else []
    body.extend(frame.markers(markers, reserved))
    if beyond:
        body.append(f'<text class="tick" x="{frame.right - 4}" y="{frame.top + 12}" text-anchor="end">'
                    f"{escape(note)}</text>")
    return _svg(body, title)


def cdf(samples_ms: Sequence[float], *, markers: Sequence[Marker] = (), title: str = "Latency CDF") -> str:
    """Empirical cumulative distribution of latencies (ms), percent of inferences at or below each latency."""
    values = np.sort(np.asarray(samples_ms, dtype=np.float64))
    if values.size == 0:
        return _svg(['<text class="label" x="20" y="40">no samples</text>'], title)
    x0, x1, log = _x_range(values, markers)
    frame = _Frame((x0, x1), (0.0, 100.0), log_x=log)
    body = frame.axes("latency (ms)", "% of inferences <= x", frame.x_ticks(), [0, 25, 50, 75, 100])
    idx = np.unique(np.linspace(0, values.size - 1, min(values.size, MAX_CDF_POINTS)).astype(int))
    pts = [(frame.x(min(float(values[i]), x1)), frame.y((i + 1) / values.size * 100.0)) for i in idx]
    pts.insert(0, (frame.x(float(values[0])), frame.y(0.0)))
    body.append('<polyline class="line" points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in pts) + '"/>')
    body.extend(frame.markers(markers))
    return _svg(body, title)


def _bar_scale(values: Sequence[float], left: float, right: float) -> tuple[Callable[[float], float], list[float],
                                                                              bool]:
    """Value -> x of the bars' axis (log when the values span more than 10x), its ticks, and whether it is log."""
    if wants_log(values):
        low, high = log_range(min(values), max(values), 1.6)
        frame = _Frame((low, high), (0.0, 1.0), log_x=True)
    else:
        frame = _Frame((0.0, max([*values, 1e-9]) * 1.1), (0.0, 1.0))
    frame.left, frame.right = left, right
    return frame.x, [t for t in frame.x_ticks() if frame.x0 <= t <= frame.x1], frame.log_x


def bars(items: Sequence[tuple[str, float | None]], *, unit: str, limit: float | None = None,
         limit_label: str = "limit", title: str = "Bars", judged: int | None = None) -> str:
    """Horizontal bars (label, value) with an optional limit line; missing values are labelled n/a.

    ``judged``: index of the one bar the limit applies to (only it can be painted over the limit); None: all.
    The margins follow the longest name and value (a name too long for 40 % of the width is cut, in full in the
    bar's tooltip); the axis is logarithmic when the values span more than 10x.
    """
    known = [v for _, v in items if v is not None and v > 0]
    left = min(max([text_width(label, 11) for label, _ in items] or [0]) + 16, WIDTH * 0.4)
    right = WIDTH - 12 - max([text_width(f"{fmt(v)} {unit}", 11) + 4 for v in known] or [30])
    xpos, ticks, log = _bar_scale([*known, *([limit] if limit else [])], left, right)
    base = 16 + 30 * max(len(items), 1)
    height = base + 50
    body = [f'<line class="axis" x1="{left}" x2="{right}" y1="{base - 6}" y2="{base - 6}"/>']
    for t in ticks:
        body.append(f'<text class="tick" x="{xpos(t):.1f}" y="{base + 8}" text-anchor="middle">{escape(fmt(t))}</text>')
    body.append(f'<text class="label" x="{(left + right) / 2:.1f}" y="{height - 4}" text-anchor="middle">'
                f'{escape(unit)}{", log scale" if log else ""}</text>')
    for i, (label, value) in enumerate(items):
        y = 16 + 30 * i
        body.append(f'<text class="tick" x="{left - 8:.1f}" y="{y + 15}" text-anchor="end">'
                    f"{escape(shorten(label, 11, left - 12))}</text>")
        if value is None:
            body.append(f'<text class="tick" x="{left + 4:.1f}" y="{y + 15}">n/a</text>')
            continue
        over = limit is not None and value > limit and judged in (None, i)
        end = max(xpos(value), left + 1) if value > 0 else left + 1
        body.append(f'<rect class="{"bar-over" if over else "bar"}" x="{left:.1f}" y="{y}" width="{end - left:.1f}" '
                    f'height="20"><title>{escape(label)}: {escape(fmt(value))} {escape(unit)}</title></rect>')
        body.append(f'<text class="tick" x="{end + 4:.1f}" y="{y + 15}">{escape(fmt(value))} {escape(unit)}</text>')
    if limit is not None:
        xl = xpos(limit)
        text = f"{limit_label} {fmt(limit)} {unit}"
        anchor, tx = ("end", xl - 3) if xl + 3 + text_width(text, 11) > WIDTH - 2 else ("start", xl + 3)
        body.append(f'<line class="limit" x1="{xl:.1f}" x2="{xl:.1f}" y1="8" y2="{base + 12}"/>')
        body.append(f'<text class="limit-text" x="{tx:.1f}" y="{base + 24}" text-anchor="{anchor}">{escape(text)}'
                    "</text>")
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


def labelled_scatter(frame: _Frame, points: Sequence[PointLabel], order: Sequence[int], below: float,
                     reserved: Sequence[Box] = ()) -> tuple[list[str], float]:
    """The labels of ``points`` placed without collisions inside the plot, numbered when they do not fit, with the
    key of the numbered ones drawn from ``below`` px down; the elements and the height the key takes."""
    placer = Placer(Box(frame.left, frame.top, frame.right, frame.bottom), list(reserved))
    body, key = label_points(placer, points, order)
    rows, height = key_rows(key, frame.left - 40, below, frame.w - frame.left + 30)
    return body + rows, height


def tradeoff(points: Sequence[tuple[str, float, float]], *, best: Sequence[int] = (),
             title: str = "Latency vs throughput") -> str:
    """Scatter of (label, p99 latency per call in ms, throughput in items/s), joined in the given order (e.g. by
    batch); the points in ``best`` (the real-time and the throughput choice) are highlighted. Log axes where the
    values span more than 10x (batch 1 to 64 does)."""
    if not points:
        return _svg(['<text class="label" x="20" y="40">no points</text>'], title)
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    log_x, log_y = wants_log(xs), wants_log(ys)
    xpad = (max(xs) - min(xs)) * 0.08 or max(xs) * 0.1
    ypad = (max(ys) - min(ys)) * 0.12 or max(ys) * 0.1
    xr = log_range(min(xs), max(xs)) if log_x else (max(0.0, min(xs) - xpad), max(xs) + xpad)
    yr = log_range(min(ys), max(ys)) if log_y else (max(0.0, min(ys) - ypad), max(ys) + ypad)
    frame = _Frame(xr, yr, log_x=log_x, log_y=log_y)
    body = frame.axes("p99 latency per call (ms)", "throughput (items/s)", frame.x_ticks(), frame.y_ticks())
    if len(points) > 1:
        body.append('<polyline class="front" points="' + " ".join(
            f"{frame.x(x):.1f},{frame.y(y):.1f}" for _, x, y in points) + '"/>')
    labels = []
    for i, (label, x, y) in enumerate(points):
        cls = "pt-front" if i in best else "pt"
        body.append(f'<circle class="{cls}" cx="{frame.x(x):.1f}" cy="{frame.y(y):.1f}" r="5"><title>'
                    f"{escape(label)}: p99 {fmt(x)} ms, {fmt(y)} items/s</title></circle>")
        labels.append(PointLabel(frame.x(x), frame.y(y), label, f"{label}: p99 {fmt(x)} ms, {fmt(y)} items/s"))
    order = [*dict.fromkeys([*best, *range(len(points))])]
    text, extra = labelled_scatter(frame, labels, order, HEIGHT)
    return _svg(body + text, title, height=int(HEIGHT + extra))
