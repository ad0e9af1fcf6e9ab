"""A sweep over a lab of real loopback sshd devices: the host side once, one measuring job per device.

Four devices plus one switched off (tests/integration/ssh/lab.py); one small recipe (fp16) on onnxruntime, few
iterations, so each test takes seconds. After each run nothing may be left running or locked on any device.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest

from edgeopt.cli.main import main
from edgeopt.history import open_store
from edgeopt.sweep.api import SweepOptions, level_settings
from edgeopt.sweep.fleet.api import fleet_sweep
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason
from tests.integration.ssh.test_fleet import _assert_devices_clean

MEASURE = level_settings(iterations=10, min_duration_s=0.05)


@pytest.fixture(scope="module")
def sweep_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path_factory.mktemp("sweep-lab"), 4, unreachable=["lab-off"]) as running:
        yield running


def eval_npz(model: Path, path: Path, n: int = 8) -> Path:
    """Random eval inputs for ``model`` (no labels: the agreement metric)."""
    inp = onnx.load(str(model)).graph.input[0]
    dims = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
    np.savez(path, **{inp.name: np.random.default_rng(0).standard_normal([n, *dims[1:]]).astype(np.float32)})
    return path


def options(model: Path, out: Path, **extra: object) -> SweepOptions:
    return SweepOptions(eval_data=eval_npz(model, out.parent / f"{out.name}-eval.npz"), recipes=["fp16"],
                        runtimes=["onnxruntime"], min_retention=0.9, out_dir=out, int8_search=False,
                        objective="size", **extra)


@pytest.mark.slow  # 4 devices sweeping at once: ~25 s on a quiet 2-core machine, a minute under load
def test_fleet_sweep_isolates_the_unreachable_device(sweep_lab: Lab, tiny_cnn: Path, tmp_path: Path):
    out = tmp_path / "fleet"
    db = tmp_path / "history.db"
    result = fleet_sweep(tiny_cnn, options(tiny_cnn, out, history_db=db), MEASURE, devices="tag:lab",
                         inventory=sweep_lab.inventory, known_hosts=sweep_lab.known_hosts)
    rows = {r.device: r for r in result.rows}
    assert list(rows) == ["lab-00", "lab-01", "lab-02", "lab-03", "lab-off"]
    off = rows["lab-off"]
    assert off.status == "error" and off.error_kind == "unreachable" and off.result is None
    for name in ("lab-00", "lab-01", "lab-02", "lab-03"):
        row = rows[name]
        assert row.status == "ok", row.error
        assert {(lv.recipe, lv.runtime) for lv in row.result.levels} == {("fp32", "onnxruntime"),
                                                                         ("fp16", "onnxruntime")}
        assert row.recommendation is not None and row.result.runner.startswith("ssh:")
        doc = json.loads((out / "devices" / name / "sweep.json").read_text())
        assert doc["model"] == str(tiny_cnn) and len(doc["levels"]) == 2
        shipped = json.loads((out / "devices" / name / "recommended" / "deployment.json").read_text())
        assert shipped["measured"]["device"] == name  # the deployment names the board it was measured on
    # the host built fp16 once, for the one target, before any device ran
    assert sorted(p.name for p in (out / "host" / "artifacts" / "local").iterdir()) == ["fp16"]
    summary = result.summary
    assert summary.ok == 4 and summary.failed == ["lab-off"]
    assert {(s.recipe, s.devices) for s in summary.levels} == {("fp32", 4), ("fp16", 4)}
    for s in summary.levels:
        assert s.min_ms <= s.median_ms <= s.max_ms
    assert set(summary.recommendations) == {"lab-00", "lab-01", "lab-02", "lab-03"}
    assert summary.agree == (len(set(summary.recommendations.values())) == 1)
    assert result.exit_code == 1  # one device could not run
    assert json.loads((out / "fleet-sweep.json").read_text())["fleet_id"] == result.fleet_id
    store = open_store(db)
    runs = [r for r in store.runs() if r.group_id == result.fleet_id]
    assert {r.device for r in runs} == {"lab-00", "lab-01", "lab-02", "lab-03"} and len(runs) == 8
    _assert_devices_clean(sweep_lab)


def test_cli_sweep_devices_json_and_exit_codes(sweep_lab: Lab, tiny_cnn: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]):
    data = eval_npz(tiny_cnn, tmp_path / "eval.npz")
    base = ["sweep", str(tiny_cnn), "--eval", str(data), "--recipes", "fp16", "--runtimes", "onnxruntime",
            "--iterations", "10", "--min-duration", "0.05", "--no-int8-search", "--min-retention", "0.9",
            "--objective", "size",  # no latency-ranking rounds: the fleet's rows and exit codes are the point
            "--inventory", str(sweep_lab.inventory), "--known-hosts", str(sweep_lab.known_hosts)]
    code = main([*base, "--devices", "lab-off", "--out", str(tmp_path / "off")])
    text = capsys.readouterr().out
    assert code == 3 and "could not run: lab-off" in text and "unreachable" in text  # every device failed
    doc = json.loads((tmp_path / "off" / "fleet-sweep.json").read_text())
    assert doc["exit_code"] == 3 and doc["rows"][0]["error_kind"] == "unreachable"
    code = main([*base, "--devices", "lab-00,lab-off", "--jobs", "1", "--out", str(tmp_path / "one"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1, doc  # one device ran (and has a recommendation), one could not
    ok, off = doc["rows"]
    assert ok["device"] == "lab-00" and ok["status"] == "ok" and ok["recommendation"] and "level_runs" not in ok
    assert [lv["recipe"] for lv in ok["result"]["levels"]] == ["fp32", "fp16"]
    assert off["device"] == "lab-off" and off["error_kind"] == "unreachable" and doc["jobs"] == 1
    summary = doc["summary"]
    assert summary["failed"] == ["lab-off"] and summary["agree"] is True
    assert summary["recommendation"] == ok["recommendation"] == summary["recommendations"]["lab-00"]
    assert json.loads((tmp_path / "one" / "devices" / "lab-00" / "sweep.json").read_text())["levels"]
    _assert_devices_clean(sweep_lab)


@pytest.mark.parametrize("extra, needle", [
    (["--devices", "lab-00", "--host", "root@127.0.0.1:1"], "--host"),
    (["--devices", "tag:nosuchtag"], "tags:"),
    (["--jobs", "2"], "--devices"),
])
def test_cli_bad_fleet_input_is_one_line_exit_2(sweep_lab: Lab, tiny_cnn: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str], extra: list[str], needle: str):
    data = eval_npz(tiny_cnn, tmp_path / "eval.npz")
    code = main(["sweep", str(tiny_cnn), "--eval", str(data), "--inventory", str(sweep_lab.inventory),
                 "--out", str(tmp_path / "o"), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0] and "Traceback" not in err[0], err
