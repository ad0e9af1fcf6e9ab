"""A board is untrusted input, over SSH: a lying agent of the tests' own on the loopback sshd, beside real ones.

The device's interpreter is tests/fake_agent.py's stand-in (``python`` in the inventory or ``--python``): it runs
the real agent pushed by the real SSH runner, then lies. Floods over the channel, a result.json and an eval output
too large to fetch, deep JSON, and a fleet qualify where one device lies while the honest one's verdict and every
report stand. docs/reliability.md, "Untrusted device".
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from edgeopt.cli.main import main
from edgeopt.errors import RunnerError
from edgeopt.evaluation.device import device_outputs
from tests.conftest import make_matmul_model
from tests.fake_agent import INJECT, fake_python
from tests.integration.ssh.conftest import Device
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

CONTROL = [chr(c) for c in (*range(0, 9), *range(11, 32), 0x7F, 0x9B)]


def _bench(device: Device, model: Path, python: Path, *extra: str) -> list[str]:
    return ["bench", str(model), "--host", device.sshd.spec, "--key", str(device.sshd.client_key),
            "--known-hosts", str(device.known_hosts), "--accept-new-host-key", "--python", str(python),
            "--iterations", "30", "--min-duration", "0.05", "--warmup", "2", "--no-energy", *extra]


def _clean(text: str) -> bool:
    return not any(c in text for c in CONTROL)


def test_injected_strings_over_ssh_reach_the_terminal_as_text(shared_device: Device, tiny_cnn: Path,
                                                              tmp_path: Path, capsys):
    code = main(_bench(shared_device, tiny_cnn, fake_python(tmp_path, "inject")))
    out = capsys.readouterr()
    assert code in (0, 1) and _clean(out.out) and _clean(out.err), out.err
    assert "[link=https://evil.example]" in out.out.replace("\n", "").replace(" ", "")


@pytest.mark.parametrize(("mode", "needle"), [("stderr_flood", "flooded its stderr"),
                                              ("stdout_flood", "flooded its stdout"),
                                              ("result_flood", "flooded its result.json"),
                                              # refused by the array count before the parser sees its depth
                                              ("deep", "malformed result (up to 100,")])
def test_a_lying_device_is_one_device_error(shared_device: Device, tiny_cnn: Path, tmp_path: Path, capsys,
                                            mode: str, needle: str):
    started = time.monotonic()
    code = main(_bench(shared_device, tiny_cnn, fake_python(tmp_path, mode), "--max-duration", "1"))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("edgeopt: error:")]
    assert code == 3 and len(lines) == 1 and needle in lines[0], err
    assert "--max-duration" not in lines[0] and "Traceback" not in err
    assert time.monotonic() - started < 60
    assert not shared_device.job_dirs(), "the job directory is removed after a flood too"


def test_an_endless_eval_output_is_not_fetched(shared_device: Device, tmp_path: Path):
    model = make_matmul_model(tmp_path / "m.onnx")
    data = tmp_path / "eval.npz"
    np.savez(data, x=np.zeros((4, 64), np.float32))
    runner = shared_device.runner(python=str(fake_python(tmp_path, "eval_flood")))
    with pytest.raises(RunnerError, match="flooded its eval_outputs.npz"):
        device_outputs(model, data, runtime="onnxruntime", runner=runner)
    assert not shared_device.job_dirs()


def test_the_stderr_reader_stays_bounded_and_linear():
    """20 MB without a newline (the flood that took 5 s, 80 MB 61 s, when every chunk re-split the whole
    pending text): the reader keeps at most one cut line and the last lines, whatever it was fed."""
    from edgeopt.runners.limits import MAX_LINE_BYTES, LineTail

    tail = LineTail(limit=1 << 40)
    chunk = b"A" * (1 << 16)
    for _ in range(320):
        tail.feed(chunk)
        assert len(tail._pending) <= MAX_LINE_BYTES
    tail.feed(b"\n" + b"x\n" * 100_000)
    tail.close()
    assert len(tail.lines) == 20 and tail.total == 320 * (1 << 16) + 1 + 200_000


@pytest.fixture()
def lying_lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 5) as running:
        for name, mode in (("lab-01", "nan"), ("lab-02", "error_inject"), ("lab-03", "inject"),
                           ("lab-04", "negative")):
            running[name].python = str(fake_python(tmp_path / "fakes", mode))
        running.write_inventory()
        yield running


def test_qualify_with_lying_devices_keeps_the_honest_verdict_and_every_report(lying_lab: Lab, tiny_cnn: Path,
                                                                                tmp_path: Path, capsys):
    spec = tmp_path / "q.yaml"
    spec.write_text(f"""
name: untrusted
model: {{path: {tiny_cnn}}}
inventory: {lying_lab.inventory}
targets:
  - {{devices: "tag:lab", known_hosts: {lying_lab.known_hosts}}}
measure: {{iterations: 120, min_duration_s: 0.05, warmup: 2, energy: false}}
gates: {{latency: {{max_ms: 1000}}}}
""")
    reports = tmp_path / "r"
    code = main(["qualify", str(spec), "--report-dir", str(reports), "--no-history", "--json"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    devices = {d["label"]: d for d in out["devices"]}
    # 120 iterations: the p99 gate is supported by the count alone, however slow a loaded machine runs the 0.05 s
    # (issue 30: the honest verdict must not depend on the machine being quiet).
    assert devices["lab-00"]["passed"], devices["lab-00"]
    assert not devices["lab-01"]["passed"] and not devices["lab-02"]["passed"]
    assert not devices["lab-04"]["passed"], "negative latencies never pass a gate"
    assert code == 1 == out["exit_code"], captured.err
    junit = (reports / "junit.xml").read_text()
    ET.fromstring(junit.split("\n", 1)[1])  # valid XML: no raw 0x1B
    assert _clean(junit)
    summary = (reports / "summary.md").read_text()
    assert "<script>" not in summary and "<img" not in summary and _clean(summary)
    assert "&lt;script&gt;" in summary  # the device's text is shown, as text
    html = (reports / "report.html").read_text()
    assert "<script>alert(1)</script>" not in html and INJECT not in html


def test_devices_check_shows_a_lying_hostname_as_text(lying_lab: Lab, capsys):
    code = main(["devices", "check", "lab-03", "--inventory", str(lying_lab.inventory),
                 "--known-hosts", str(lying_lab.known_hosts)])
    out = capsys.readouterr()
    assert code == 0 and _clean(out.out) and _clean(out.err), out.err
    assert "[link=https://evil.example]" in out.out.replace("\n", "").replace(" ", "").replace("│", "")
