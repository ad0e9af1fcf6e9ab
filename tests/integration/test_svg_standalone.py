"""Every SVG edgeopt writes as a file renders on its own in real headless Chromium (no page around it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.reports import svg
from edgeopt.sweep.report import write_plot
from edgeopt.sweep.result import Level
from tests.integration import chromium

pytestmark = pytest.mark.skipif(chromium.unavailable_reason() is not None,
                                reason=chromium.unavailable_reason() or "")

BAR_BLUE = bytes.fromhex("54aeff")
FRONT_GREEN = bytes.fromhex("1a7f37")


def _level(recipe: str, latency_ms: float, retention: float) -> Level:
    return Level(recipe=recipe, runtime="onnxruntime", runtime_version="1", artifact=f"{recipe}.onnx", size_bytes=1000,
                 latency_ms=latency_ms, latency_ms_p99=latency_ms * 1.2, memory_mb_peak=None, energy_mj=None,
                 energy_source=None, metric="agreement", metric_value=retention, retention=retention,
                 meets_retention=retention >= 0.99, meets_budget=True, passed=retention >= 0.99, valid=True,
                 cached=False)


def _render(path: Path, tmp_path: Path, browser: chromium.DevTools) -> set[bytes]:
    """The file's distinct pixels, in the worker's shared ``browser`` (tests/integration/conftest.py)."""
    dom = browser.dump_dom(path.as_uri())
    assert "does not appear to have any style information" not in dom, "Chromium shows the XML tree, not a chart"
    shot = browser.screenshot_of(path.as_uri(), tmp_path / f"{path.stem}.png", size="700,320")
    _, _, colors = chromium.png_pixels(shot, step=1)
    return colors


def test_pareto_svg_of_a_sweep_renders_alone(tmp_path, browser):
    levels = [_level("fp32", 10.0, 1.0), _level("int8", 4.0, 0.995), _level("prune30-int8", 5.0, 0.90)]
    plot = write_plot(levels, "latency", tmp_path / "pareto.svg")
    text = plot.read_text()
    assert text.startswith("<?xml") and 'xmlns="http://www.w3.org/2000/svg"' in text and "<style>" in text
    colors = _render(plot, tmp_path, browser)
    assert FRONT_GREEN in colors  # the frontier line and its points are drawn in their own colour, not black
    assert len(colors) > 10


@pytest.mark.parametrize("kind", ["histogram", "cdf", "bars"])
def test_every_chart_kind_renders_alone(kind, tmp_path, browser):
    samples = [1.0 + 0.01 * (i % 37) for i in range(500)]
    chart = {"histogram": lambda: svg.histogram(samples, markers=[svg.Marker("p99", 1.36)]),
             "cdf": lambda: svg.cdf(samples),
             "bars": lambda: svg.bars([("model", 12.0), ("process", 40.0)], unit="MiB", limit=30.0)}[kind]()
    path = tmp_path / f"{kind}.svg"
    path.write_text(svg.standalone(chart))
    colors = _render(path, tmp_path, browser)
    assert len(colors) > 10
    if kind in ("histogram", "bars"):
        assert BAR_BLUE in colors  # a styled bar: with no stylesheet every shape is black
