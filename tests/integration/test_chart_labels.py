"""Every chart kind, at many points, has no two labels on top of each other and none off the canvas (issue 24).

Measured by the browser itself: each chart is rendered in headless Chromium, a small script in the page reads every
``<text>`` element's box (``getBoundingClientRect``, so rotated axis titles count as drawn) and writes the overlaps
and the boxes outside the ``<svg>`` into the DOM, read back over DevTools. A screenshot of each kind is kept
under the test's tmp dir and, when ``EDGEOPT_ARTIFACTS_DIR`` is set, copied there. One browser serves the whole
file (the worker's ``browser``, tests/integration/conftest.py; a tab per page): a Chromium start costs ~1-2 CPU-s,
and the file started two per chart kind (a DOM dump, then a screenshot).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from edgeopt.reports.svg import CHART_CSS
from tests.integration import chromium
from tests.integration.chart_cases import DOCS_POINTS, cases, profile_page, tradeoff_page

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


def _page(charts: list[str], kind: str) -> str:
    body = "".join(c.replace("<svg ", f'<svg id="{kind}-{i}" style="display:block" ', 1) for i, c in enumerate(charts))
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{{margin:0}}{CHART_CSS}</style></head>'
            f"<body>{body}{PROBE}</body></html>")


def _probe(browser: chromium.DevTools, session: str) -> list[dict]:
    found = browser.evaluate('(document.getElementById("probe") || {}).textContent', session)
    assert found, "the probe script did not run"
    return list(json.loads(found))


def _keep(shot: Path) -> None:
    target = os.environ.get("EDGEOPT_ARTIFACTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(target) / shot.name)


@pytest.mark.parametrize("kind", list(cases(Path("."))))
def test_no_label_overlaps_or_leaves_the_chart(kind, browser, tmp_path):
    """One point, the docs' typical size and the most points tested, stacked on one page (one tab)."""
    build, most = cases(tmp_path)[kind]
    sizes = sorted({1, DOCS_POINTS[kind], most})
    page = tmp_path / f"{kind}.html"
    page.write_text(_page([build(n) for n in sizes], kind))
    session, _ = browser.load(page.as_uri(), settle_s=0)
    found = _probe(browser, session)
    width, height = max(int(f["width"]) for f in found) + 2, sum(int(f["height"]) for f in found) + 2
    _keep(browser.screenshot(session, tmp_path / f"chart-{kind}.png", width, height))
    browser.close_tab(session)
    for n, f in zip(sizes, found, strict=True):
        print(f"{kind}: {n} points, {f['labels']} labels, {len(f['overlaps'])} overlapping pairs, "
              f"{len(f['outside'])} outside")
    for n, f in zip(sizes, found, strict=True):
        assert not f["overlaps"], f"{kind}, {n} points: {len(f['overlaps'])} overlapping pairs: {f['overlaps'][:8]}"
        assert not f["outside"], f"{kind}, {n} points: {len(f['outside'])} labels leave the chart: {f['outside'][:8]}"


WIDTHS = """(() => { const d = document.documentElement;
  return {page: d.scrollWidth, view: d.clientWidth,
          scrolling: Array.from(document.querySelectorAll(".scroll")).filter(e => e.scrollWidth > e.clientWidth + 1)
                       .length}; })()"""


@pytest.mark.parametrize("kind", ["profile", "tradeoff"])
def test_a_wide_table_scrolls_inside_its_box_not_the_page(kind, browser, tmp_path):
    page = tmp_path / f"{kind}.html"
    page.write_text(profile_page(40) if kind == "profile" else tradeoff_page(32))
    session, _ = browser.load(page.as_uri(), settle_s=0)
    found = browser.evaluate(WIDTHS, session)
    browser.close_tab(session)
    assert found["page"] <= found["view"], found  # the page itself never scrolls sideways
    if kind == "profile":
        assert found["scrolling"] >= 1, found  # the 300-character node name scrolls inside its table's box
