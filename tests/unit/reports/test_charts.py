"""Chart layout (issue 24): text sizes, the label placer, log axes, the Pareto chart's marks, estimates marked."""

from __future__ import annotations

import re

import pytest

from edgeopt.cli.sweep_cmd import ESTIMATE_MARK, _energy
from edgeopt.reports import render_html, svg
from edgeopt.reports.charts.pareto import ParetoContext, ParetoPoint, pareto_chart
from edgeopt.reports.charts.placer import Placer
from edgeopt.reports.charts.scale import log_ticks, wants_log
from edgeopt.reports.charts.text import Box, shorten, text_box, text_width
from tests.integration.chart_cases import levels
from tests.unit.reports.builders import device, qualify_result


def test_text_width_grows_with_wide_letters_and_shorten_fits():
    assert text_width("WWW", 11) > text_width("iii", 11) > 0
    cut = shorten("a-very-long-layer-name/with/many/parts", 11, 80)
    assert cut.endswith("\u2026") and text_width(cut, 11) <= 80
    assert shorten("short", 11, 80) == "short"


def test_placer_never_overlaps_and_stays_inside():
    bounds = Box(0, 0, 300, 200)
    placer = Placer(bounds)
    spots = [placer.place(150, 100, f"label number {i}", 11, 5) for i in range(40)]
    placed = [s for s in spots if s is not None]
    assert 4 < len(placed) < 40  # the ring fills up, then it says no instead of overlapping
    for i, a in enumerate(placed):
        assert a.box.inside(bounds)
        assert not any(a.box.intersects(b.box) for b in placed[i + 1:])
    assert any(s.leader for s in placed)  # the far ones point back to their point


def test_fixed_label_takes_its_place_only_when_free():
    placer = Placer(Box(0, 0, 200, 100))
    assert placer.fixed(10, 20, "p50", 11) is not None and placer.fixed(12, 22, "p99", 11) is None
    assert placer.fixed(195, 20, "off the edge", 11) is None


def test_log_axis_only_past_ten_times():
    assert wants_log([1.0, 11.0]) and not wants_log([1.0, 9.0]) and not wants_log([0.0, 100.0])
    assert log_ticks(0.8, 40) == [1, 2, 5, 10, 20]
    assert log_ticks(0.001, 1000) == [0.001, 0.01, 0.1, 1, 10, 100, 1000]


def test_histogram_cdf_and_bars_go_log_past_ten_times():
    long_tail = [1.0] * 900 + [30.0] * 100
    assert "log scale" in svg.histogram(long_tail) and "log scale" in svg.cdf(long_tail)
    assert "log scale" not in svg.histogram([1.0, 1.5, 2.0])
    assert "MiB, log scale" in svg.bars([("a", 2.0), ("b", 200.0)], unit="MiB")


def test_marker_labels_close_together_do_not_share_a_row():
    out = svg.histogram([1.0, 1.01, 1.02, 2.0], markers=[svg.Marker("p50", 1.01), svg.Marker("gate", 1.02, True)])
    ys = [float(y) for y in re.findall(r'class="(?:marker|limit)-text" x="[^"]+" y="([^"]+)"', out)]
    assert len(ys) == 2 and ys[0] != ys[1]


def test_pareto_draws_threshold_budget_recommendation_verdicts_and_whiskers():
    pts = [ParetoPoint("fp32/ort", 10.0, 1.0), ParetoPoint("fp16/ort", 10.1, 1.0, status="no-change"),
           ParetoPoint("int8/ort", 4.0, 0.995, low=3.8, high=4.3), ParetoPoint("int4/ort", 3.0, 0.93, status="fail")]
    ctx = ParetoContext(min_retention=0.99, budget_x=33.3, budget_label="30 FPS budget: p99 <= 33.3 ms",
                        recommended=2)
    out = pareto_chart(pts, ctx=ctx)
    assert 'class="threshold"' in out and "min retention 0.99" in out
    assert 'class="limit"' in out and "30 FPS budget" in out
    assert out.count('class="rec"') == 1 and "recommended: int8/ort" in out
    assert out.count('class="pt-fail"') == 1 and out.count('class="pt-same"') == 1
    assert out.count('class="whisker"') == 3 + 1  # the bar and its two caps, plus the legend's sample
    assert "95 % interval" in out and 'class="front"' in out


def test_crowded_pareto_numbers_points_and_names_them_in_the_key():
    pts = [ParetoPoint(f"recipe-{i}/runtime-with-a-long-name", 5.0 + 0.01 * i, 1.0) for i in range(30)]
    out = pareto_chart(pts)
    assert 'class="num"' in out and re.search(r">\d+  recipe-\d+/runtime-with-a-long-name: ", out)


