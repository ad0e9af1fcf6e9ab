"""``report.html`` in a real headless Chromium: it renders, its charts are there, and it requests nothing."""

from __future__ import annotations

import re
import struct
import zlib
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


def test_renders_with_its_charts(report, tmp_path):
    dom = chromium.dump_dom(report.as_uri(), tmp_path / "profile")
    assert "<h1>Qualification" in dom and "Environment and reproducibility" in dom
    assert len(re.findall(r"<svg\b", dom)) == 7  # 2 devices x (histogram, CDF, memory) + Pareto
    assert len(re.findall(r"<polyline", dom)) >= 3 and dom.count('class="bar"') > 20
    assert "Device error: timeout" in dom and "Sweep: Pareto front" in dom


def test_no_request_leaves_the_page(report, tmp_path):
    with chromium.DevTools(tmp_path / "profile") as browser:
        session, requested = browser.load(report.as_uri())
        assert requested == [report.as_uri()]  # the page itself, and nothing else
        assert browser.evaluate("document.querySelectorAll('svg').length", session) == 7
        assert browser.evaluate("document.querySelectorAll('script, link, img, iframe').length", session) == 0
        width = browser.evaluate("document.querySelector('svg').getBoundingClientRect().width", session)
        assert width > 100  # laid out, not collapsed
        # the check can fail: a page with an external image shows its request
        leaky = tmp_path / "leaky.html"
        leaky.write_text('<html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
        _, requested = browser.load(leaky.as_uri())
        assert "http://127.0.0.1:9/x.png" in requested


def _png_pixels(path: Path) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct RGB(A) pixels of an 8-bit, non-interlaced PNG (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colors: set[bytes] = set()
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, ul = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + left) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + up) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif ftype == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else ul)) & 0xFF
        if y % 8 == 0:
            colors.update(bytes(line[x:x + 3]) for x in range(0, stride, bpp * 8))
        prev = line
    return width, height, colors


def test_screenshot_is_not_blank(report, tmp_path):
    shot = chromium.screenshot(report.as_uri(), tmp_path / "report.png", tmp_path / "profile", size="1000,1400")
    width, height, colors = _png_pixels(shot)
    assert (width, height) == (1000, 1400)
    assert b"\xff\xff\xff" in colors and len(colors) > 20  # a white page with text, badges, bars and lines
