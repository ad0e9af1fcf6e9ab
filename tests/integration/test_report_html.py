"""``report.html`` in a real headless Chromium: it renders, its charts are there, and it requests nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgeopt.qualify.result import SweepPoint
from edgeopt.reports import write_reports
from tests.integration import chromium
from tests.unit.reports.builders import device, qualify_result

pytestmark = pytest.mark.skipif(chromium.unavailable_reason() is not None,
                                reason=chromium.unavailable_reason() or "")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sweep = [SweepPoint(label="fp32", latency_ms=2.0, retention=1.0),
             SweepPoint(label="int8", latency_ms=0.8, retention=0.985),
             SweepPoint(label="prune50", latency_ms=1.4, retention=0.95)]
    result = qualify_result([device("board-1"), device("board-2", 2.0), device("pi", error="timeout")], sweep=sweep)
    return write_reports(result, tmp_path_factory.mktemp("report"))["html"]


def test_renders_with_its_charts(report, browser):
    dom = browser.dump_dom(report.as_uri())
    assert "<h1>Qualification" in dom and "Environment and reproducibility" in dom
    assert len(re.findall(r"<svg\b", dom)) == 7  # 2 devices x (histogram, CDF, memory) + Pareto
    assert len(re.findall(r"<polyline", dom)) >= 3 and dom.count('class="bar"') > 20
    assert "Device error: timeout" in dom and "Sweep: Pareto front" in dom


def test_no_request_leaves_the_page(report, browser, tmp_path):
    session, requested = browser.load(report.as_uri())
    assert requested == [report.as_uri()]  # the page itself, and nothing else
    assert browser.evaluate("document.querySelectorAll('svg').length", session) == 7
    assert browser.evaluate("document.querySelectorAll('script, link, img, iframe').length", session) == 0
    width = browser.evaluate("document.querySelector('svg').getBoundingClientRect().width", session)
    assert width > 100  # laid out, not collapsed
    browser.close_tab(session)
    # the check can fail: a page with an external image shows its request
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    session, requested = browser.load(leaky.as_uri())
    browser.close_tab(session)
    assert "http://127.0.0.1:9/x.png" in requested


def test_screenshot_is_not_blank(report, browser, tmp_path):
    shot = browser.screenshot_of(report.as_uri(), tmp_path / "report.png", size="1000,1400")
    width, height, colors = chromium.png_pixels(shot)
    assert (width, height) == (1000, 1400)
    assert b"\xff\xff\xff" in colors and len(colors) > 20  # a white page with text, badges, bars and lines
