"""The four report formats: complete, parseable, atomic, escaped, and self-contained (no network)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from edgeopt import reports
from edgeopt.qualify.result import QualifyResult, SweepPoint
from edgeopt.reports import render_html, render_junit, render_markdown, report_paths, write_reports
from tests.unit.reports.builders import device, qualify_result

PASSING = {"latency": {"percentile": "p99", "max_ms": 1.5}, "memory": {"max_mb": 64}, "energy": {"max_mj": 100}}


def test_write_reports_writes_every_format_atomically(tmp_path):
    result = qualify_result([device("board-1"), device("board-2", 2.0)])
    paths = write_reports(result, tmp_path / "report")
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == [
        "junit.xml", "report.html", "result.json", "summary.md"]  # no temp files left behind
    assert set(paths) == {"json", "html", "junit", "markdown"}
    data = json.loads(paths["json"].read_text())
    assert data["schema_version"] == "1.0" and data["kind"] == "qualify"
    assert len(data["devices"][0]["bench"]["samples_ms"]) == 1500  # everything, raw samples included
    assert QualifyResult.model_validate(data) == result


def test_a_renderer_listed_once_is_written_and_listed(tmp_path, monkeypatch):
    """RENDERERS is the only list: a new format is written and named in report_paths by one entry there."""
    result = qualify_result([device("board-1")])
    monkeypatch.setitem(reports.RENDERERS, "names", ("devices.txt", lambda r: " ".join(d.label for d in r.devices)))
    listed = report_paths(tmp_path / "r")
    assert listed["names"] == tmp_path / "r" / "devices.txt"
    assert write_reports(result, tmp_path / "r") == listed
    assert (tmp_path / "r" / "devices.txt").read_text() == "board-1"


def test_junit_has_one_case_per_gate_per_device_with_failures_and_errors():
    result = qualify_result([device("board-1"), device("board-2", 2.0), device("pi", error="connection refused")])
    root = ET.fromstring(render_junit(result))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["edgeopt.qualify.demo.board-1", "edgeopt.qualify.demo.board-2",
                                               "edgeopt.qualify.demo.pi"]
    cases = root.findall(".//testcase")
    assert len(cases) == 3 * 5 and root.get("tests") == "15"
    failed = {(c.get("classname").rsplit(".", 1)[-1], c.get("name")) for c in cases if c.find("failure") is not None}
    # board-1: model too big; board-2 (2 ms): model too big and p99 over 1.5 ms
    assert failed == {("board-1", "model_size"), ("board-2", "model_size"), ("board-2", "latency")}
    assert root.get("failures") == "3" and root.get("errors") == "5"
    errors = [c for c in cases if c.find("error") is not None]
    assert len(errors) == 5 and all("connection refused" in (c.find("error").text or "") for c in errors)
    latency = next(c for c in suites[1].findall("testcase") if c.get("name") == "latency")
    assert "latency p99" in latency.find("failure").get("message")


def test_markdown_summary_for_a_pull_request():
    ok = qualify_result([device("board-1", gates=PASSING)], gates=PASSING)
    text = render_markdown(ok)
    assert text.startswith("## ✅ PASS: edgeopt qualify `demo`") and "3/3 gates passed" in text
    assert "| board-1 | energy per inference |" in text and "(ESTIMATE)" in text
    bad = render_markdown(qualify_result([device("board-1", 2.0)]))
    assert bad.startswith("## ❌ FAIL") and "**Why it failed**" in bad and "`board-1` latency:" in bad
    assert render_markdown(qualify_result([device("pi", error="boom")])).startswith("## ⚠️ DEVICE ERROR")


def test_html_is_self_contained_and_has_the_sections():
    sweep = [SweepPoint(label="fp32", latency_ms=2.0, retention=1.0), SweepPoint(label="int8", latency_ms=0.8,
             retention=0.985), SweepPoint(label="int4", latency_ms=1.2, retention=0.9)]
    html = render_html(qualify_result([device("board-1"), device("pi", error="timeout")], sweep=sweep))
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    assert not re.search(r"https?://", html) and "<script" not in html and "<link" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(?!#)""", html)  # nothing to load, only in-page anchors
    assert "@import" not in html and "url(" not in html
    assert html.count("<svg") == 4  # histogram, CDF, memory bars, Pareto
    for section in ("Gates", "Latency", "Memory and cold start", "Energy", "Frame-paced load",
                    "Sweep: Pareto front", "Environment and reproducibility"):
        assert section in html, section
    assert "ESTIMATE" in html and "per million inferences" in html and "Device error: timeout" in html
    assert "ab" * 32 in html  # model sha256 in the fingerprint


def test_html_escapes_everything_from_specs_and_devices():
    evil = "<script>alert(1)</script>"
    html = render_html(qualify_result([device("board-1")], name="x", description=evil))
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_nothing_is_written_when_rendering_fails(tmp_path):
    result = qualify_result([device("board-1")])
    broken = result.model_copy(update={"devices": [*result.devices, "not a device"]})
    with pytest.raises(AttributeError):
        write_reports(broken, tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_a_target_mismatch_is_loud_in_html_and_junit():
    from edgeopt.qualify.gate_rows import target_row

    d = device("pi")
    assert d.bench is not None
    bench = d.bench.model_copy(update={"target_mismatch": ["architecture: the device is x86_64, target testboard is "
                                                           "aarch64"]})
    row = target_row("pi", bench.target_mismatch, bench.target, allowed=False)
    assert row is not None
    d = d.model_copy(update={"bench": bench, "gates": [*d.gates, row], "passed": False})
    html = render_html(qualify_result([d]))
    assert '<p class="warn"><b>TARGET MISMATCH</b>' in html and "the device is x86_64" in html
    root = ET.fromstring(render_junit(qualify_result([d])))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert "x86_64" in props["target_mismatch"]
    (case,) = [c for c in root.iter("testcase") if c.get("name") == "target"]
    assert case.find("failure") is not None
