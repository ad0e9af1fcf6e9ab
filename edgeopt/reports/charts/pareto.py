"""The sweep's Pareto chart: objective (latency, size or energy) against retention, read at a glance.

What a reader needs to judge the recommendation is on the chart (issue 24): the retention threshold as a dashed
line labelled with its value, the FPS budget as a vertical line when one applies, the frontier as a line, the
recommendation ringed and named, failing levels hollow red and no-change levels hollow dashed, and the 95 %
intervals of the interleaved ranking rounds (:mod:`edgeopt.sweep.rank.recommend`) as whiskers on the ranked points.
Labels never overlap: they are placed by :mod:`.placer`, and a point whose name does not fit is numbered and named
in the key under the chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from .. import svg
from .placer import Placer
from .points import PointLabel
from .scale import log_range, wants_log
from .text import Box, text_width

PLOT_BOTTOM = 250  # px: the plot area ends here; axes, legend and key follow
STATUS_CLASS = {"fail": "pt-fail", "no-change": "pt-same"}
STATUS_TEXT = {"pass": "passes", "fail": "fails the threshold or budget", "no-change": "no change (= fp32)"}


@dataclass(frozen=True)
class ParetoPoint:
    """One level: its name, objective value ``x``, retention, verdict, and its ranking interval when ranked.

    ``status``: ``pass``, ``fail`` or ``no-change``. ``low``/``high``: the 95 % interval of the ranking's median of
    round medians on the x axis (latency only). ``note``: more tooltip text (e.g. an energy ESTIMATE).
    """

    label: str
    x: float
    retention: float
    status: str = "pass"
    low: float | None = None
    high: float | None = None
    note: str = ""


@dataclass(frozen=True)
class ParetoContext:
    """What the sweep adds: axis title, threshold, budget (x value and its label), the recommended point."""

    x_label: str = "latency p50 (ms)"
    x_unit: str = "ms"
    min_retention: float | None = None
    budget_x: float | None = None
    budget_label: str = ""
    recommended: int | None = None
    verdicts: bool = True  # False: the points carry no pass/fail (the qualify report's sweep points)


def _ranges(points: Sequence[ParetoPoint], ctx: ParetoContext) -> tuple[tuple[float, float], tuple[float, float],
                                                                         bool, bool]:
    xs = [p.x for p in points] + [v for p in points for v in (p.low, p.high) if v is not None]
    if ctx.budget_x is not None and ctx.budget_x < max(xs) * 4:
        xs.append(ctx.budget_x)
    ys = [p.retention for p in points] + ([ctx.min_retention] if ctx.min_retention is not None else [])
    log_x, log_y = wants_log(xs), wants_log(ys)
    xpad = (max(xs) - min(xs)) * 0.08 or max(xs) * 0.1
    ypad = (max(ys) - min(ys)) * 0.15 or 0.01
    xr = log_range(min(xs), max(xs)) if log_x else (max(0.0, min(xs) - xpad), max(xs) + xpad)
    yr = log_range(min(ys), max(ys)) if log_y else (min(ys) - ypad, max(ys) + ypad)
    return xr, yr, log_x, log_y


def _lines(frame: svg._Frame, ctx: ParetoContext, placer: Placer) -> list[str]:
    """The threshold and the budget, each with its label in the first free place along it."""
    out = []
    if ctx.min_retention is not None and frame.y0 <= ctx.min_retention <= frame.y1:
        yy = frame.y(ctx.min_retention)
        text = f"min retention {ctx.min_retention:g}"
        out.append(f'<line class="threshold" x1="{frame.left}" x2="{frame.right}" y1="{yy:.1f}" y2="{yy:.1f}"/>')
        spot = (placer.fixed(frame.right - 4, yy - 4, text, 11, "end") or placer.fixed(frame.right - 4, yy + 13, text,
                                                                                      11, "end"))
        if spot:
            out.append(f'<text class="threshold-text" x="{spot.x:.1f}" y="{spot.y:.1f}" text-anchor="end">'
                       f"{escape(text)}</text>")
    if ctx.budget_x is not None and frame.x0 <= ctx.budget_x <= frame.x1:
        xx = frame.x(ctx.budget_x)
        out.append(f'<line class="limit" x1="{xx:.1f}" x2="{xx:.1f}" y1="{frame.top}" y2="{frame.bottom}"/>')
        for row in range(12):
            y = frame.top + 12 + 13 * row
            spot = (placer.fixed(xx - 3, y, ctx.budget_label, 11, "end")
                    or placer.fixed(xx + 3, y, ctx.budget_label, 11))
            if spot:
                out.append(f'<text class="limit-text" x="{spot.x:.1f}" y="{spot.y:.1f}" text-anchor="{spot.anchor}">'
                           f"{escape(ctx.budget_label)}</text>")
                break
    return out


def _marks(frame: svg._Frame, points: Sequence[ParetoPoint], front: set[int], ctx: ParetoContext) -> list[str]:
    """Whiskers, points and the recommendation's ring (tooltips say the values, the verdict and the interval)."""
    out = []
    for p in points:
        if p.low is not None and p.high is not None:
            yy, xa, xb = frame.y(p.retention), frame.x(p.low), frame.x(p.high)
            out.append(f'<line class="whisker" x1="{xa:.1f}" x2="{xb:.1f}" y1="{yy:.1f}" y2="{yy:.1f}"/>'
                       f'<line class="whisker" x1="{xa:.1f}" x2="{xa:.1f}" y1="{yy - 4:.1f}" y2="{yy + 4:.1f}"/>'
                       f'<line class="whisker" x1="{xb:.1f}" x2="{xb:.1f}" y1="{yy - 4:.1f}" y2="{yy + 4:.1f}"/>')
    for i, p in enumerate(points):
        cls = STATUS_CLASS.get(p.status) or ("pt-front" if i in front else "pt")
        cx, cy = frame.x(p.x), frame.y(p.retention)
        verdict = f"; {STATUS_TEXT[p.status]}" if ctx.verdicts else ""
        tip = (f"{p.label}: {svg.fmt(p.x)} {ctx.x_unit}, retention {p.retention:.4f}{verdict}"
               + ("; on the frontier" if i in front else "")
               + (f"; ranked 95 % interval {svg.fmt(p.low)}-{svg.fmt(p.high)} ms" if p.low is not None
                  and p.high is not None else "") + (f"; {p.note}" if p.note else ""))
        if i == ctx.recommended:
            out.append(f'<circle class="rec" cx="{cx:.1f}" cy="{cy:.1f}" r="9"/>')
        out.append(f'<circle class="{cls}" cx="{cx:.1f}" cy="{cy:.1f}" r="5"><title>{escape(tip)}</title></circle>')
    return out


