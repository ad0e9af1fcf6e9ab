"""The small lies of issue 16, item 10: each message says what is true."""

from __future__ import annotations

import importlib.util
import io
import re

import click
import pytest
from rich.console import Console

from edgeopt.cli import render as render_mod
from edgeopt.cli.common import parse_shapes
from edgeopt.cli.recipes_cmd import _describe
from edgeopt.registry import get_runtime
from edgeopt.reports import svg
from edgeopt.reports.html_report import _human, _machine_memory
from tests.synthetic_results import bench_result, samples


def test_recipes_says_int8_nncf_is_unavailable_without_nncf(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nncf" else real(name, *a))
    item = _describe("int8-nncf")
    assert item["status"].startswith("unavailable: ") and "edgeopt[openvino,nncf]" in item["status"]


def test_recipes_says_ok_when_nncf_is_there():
    if importlib.util.find_spec("nncf") is None or importlib.util.find_spec("openvino") is None:
        pytest.skip("nncf/openvino not installed: the [openvino,nncf] extras")
    assert _describe("int8-nncf")["status"] == "ok"


def test_coreml_install_hint_names_the_extra():
    assert "edgeopt[coreml]" in get_runtime("coreml").install


def test_a_passing_model_memory_gate_does_not_paint_the_process_bar_red():
    items = [("baseline", 400.0), ("peak (process)", 600.0), ("model", 200.0)]
    chart = svg.bars(items, unit="MiB", limit=300.0, judged=2)
    assert "bar-over" not in chart  # the process peak is over 300 MiB, but the gate is on the model's 200
    assert svg.bars(items, unit="MiB", limit=300.0, judged=1).count('class="bar-over"') == 1


def test_repeated_shape_for_one_input_is_an_error_and_different_inputs_merge():
    assert parse_shapes(("a=1x3", "b=2x4")) == {"a": [1, 3], "b": [2, 4]}
    with pytest.raises(click.BadParameter, match="'a' is given twice"):
        parse_shapes(("a=1x3", "a=1x4"))


def test_an_invalid_run_says_why_on_the_fps_line(monkeypatch):
    short = bench_result(samples(50, median_ms=1.0))  # p99 needs 100 samples
    from edgeopt.metrics.budget import check_fps

    short = short.model_copy(update={"fps_budget": check_fps(30.0, "p99", short.latency_ms.p99, False)})
    buf = io.StringIO()
    monkeypatch.setattr(render_mod, "_out", Console(file=buf, width=400, color_system=None))
    render_mod.render_bench(short)
    line = next(x for x in buf.getvalue().splitlines() if "FPS budget" in x)
    assert re.search(r"FAIL: the run is invalid \(p99 needs at least 100 samples", line) and "headroom" not in line


def test_html_environment_is_human():
    assert _machine_memory({"memory_total_mb": 24105.55859375, "governor": None}) == \
        "23.5 GiB, CPU governor not reported"
    text = _human({"warmup": 10, "min_duration_s": 2.0, "runtime_options": {}, "shapes": {"x": [1, 3]},
                   "inputs_npz": None, "energy": {"enabled": True, "rate_hz": 20.0}})
    assert text == "warmup: 10, min_duration_s: 2, shapes: (x: [1, 3]), energy: (enabled: True, rate_hz: 20)"
    assert "{" not in text and "null" not in text
