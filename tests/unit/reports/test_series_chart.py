"""The LLM report's line charts (TPOT over the generation, TTFT vs prompt length): one polyline per series, a
legend, the gate's limit as a red line when it is within range, valid standalone SVG, escaped names."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from edgeopt.reports import svg
from edgeopt.reports.charts.series import series_chart

NS = {"s": "http://www.w3.org/2000/svg"}


def test_series_limit_legend_and_standalone_svg():
    chart = series_chart([("p8 <cell>", [(2, 0.4), (3, 0.5), (4, 0.45)]), ("p32", [(2, 0.6), (3, 0.7)])],
                         x_label="output token", y_label="TPOT (ms)", title="TPOT over the generation",
                         limit=("TPOT gate", 1.0))
    root = ET.fromstring(svg.standalone(chart).split("\n", 1)[1])
    lines = root.findall("s:polyline", NS)
    assert len(lines) == 2 and len(lines[0].get("points").split()) == 3
    assert [t.text for t in root.findall("s:polyline/s:title", NS)] == ["p8 <cell>", "p32"]  # escaped, then parsed
    assert root.find("s:line[@class='limit']", NS) is not None
    assert "TPOT gate" in [t.text for t in root.findall("s:text", NS)]


def test_a_limit_far_above_the_data_is_left_out_and_empty_input_says_so():
    far = series_chart([("a", [(8, 1.0), (32, 2.0)])], x_label="x", y_label="y", title="t", limit=("gate", 500.0),
                       points=True)
    assert 'class="limit"' not in far and far.count("<circle") == 2
    assert "no data" in series_chart([], x_label="x", y_label="y", title="t")
