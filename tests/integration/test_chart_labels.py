"""Every chart kind, at many points, has no two labels on top of each other and none off the canvas (issue 24).

Measured by the browser itself: each chart is rendered in headless Chromium, a small script in the page reads every
``<text>`` element's box (``getBoundingClientRect``, so rotated axis titles count as drawn) and writes the overlaps
and the boxes outside the ``<svg>`` into the DOM, which ``--dump-dom`` returns. A screenshot of each kind is kept
under the test's tmp dir and, when ``EDGEOPT_ARTIFACTS_DIR`` is set, copied there.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from edgeopt.reports.svg import CHART_CSS
from tests.integration import chromium
from tests.integration.chart_cases import cases

pytestmark = pytest.mark.skipif(chromium.unavailable_reason() is not None,
                                reason=chromium.unavailable_reason() or "")

TOLERANCE_PX = 1.0  # boxes may touch (font boxes include line gap); more than a pixel each way is a collision

PROBE = """<script>
(function () {
  const tol = TOLERANCE, out = [];
  document.querySelectorAll("svg").forEach(function (chart) {
    const frame = chart.getBoundingClientRect();
    const boxes = Array.from(chart.querySelectorAll("text")).filter(t => t.textContent.trim()).map(function (t) {
      const r = t.getBoundingClientRect();
      return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
    });
    const overlaps = [], outside = [];
    boxes.forEach(function (a, i) {
      if (a.x0 < frame.left - tol || a.y0 < frame.top - tol || a.x1 > frame.right + tol || a.y1 > frame.bottom + tol)
        outside.push(a.text);
      boxes.slice(i + 1).forEach(function (b) {
        const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0), h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
        if (w > tol && h > tol) overlaps.push([a.text, b.text]);
      });
    });
    out.push({id: chart.id, labels: boxes.length, overlaps: overlaps, outside: outside,
              width: frame.width, height: frame.height});
  });
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>""".replace("TOLERANCE", str(TOLERANCE_PX))


def _page(chart: str, kind: str) -> str:
    chart = chart.replace("<svg ", f'<svg id="{kind}" ', 1)
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{{margin:0}}{CHART_CSS}</style></head>'
            f"<body>{chart}{PROBE}</body></html>")


def _probe(page: Path, tmp_path: Path) -> dict:
    dom = chromium.dump_dom(page.as_uri(), tmp_path / "profile-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    return json.loads(html.unescape(found.group(1)))[0]


def _keep(shot: Path) -> None:
    target = os.environ.get("EDGEOPT_ARTIFACTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)


@pytest.mark.parametrize("kind", list(cases(Path("."))))
def test_no_label_overlaps_or_leaves_the_chart(kind, tmp_path):
    build, points = cases(tmp_path)[kind]
    chart = build(points)
    page = tmp_path / f"{kind}.html"
    page.write_text(_page(chart, kind))
    found = _probe(page, tmp_path)
    size = f"{int(found['width']) + 2},{int(found['height']) + 2}"
    _keep(chromium.screenshot(page.as_uri(), tmp_path / f"chart-{kind}.png", tmp_path / "profile-shot", size=size))
    print(f"{kind}: {points} points, {found['labels']} labels, {len(found['overlaps'])} overlapping pairs, "
          f"{len(found['outside'])} outside")
    assert not found["overlaps"], f"{kind}: {len(found['overlaps'])} overlapping label pairs: {found['overlaps'][:8]}"
    assert not found["outside"], f"{kind}: {len(found['outside'])} labels leave the chart: {found['outside'][:8]}"
