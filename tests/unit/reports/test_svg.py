"""The report's own SVG charts: axes, bars, lines, markers and the Pareto front."""

import re

import pytest

from edgeopt.reports import svg
from edgeopt.reports.charts.pareto import pareto as pareto_plain


def test_nice_ticks():
    assert svg.nice_ticks(0, 10) == [0, 2, 4, 6, 8, 10]
    assert svg.nice_ticks(0.12, 0.93) == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert svg.nice_ticks(5, 5) and svg.nice_ticks(float("nan"), 1) == [0.0]


def test_histogram_bars_and_markers():
    values = [1.0] * 50 + [2.0] * 30 + [3.0] * 20
    out = svg.histogram(values, markers=[svg.Marker("p50", 1.0), svg.Marker("gate 2.5 ms", 2.5, limit=True)])
    assert out.startswith("<svg") and out.endswith("</svg>")
    bars = re.findall(r'<rect class="bar"', out)
    assert len(bars) == 3 and "<title>" in out
    assert 'class="limit"' in out and "gate 2.5 ms" in out and 'class="marker"' in out
    assert "no samples" in svg.histogram([])


def test_cdf_polyline_goes_from_0_to_100_percent():
    out = svg.cdf([float(i) for i in range(1, 2001)])
    points = re.search(r'<polyline class="line" points="([^"]+)"', out).group(1).split()
    assert 100 < len(points) <= svg.MAX_CDF_POINTS + 1
    ys = [float(p.split(",")[1]) for p in points]
    assert ys == sorted(ys, reverse=True)  # SVG y grows downwards: the curve only rises


def test_bars_mark_values_over_the_limit():
    out = svg.bars([("peak", 80.0), ("delta", 20.0), ("baseline", None)], unit="MiB", limit=64)
    assert out.count('class="bar-over"') == 1 and out.count('class="bar"') == 1 and "n/a" in out


def test_pareto_front():
    pts = [("a", 1.0, 0.90), ("b", 2.0, 0.99), ("c", 2.5, 0.95), ("d", 0.5, 0.80), ("e", 3.0, 0.99)]
    assert svg.pareto_front(pts) == [3, 0, 1]  # c is dominated by b; e ties b on retention but is slower
    out = pareto_plain(pts)
    assert out.count('class="pt-front"') == 3 and out.count('class="pt"') == 2 and 'class="front"' in out


def test_labels_are_escaped():
    out = pareto_plain([("<b>&", 1.0, 1.0)])
    assert "<b>" not in out and "&lt;b&gt;&amp;" in out
