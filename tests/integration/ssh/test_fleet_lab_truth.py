"""What a lab team saw on a fleet of loopback boards tagged as Jetsons (issue 23, items 7, 9, 12, 16).

The devices are real sshd processes on 127.0.0.1 (tests/integration/ssh/lab.py) declared as
``jetson-orin-nano``: that target prefers TensorRT, which this machine lacks, and is an aarch64 board, which this
x86 machine is not. So "ready" must name the runtime that will run, ``bench`` must use it, and the target
mismatch a single-device bench prints must reach the fleet's table, JSON and JUnit.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.bench.fleet import fleet_benchmark
from edgeopt.cli.main import main
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

ORIN = "jetson-orin-nano"
QUICK = ["-n", "20", "--min-duration", "0.2", "--warmup", "2", "--no-energy"]


@pytest.fixture(scope="module")
def orin_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path_factory.mktemp("orin-lab"), 2, target=ORIN) as running:
        yield running


def _common(lab: Lab) -> list[str]:
    return ["--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts)]


def test_check_says_which_runtime_it_is_ready_with_and_what_is_missing(orin_lab: Lab, capsys):
    code = main(["devices", "check", "--devices", "tag:lab", *_common(orin_lab), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    for row in doc["devices"]:
        report = row["report"]
        assert report["ready"] and report["runtime"] == "onnxruntime"
        assert report["summary"].startswith("ready with onnxruntime; tensorrt missing (install: "), report["summary"]
        assert any("architecture" in m for m in report["target_mismatch"]), report["target_mismatch"]
    assert any(w.startswith("lab-00: TARGET MISMATCH") for w in doc["warnings"]), doc["warnings"]
    main(["fleet", "check", "--devices", "lab-01", *_common(orin_lab)])
    text = capsys.readouterr().out
    assert "lab-01: ready with onnxruntime; tensorrt missing" in text and "TARGET MISMATCH" in text


def test_bench_uses_the_runtime_the_device_has_and_says_so(orin_lab: Lab, tiny_cnn: Path, capsys):
    code = main(["bench", str(tiny_cnn), "--device", "lab-00", *_common(orin_lab), *QUICK, "--no-budget",
                 "--no-history", "--json"])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert code == 0, doc
    assert doc["runtime"]["name"] == "onnxruntime"
    assert "note: tensorrt not on ssh:" in captured.err and "measured with onnxruntime" in captured.err
    assert any("measured with onnxruntime" in w for w in doc["warnings"])


def test_fleet_bench_keeps_warnings_and_names_the_budget_it_failed(orin_lab: Lab, tiny_cnn: Path, tmp_path: Path,
                                                                   capsys):
    junit = tmp_path / "junit.xml"
    code = main(["fleet", "bench", str(tiny_cnn), "--devices", "lab-00", *_common(orin_lab), *QUICK,
                 "--fps", "100000", "--percentile", "p99", "--no-history", "--junit", str(junit)])
    text = capsys.readouterr().out
    assert code == 1
    assert "lab-00: FAIL: p99 " in text and "ms > 0.010 ms budget at 100000 FPS" in text, text
    assert "on 1 device (lab-00)" in text and "1 devices" not in text, text
    props = [(p.get("name"), p.get("value")) for p in ET.parse(junit).getroot().iter("property")]
    assert any(n == "warning" and v.startswith("TARGET MISMATCH") for n, v in props), props
    assert any(n == "warning" and "measured with onnxruntime" in v for n, v in props), props

    result = fleet_benchmark(tiny_cnn, devices="tag:lab", inventory=orin_lab.inventory,
                             known_hosts=orin_lab.known_hosts, iterations=20, min_duration_s=0.2, warmup=2,
                             energy=False, fps=100000, percentile="p99")
    for row in result.rows:
        assert row.status == "ok", row.error
        assert row.verdict is not None and row.verdict.startswith("FAIL: p99 ")
        assert "budget at 100000 FPS" in row.verdict
        assert any(w.startswith("TARGET MISMATCH") for w in row.warnings)
    assert {w.split(":")[0] for w in result.warnings if "TARGET MISMATCH" in w} == {"lab-00", "lab-01"}


def test_a_refused_host_key_is_a_trust_decision_with_its_own_kind_and_exit_code(orin_lab: Lab, tiny_cnn: Path,
                                                                                  tmp_path: Path, capsys):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    code = main(["fleet", "bench", str(tiny_cnn), "--devices", "tag:lab", "--inventory", str(orin_lab.inventory),
                 "--known-hosts", str(empty), *QUICK, "--no-history", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert [r["error_kind"] for r in doc["rows"]] == ["trust", "trust"]
    assert "--accept-new-host-key" in doc["rows"][0]["error"]
    assert code == 4 == doc["exit_code"]
    code = main(["fleet", "check", "--devices", "lab-00", "--inventory", str(orin_lab.inventory), "--known-hosts",
                 str(empty), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 4 and doc["devices"][0]["error_kind"] == "trust"
    spec = tmp_path / "q.yaml"
    spec.write_text(f"name: q\nmodel: {{path: {tiny_cnn}}}\ninventory: {orin_lab.inventory}\n"
                    f"targets:\n  - {{devices: 'tag:lab', known_hosts: {empty}}}\n"
                    "measure: {iterations: 20, min_duration_s: 0.2, warmup: 2, energy: false}\n"
                    "gates: {latency: {max_ms: 1000}}\nallow_target_mismatch: true\n")
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 4 == doc["exit_code"] and {d["error_kind"] for d in doc["devices"]} == {"trust"}
    assert empty.read_text() == ""  # nothing recorded


def test_devices_list_keeps_the_address_whole_at_120_columns(orin_lab: Lab, capsys):
    assert main(["devices", "list", "--inventory", str(orin_lab.inventory)]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 120
    for d in orin_lab.devices:  # the port tells loopback devices apart: never cut
        assert f"root@127.0.0.1:{d.port}" in text, text


def test_fleet_sweep_keeps_each_devices_warnings_and_untested_data(orin_lab: Lab, tiny_cnn: Path, tmp_path: Path,
                                                                    capsys):
    from tests.integration.test_degenerate_eval import _same_image

    data = _same_image(tiny_cnn, tmp_path / "same.npz")
    out = tmp_path / "sweep"
    code = main(["sweep", str(tiny_cnn), "--eval", str(data), "--recipes", "fp16", "--iterations", "10",
                 "--min-duration", "0.05", "--no-int8-search", "--objective", "size", "--devices", "lab-00",
                 *_common(orin_lab), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "warning: lab-00: runtime tensorrt is not installed where the sweep runs; skipped" in captured.err
    assert "untested by this data" in captured.out, captured.out  # the device's recommendation says it
    doc = json.loads((out / "fleet-sweep.json").read_text())
    assert any(w.startswith("lab-00: evaluation data cannot tell levels apart") for w in doc["warnings"])
    assert doc["rows"][0]["result"]["eval_cannot_tell"]
