"""A fleet of real loopback sshd devices: parallel runs, a device killed mid-run, one switched off, a deadline.

Every device is its own sshd with its own host key, port and work dir (tests/integration/ssh/lab.py); the agent
runs there exactly as on a board. After each test nothing may be left running or locked on any device.
"""

from __future__ import annotations

import json
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from edgeopt.bench.fleet import fleet_benchmark
from edgeopt.cli.main import main
from edgeopt.history import open_store
from edgeopt.runners.ssh_session import SshTimeouts
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason
from tests.waiting import wait_for

QUICK = {"iterations": 20, "min_duration_s": 0.2, "warmup": 2, "energy": False}


@pytest.fixture()
def lab(tmp_path: Path) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path / "lab", 4, unreachable=["lab-off"]) as running:
        yield running


def _assert_devices_clean(lab: Lab, *, keep_jobs: tuple[str, ...] = ()) -> None:
    """No agent process and no lock file on any device; job dirs removed (except on devices whose link died)."""
    assert wait_for(lambda: not any(d.agent_processes() for d in lab.devices), 20, step_s=0.1), \
        {d.name: d.agent_processes() for d in lab.devices}
    for d in lab.devices:
        assert not d.lock_file.exists(), d.name
        if d.name not in keep_jobs:
            assert d.job_dirs() == [], d.name


def test_killed_and_unreachable_devices_cost_only_their_own_rows(lab: Lab, tiny_cnn: Path):
    victim = lab["lab-01"]
    killed = threading.Event()

    def progress(device: str, event: dict) -> None:
        if device == victim.name and event.get("phase") == "timed" and not killed.is_set():
            killed.set()
            threading.Timer(0.3, victim.sshd.kill_hard).start()  # mid-run: its timed phase lasts >= 3 s

    result = fleet_benchmark(tiny_cnn, devices="tag:lab", inventory=lab.inventory, known_hosts=lab.known_hosts,
                             timeouts=SshTimeouts(dead_after_s=5, keepalive_s=1), progress=progress,
                             iterations=50, min_duration_s=3.0, warmup=2, energy=False, deadline_s=120)
    rows = {r.device: r for r in result.rows}
    assert killed.is_set() and list(rows) == ["lab-00", "lab-01", "lab-02", "lab-03", "lab-off"]
    for name in ("lab-00", "lab-02", "lab-03"):
        r = rows[name]
        assert r.status == "ok" and r.result is not None and r.result.valid, (name, r.error)
        assert r.result.run.samples >= 50 and r.result.runner == f"ssh:root@127.0.0.1:{lab[name].port}"
        assert r.result.run.timed_s >= 3.0
    assert rows["lab-01"].status == "error" and rows["lab-01"].error_kind == "device"
    assert "lab-01" not in json.dumps(rows["lab-00"].model_dump(mode="json"))  # nothing leaked across rows
    assert rows["lab-off"].error_kind == "unreachable" and "Connection refused" in str(rows["lab-off"].error)
    agg = result.aggregate
    assert agg.failed == ["lab-01", "lab-off"] and agg.ok == 3 and agg.p50 is not None and agg.p50.devices == 3
    assert result.exit_code == 1  # not every device failed: the others' verdicts stand
    _assert_devices_clean(lab, keep_jobs=("lab-01",))  # its link died: the job dir is swept by a later run


def test_a_device_past_its_deadline_is_stopped_and_unlocked(lab: Lab, tiny_cnn: Path):
    started = time.monotonic()
    result = fleet_benchmark(tiny_cnn, devices="lab-00,lab-02", inventory=lab.inventory, known_hosts=lab.known_hosts,
                             iterations=10, min_duration_s=60.0, warmup=1, energy=False, deadline_s=4.0)
    assert time.monotonic() - started < 30
    assert [r.error_kind for r in result.rows] == ["deadline", "deadline"]
    assert "deadline of 4 s" in str(result.rows[0].error) and result.exit_code == 3
    _assert_devices_clean(lab, keep_jobs=("lab-00", "lab-02"))


