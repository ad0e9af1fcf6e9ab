"""The profile's HTML (standalone page and the section the report includes) in a real headless Chromium: it renders
its bar charts, the SVG stands alone (xmlns), and nothing is requested from anywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgeopt.fsutil import atomic_write_text
from edgeopt.profile import compare_profiles, profile
from edgeopt.reports.profile_html import SVG_NS, layer_chart, profile_section, render_profile_html
from tests.integration import chromium
from tests.profile_models import BIG, big_conv_model, quantize_qdq

pytestmark = pytest.mark.skipif(chromium.unavailable_reason() is not None,
                                reason=chromium.unavailable_reason() or "")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("profile-html")
    fp32 = big_conv_model(root / "big.onnx")
    int8 = quantize_qdq(fp32, root / "big.int8.onnx")
    a = profile(fp32, runtime="onnxruntime", iterations=5, warmup=1)
    b = profile(int8, runtime="onnxruntime", iterations=5, warmup=1)
    out = {"single": root / "single.html", "compare": root / "compare.html", "chart": root / "chart.svg"}
    atomic_write_text(out["single"], render_profile_html(a, top=5))
    atomic_write_text(out["compare"], render_profile_html(compare_profiles(a, b), top=5))
    atomic_write_text(out["chart"], layer_chart(a, top=5))
    assert "<section" in profile_section(a)
    return out


def test_page_renders_its_bars(pages, browser):
    dom = browser.dump_dom(pages["single"].as_uri())
    assert "Per-layer profile" in dom and "per op type" in dom.lower()
    assert len(re.findall(r"<svg\b", dom)) == 1 and dom.count('class="pbar ') >= 5 and BIG in dom
    dom = browser.dump_dom(pages["compare"].as_uri())
    assert "Layer by layer: A vs B" in dom and len(re.findall(r"<svg\b", dom)) == 3
    assert "precision changed" in dom


def test_nothing_is_requested_and_the_svg_stands_alone(pages, browser):
    session, requested = browser.load(pages["compare"].as_uri())
    assert requested == [pages["compare"].as_uri()]
    assert browser.evaluate("document.querySelectorAll('script, link, img, iframe').length", session) == 0
    width = browser.evaluate("document.querySelector('svg').getBoundingClientRect().width", session)
    assert width > 100
    browser.close_tab(session)
    session, requested = browser.load(pages["chart"].as_uri())  # the chart alone, as an SVG document
    assert requested == [pages["chart"].as_uri()]
    assert browser.evaluate("document.documentElement.namespaceURI", session) == SVG_NS
    assert browser.evaluate("document.querySelectorAll('rect.pbar').length", session) == 5
    browser.close_tab(session)
