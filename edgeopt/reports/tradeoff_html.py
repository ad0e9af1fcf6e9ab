"""The HTML page of a batch/threads trade-off (``edgeopt bench --batch 1,2,4,8 --html tradeoff.html``).

Self-contained like the qualify report: inline CSS and SVG, no scripts. The chart (``svg.tradeoff``) plots each
point's throughput against its p99 latency per call; the real-time and the throughput choice are highlighted.
"""

from __future__ import annotations

from ..bench.tradeoff import TradeoffResult
from ..untrusted import for_html as escape  # the one HTML sanitiser (edgeopt.untrusted)
from . import svg
from .html_report import CSS


def render_tradeoff_html(result: TradeoffResult) -> str:
    """The whole page as one string."""
    labels = [f"b={p.batch} t={p.threads or 'def'}" for p in result.points]
    chart = svg.tradeoff([(label, p.latency_ms_p99, p.throughput_ips) for label, p in zip(labels, result.points,
                                                                                           strict=True)],
                         best=[result.best_latency, result.best_throughput])
    head = "".join(f"<th>{h}</th>" for h in ("batch", "threads", "p50 ms / call", "p99 ms / call", "ms / item",
                                               "items/s", "valid", "choice"))
    rows = []
    for i, p in enumerate(result.points):
        choice = " ".join(c for c, j in (("real time", result.best_latency), ("throughput", result.best_throughput))
                          if j == i)
        cells = (str(p.batch), str(p.threads or "default"), f"{p.latency_ms_p50:.4g}", f"{p.latency_ms_p99:.4g}",
                 f"{p.latency_ms_per_item:.4g}", f"{p.throughput_ips:,.0f}", "yes" if p.valid else "NO", choice)
        rows.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    title = f"Latency / throughput trade-off: {result.model} on {result.target}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{CSS}{svg.CHART_CSS}</style></head><body><main><h1>{escape(title)}</h1>"
            f'<p class="sub">runner <code>{escape(result.runner)}</code></p><p>{escape(result.summary)}</p>'
            f'<div class="charts">{chart}</div><div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>'
            f'{"".join(rows)}</tbody></table></div></main></body></html>\n')