def _legend(y: float, ctx: ParetoContext, points: Sequence[ParetoPoint], frame: svg._Frame) -> tuple[list[str],
                                                                                                    float]:
    """A one- or two-row key of the marks actually drawn (and of a budget too far out to draw); the elements and the
    height taken."""
    items = [("pt-front key", "on the frontier"), ("pt key", "passes" if ctx.verdicts else "off the frontier")]
    statuses = {p.status for p in points}
    items += [("pt-fail key", "fails threshold/budget")] if "fail" in statuses else []
    items += [("pt-same key", "no change (= fp32)")] if "no-change" in statuses else []
    if ctx.recommended is not None:  # named here too, so the name is on the chart even when its label is numbered
        items.append(("rec key", f"recommended: {points[ctx.recommended].label}"))
    if any(p.low is not None for p in points):
        items.append(("whisker", "95 % interval of the ranking rounds"))
    if ctx.budget_x is not None and not frame.x0 <= ctx.budget_x <= frame.x1:
        items.append(("limit", f"{ctx.budget_label} (beyond the axis)"))
    out, x, row = [], 20.0, 0
    for css, text in items:
        width = 16 + text_width(text, 11) + 14
        if x + width > svg.WIDTH - 10:
            x, row = 20.0, row + 1
        yy = y + 16 * row
        mark = (f'<line class="{css}" x1="{x:.1f}" x2="{x + 10:.1f}" y1="{yy - 4:.1f}" y2="{yy - 4:.1f}"/>'
                if css in ("whisker", "limit") else f'<circle class="{css}" cx="{x + 5:.1f}" cy="{yy - 4:.1f}" r="4"/>')
        out.append(mark + f'<text class="tick" x="{x + 14:.1f}" y="{yy:.1f}">{escape(text)}</text>')
        x += width
    return out, 16.0 * (row + 1)


def pareto_chart(points: Sequence[ParetoPoint], *, ctx: ParetoContext | None = None,
                 title: str = "Pareto: latency vs retention") -> str:
    """The chart as one ``<svg>`` element (classes styled by :data:`edgeopt.reports.svg.CHART_CSS`)."""
    ctx = ctx or ParetoContext()
    if not points:
        return svg._svg(['<text class="label" x="20" y="40">no sweep points</text>'], title)
    xr, yr, log_x, log_y = _ranges(points, ctx)
    frame = svg._Frame(xr, yr, height=PLOT_BOTTOM + 42, log_x=log_x, log_y=log_y)
    body = frame.axes(ctx.x_label, "retention", frame.x_ticks(), frame.y_ticks())
    front = svg.pareto_front([(p.label, p.x, p.retention) for p in points])
    if len(front) > 1:
        body.append('<polyline class="front" points="' + " ".join(
            f"{frame.x(points[i].x):.1f},{frame.y(points[i].retention):.1f}" for i in front) + '"/>')
    placer = Placer(Box(frame.left, frame.top, frame.right, frame.bottom))
    for p in points:  # labels keep clear of the whiskers
        if p.low is not None and p.high is not None:
            placer.reserve(Box(frame.x(p.low), frame.y(p.retention) - 4, frame.x(p.high), frame.y(p.retention) + 4))
    body += _lines(frame, ctx, placer)
    body += _marks(frame, points, set(front), ctx)
    legend, legend_h = _legend(frame.h + 14, ctx, points, frame)
    labels = [PointLabel(frame.x(p.x), frame.y(p.retention), p.label,
                         f"{p.label}: {svg.fmt(p.x)} {ctx.x_unit}, retention {p.retention:.4f}",
                         radius=9.0 if i == ctx.recommended else 5.0,
                         css="rec-text" if i == ctx.recommended else "tick") for i, p in enumerate(points)]
    rank = {i: (i != ctx.recommended, i not in front, points[i].status != "pass", i) for i in range(len(points))}
    text, key_h = svg.labelled_scatter(frame, labels, sorted(rank, key=rank.__getitem__), frame.h + 14 + legend_h,
                                       reserved=placer.taken)
    return svg._svg(body + legend + text, title, height=int(frame.h + 20 + legend_h + key_h))


def pareto(points: Sequence[tuple[str, float, float]], *, title: str = "Pareto: latency vs retention",
           min_retention: float | None = None) -> str:
    """Scatter of (label, latency_ms, retention) with the Pareto frontier drawn and its points highlighted, and the
    retention threshold when given (:func:`pareto_chart` without verdicts)."""
    ctx = ParetoContext(verdicts=False, min_retention=min_retention)
    return pareto_chart([ParetoPoint(label, x, y) for label, x, y in points], ctx=ctx, title=title)