def test_jobs_bound_how_many_devices_run_at_once(lab: Lab, tiny_cnn: Path):
    running: set[str] = set()
    peak = [0]
    lock = threading.Lock()

    def progress(device: str, event: dict) -> None:
        with lock:
            if event.get("state") == "running":
                running.add(device)
            elif event.get("state") in ("done", "error"):
                running.discard(device)
            peak[0] = max(peak[0], len(running))

    result = fleet_benchmark(tiny_cnn, devices="lab-0*", inventory=lab.inventory, known_hosts=lab.known_hosts,
                             jobs=2, progress=progress, **QUICK)
    assert result.jobs == 2 and peak[0] == 2 and result.exit_code == 0
    assert [r.device for r in result.rows] == ["lab-00", "lab-01", "lab-02", "lab-03"]
    _assert_devices_clean(lab)


def test_cli_json_junit_history_and_empty_selection(lab: Lab, tiny_cnn: Path, tmp_path: Path, capsys):
    junit, db = tmp_path / "junit.xml", tmp_path / "history.sqlite3"
    code = main(["fleet", "bench", str(tiny_cnn), "--devices", "tag:even,lab-off", "--inventory", str(lab.inventory),
                 "--known-hosts", str(lab.known_hosts), "-n", "20", "--min-duration", "0.2", "--no-energy",
                 "--junit", str(junit), "--history-db", str(db), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["exit_code"] == 1
    assert [r["device"] for r in out["rows"]] == ["lab-00", "lab-02", "lab-off"]
    assert out["rows"][0]["result"]["samples_ms"] is None  # kept for the history, not printed without --samples
    assert out["aggregate"]["failed"] == ["lab-off"] and out["selection"] == ["tag:even", "lab-off"]
    cases = [(s.get("name"), c.get("name")) for s in ET.parse(junit).getroot().iter("testsuite")
             for c in s.iter("testcase")]
    assert ("edgeopt.fleet.lab-off", "run") in cases and len(cases) >= 5
    runs = open_store(db).runs()
    assert sorted(r.device for r in runs) == ["lab-00", "lab-02"]
    assert {r.group_id for r in runs} == {out["fleet_id"]}
    assert sorted(r["history_run_id"] for r in out["rows"][:2]) == sorted(r.id for r in runs)

    code = main(["fleet", "bench", str(tiny_cnn), "--devices", "tag:rpi9", "--inventory", str(lab.inventory),
                 "--json"])
    err = capsys.readouterr()
    assert code == 2 and "no device has tag 'tag:rpi9'" in err.err and "tags: even, lab, odd, off" in err.err
    assert str(lab.inventory) in json.loads(err.out)["error"]


def test_fleet_check_probes_every_device_in_parallel(lab: Lab, capsys):
    code = main(["fleet", "check", "--devices", "tag:lab", "--inventory", str(lab.inventory), "--known-hosts",
                 str(lab.known_hosts), "--json"])
    rows = {r["device"]: r for r in json.loads(capsys.readouterr().out)["devices"]}
    assert code == 1 and list(rows) == ["lab-00", "lab-01", "lab-02", "lab-03", "lab-off"]
    for name in ("lab-00", "lab-01", "lab-02", "lab-03"):
        report = rows[name]["report"]
        assert report["ready"] and report["packages"]["numpy"] and report["workdir"] == str(lab[name].workdir)
    assert rows["lab-off"]["error_kind"] == "unreachable" and rows["lab-off"]["report"] is None
    _assert_devices_clean(lab)


def test_bench_and_devices_check_take_devices_too(lab: Lab, tiny_cnn: Path, capsys):
    common = ["--inventory", str(lab.inventory), "--known-hosts", str(lab.known_hosts), "--json"]
    code = main(["bench", str(tiny_cnn), "--devices", "tag:odd,lab-off", "--jobs", "2", "-n", "20",
                 "--min-duration", "0.2", "--no-energy", "--ssh-timeout", "connect=5", "--device-cache-mb", "64",
                 *common])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and [r["device"] for r in out["rows"]] == ["lab-01", "lab-03", "lab-off"]
    assert out["jobs"] == 2 and out["aggregate"]["failed"] == ["lab-off"]
    assert all(r["status"] == "ok" for r in out["rows"][:2]) and out["rows"][2]["error_kind"] == "unreachable"
    code = main(["devices", "check", "--devices", "lab-00", *common])
    rows = json.loads(capsys.readouterr().out)["devices"]
    assert code == 0 and [r["device"] for r in rows] == ["lab-00"] and rows[0]["report"]["ready"]
    code = main(["bench", str(tiny_cnn), "--devices", "lab-00", "--device", "lab-01", *common])
    assert code == 2 and "--devices with --device lab-01" in capsys.readouterr().err
    code = main(["bench", str(tiny_cnn), "--jobs", "2", "--json"])
    assert code == 2 and "add --devices" in capsys.readouterr().err
    _assert_devices_clean(lab)


def test_qualify_spec_selects_devices_by_tag_and_runs_them_in_parallel(lab: Lab, tiny_cnn: Path, tmp_path: Path,
                                                                          capsys):
    spec = tmp_path / "fleet.yaml"
    spec.write_text(f"""
name: fleet
model: {{path: {tiny_cnn}}}
inventory: {lab.inventory}
targets:
  - {{devices: "tag:even,lab-off", known_hosts: {lab.known_hosts}}}
measure: {{iterations: 100, min_duration_s: 0.2, warmup: 2, energy: false}}
gates: {{latency: {{max_ms: 1000}}}}
""")  # 100 iterations: the latency gate reads p99, which needs 100 samples however slow a loaded host makes the run
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "r"), "--no-history", "--jobs", "3",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    devices = {d["label"]: d for d in out["devices"]}
    assert list(devices) == ["lab-00", "lab-02", "lab-off"]
    assert devices["lab-00"]["passed"] and devices["lab-02"]["passed"]
    assert devices["lab-off"]["status"] == "error" and code == 1 == out["exit_code"]
    assert any("lab-off" in w for w in out["warnings"])
    _assert_devices_clean(lab)
    spec.write_text(spec.read_text().replace("tag:even,lab-off", "tag:nope"))
    code = main(["qualify", str(spec), "--report-dir", str(tmp_path / "r2"), "--no-history", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "targets[0].devices" in err.replace("targets.0.devices", "targets[0].devices"), err


def test_fleet_bench_of_a_deployment_runs_its_settings_on_every_device(lab: Lab, tmp_path: Path):
    """Issue 21: a deployment benched on a fleet runs exactly its runtime, options and threads on each board."""
    pytest.importorskip("openvino")
    from tests.conftest import make_matmul_model
    from tests.deployments import make_deployment, to_ir

    xml = to_ir(make_matmul_model(tmp_path / "mm.onnx"), tmp_path / "ir")
    folder = make_deployment(tmp_path / "recommended", xml, runtime="openvino",
                             runtime_options={"inference_precision": "f32"}, threads=1)
    result = fleet_benchmark(folder, devices="lab-00,lab-01", inventory=lab.inventory, known_hosts=lab.known_hosts,
                             iterations=20, min_duration_s=0.1, warmup=2, use_target_fps=False, energy=False)
    rows = {r.device: r for r in result.rows}
    assert sorted(rows) == ["lab-00", "lab-01"]
    for row in rows.values():
        assert row.status == "ok", row.error
        details = row.result.runtime.model_dump()
        assert row.result.runtime.name == "openvino"
        assert details["inference_precision"] == "f32" and details["inference_num_threads"] == 1
        assert row.result.deployment is not None and row.result.deployment.name == "test/openvino"
    _assert_devices_clean(lab)