def test_sweep_plot_tooltip_and_axis_mark_energy_estimates(tmp_path):
    from edgeopt.sweep.report import write_plot

    text = write_plot(levels(5), "energy", tmp_path / "p.svg", min_retention=0.99).read_text()
    assert "ESTIMATE from TDP" in text and "(ESTIMATE: target TDP, no power sensor)" in text


def test_sweep_table_marks_an_energy_estimate():
    lv = levels(1)[0]
    assert _energy(lv).endswith(ESTIMATE_MARK) and len(_energy(lv)) == 7
    measured = lv.model_copy(update={"energy_source": "measured"})
    assert ESTIMATE_MARK not in _energy(measured)


@pytest.mark.parametrize("needle", ['<div class="scroll"><table>', ".scroll { overflow-x: auto;"])
def test_report_tables_scroll_inside_their_box(needle):
    assert needle in render_html(qualify_result([device("board-1")]))


def test_report_marks_every_estimated_energy_figure():
    html = render_html(qualify_result([device("board-1")]))  # the builder's device has no power sensor
    start = html.index("<h3>Energy</h3>")
    energy = html[start:html.index("<h3>", start + 5)]
    assert energy.count('class="estimate"') == 1 + 4 + 3  # the note, each known figure, each cost figure
    assert "n/a mJ <span" not in energy  # a figure not known is not an estimate


def test_text_box_anchors():
    a, b = text_box(100, 50, "abc", 11, "start"), text_box(100, 50, "abc", 11, "end")
    assert a.x0 == 100 and b.x1 == 100 and a.y0 < 50 < a.y1


def _text_boxes(chart: str) -> list[tuple[str, Box]]:
    """Every unrotated ``<text>`` of a chart with its estimated box (what the placer believed)."""
    out = []
    for m in re.finditer(r'<text class="([^"]+)" x="([^"]+)" y="([^"]+)"(?: text-anchor="([^"]+)")?>([^<]*)</text>',
                         chart):
        css, x, y, anchor, text = m.groups()
        size = 12 if css == "label" else 11
        out.append((text, text_box(float(x), float(y), text, size, anchor or "start", css in ("rec-text", "num"))))
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 21, 34, 55, 80])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pareto_and_tradeoff_labels_never_collide_at_any_size(n, seed):
    """Random clouds (ties, clusters, a wide span) of every size: the boxes the placer reserved never overlap and stay
    on the canvas. (The Chromium test checks those estimates against the browser's real boxes.)"""
    import numpy as np

    rng = np.random.default_rng(seed)
    xs = rng.choice([1.0, 2.0, 2.0, 5.0, 40.0], n) * rng.uniform(0.9, 1.1, n)
    ys = np.round(rng.choice([1.0, 0.999, 0.99, 0.95], n) - rng.uniform(0, 0.01, n) * (seed > 0), 3)
    names = [f"{'int8-search+float-head' if i % 4 == 0 else 'fp16'}/{['onnxruntime', 'openvino'][i % 2]}-{i}"
             for i in range(n)]
    pts = [ParetoPoint(names[i], float(xs[i]), float(ys[i]), status=["pass", "fail", "no-change"][i % 3],
                       low=float(xs[i]) * 0.9 if i % 5 == 0 else None, high=float(xs[i]) * 1.1 if i % 5 == 0 else None)
           for i in range(n)]
    charts = [pareto_chart(pts, ctx=ParetoContext(min_retention=0.99, budget_x=10.0, budget_label="100 FPS budget",
                                                  recommended=0)),
              svg.tradeoff([(names[i], float(xs[i]), float(ys[i]) * 1000) for i in range(n)], best=[0])]
    for chart in charts:
        width, height = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', chart).groups())
        boxes = _text_boxes(chart)
        canvas = Box(0, 0, width, height)
        for i, (text, box) in enumerate(boxes):
            assert box.inside(canvas), (text, box, width, height)
            clash = [t for t, b in boxes[i + 1:] if box.intersects(b)]
            assert not clash, (text, clash)


def test_a_budget_far_beyond_the_points_is_stated_in_the_legend():
    pts = [ParetoPoint("a", 1.0, 1.0), ParetoPoint("b", 2.0, 0.9)]
    out = pareto_chart(pts, ctx=ParetoContext(budget_x=50.0, budget_label="20 FPS budget: p99 <= 50 ms"))
    assert "20 FPS budget: p99 &lt;= 50 ms (beyond the axis)" in out


def test_qualify_pareto_draws_the_retention_gate():
    from edgeopt.qualify.result import SweepPoint
    from tests.unit.reports.builders import GATES

    sweep = [SweepPoint(label="fp32", latency_ms=2.0, retention=1.0), SweepPoint(label="int8", latency_ms=0.8,
                                                                                  retention=0.985)]
    html = render_html(qualify_result([device("b")], sweep=sweep, gates={**GATES, "retention": {"min_ratio": 0.99}}))
    assert "min retention 0.99" in html and 'class="threshold"' in html
