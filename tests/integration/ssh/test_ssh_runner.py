"""The SSH runner against a real sshd: same agent, same result as local; cache; cleanup; quoting."""

from __future__ import annotations

import os
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
import onnx
import pytest

import edgeopt
from edgeopt.errors import RunnerError
from edgeopt.runners import LocalRunner
from edgeopt.runners.ssh_cache import agent_bundle
from edgeopt_agent.protocol import RawRun, Request
from tests.conftest import make_matmul_model

FAST = {"iterations": 50, "min_duration_s": 0.3}


def test_ssh_run_matches_local_schema_and_latency(shared_device, tiny_cnn):
    events: list[dict] = []
    runner = shared_device.runner()
    raw = runner.run(Request(model_path="ignored", **FAST), tiny_cnn, events.append)
    local = LocalRunner().run(Request(model_path="ignored", **FAST), tiny_cnn)
    assert raw.ok, raw.error
    assert isinstance(raw, RawRun) and set(raw.to_dict()) == set(local.to_dict())
    assert runner.name == f"ssh:root@127.0.0.1:{shared_device.sshd.port}"
    # The agent saw the model in the device cache, not the host path.
    assert raw.request["model_path"].startswith(str(shared_device.workdir / "cache"))
    assert [e["phase"] for e in events if e["event"] == "phase" and e["phase"] != "upload"] == \
        ["load", "warmup", "timed"]
    ssh_p50, local_p50 = statistics.median(raw.samples_ns), statistics.median(local.samples_ns)
    ratio = ssh_p50 / local_p50
    assert ratio > 1 / 3 and ratio < 3


def test_bench_result_through_ssh_has_the_local_schema(shared_device, tiny_cnn):
    kw = {"min_duration_s": 0.3, "iterations": 50, "use_target_fps": False}
    remote = edgeopt.benchmark(tiny_cnn, runner=shared_device.runner(), **kw)
    local = edgeopt.benchmark(tiny_cnn, **kw)
    r, loc = remote.model_dump(mode="json"), local.model_dump(mode="json")
    assert set(r) == set(loc)
    for section in ("latency_ms", "settings", "model", "environment", "run"):
        assert set(r[section]) == set(loc[section]), section
    assert r["runner"].startswith("ssh:root@127.0.0.1:") and loc["runner"] == "local"
    assert r["model"]["sha256"] == loc["model"]["sha256"]


def test_second_run_is_a_cache_hit_and_job_dirs_are_removed(device, tiny_cnn):
    runner = device.runner()
    assert runner.run(Request(model_path="", **FAST), tiny_cnn).ok
    first = runner.last_stats
    assert first is not None and first.uploaded_bytes > tiny_cnn.stat().st_size and first.cache_misses == 2
    cached = sorted(p for p in (device.workdir / "cache").rglob("*") if p.is_file())
    mtimes = {p: p.stat().st_mtime_ns for p in cached}
    assert (device.workdir / "cache" / agent_bundle().key / "edgeopt_agent" / "__main__.py") in mtimes
    assert device.job_dirs() == [] and not device.lock_file.exists()

    assert runner.run(Request(model_path="", **FAST), tiny_cnn).ok
    second = runner.last_stats
    assert second is not None and second.uploaded_bytes == 0 and second.uploaded_files == 0
    assert second.cache_hits == 2 and second.job_dir != first.job_dir
    assert {p: p.stat().st_mtime_ns for p in cached} == mtimes  # nothing rewritten on the device
    assert sorted(p for p in (device.workdir / "cache").rglob("*") if p.is_file()) == cached
    assert device.job_dirs() == []


def test_a_copy_of_the_model_under_another_name_is_still_a_cache_hit(shared_device, tiny_cnn, tmp_path):
    runner = shared_device.runner()
    assert runner.run(Request(model_path="", **FAST), tiny_cnn).ok
    copy = tmp_path / "renamed.onnx"
    copy.write_bytes(tiny_cnn.read_bytes())
    assert runner.run(Request(model_path="", **FAST), copy).ok
    assert runner.last_stats is not None and runner.last_stats.uploaded_bytes == 0


def test_external_data_and_inputs_travel_with_the_model(shared_device, tmp_path):
    src = make_matmul_model(tmp_path / "src.onnx")
    model_dir = tmp_path / "ext"
    (model_dir / "weights").mkdir(parents=True)
    onnx.save_model(onnx.load(src), model_dir / "mm.onnx", save_as_external_data=True, location="weights/w.bin",
                    size_threshold=0)
    x = np.full((1, 64), 0.5, dtype=np.float32)
    np.savez(tmp_path / "x.npz", x=x)
    runner = shared_device.runner()
    raw = runner.run(Request(model_path="", inputs_npz=str(tmp_path / "x.npz"), **FAST), model_dir / "mm.onnx")
    assert raw.ok, raw.error
    assert Path(raw.request["model_path"]).name == "mm.onnx"
    assert (Path(raw.request["model_path"]).parent / "weights" / "w.bin").is_file()
    assert raw.request["inputs_npz"].endswith("/inputs.npz")
    assert runner.last_stats is not None and runner.last_stats.uploaded_files >= 3


def test_paths_with_spaces_and_quotes_are_passed_as_data(device, tiny_cnn):
    odd = device.workdir.parent / "dev ice's $(touch PWNED) dir"
    raw = device.runner(workdir=str(odd)).run(Request(model_path="", **FAST), tiny_cnn)
    assert raw.ok, raw.error
    assert (odd / "cache").is_dir() and not list(Path("/").glob("PWNED")) and not (odd.parent / "PWNED").exists()
    assert not (Path.home() / "PWNED").exists()


def test_relative_workdir_is_under_the_login_home(device, tiny_cnn):
    rel = f".cache/edgeopt-test-{device.sshd.port}"
    try:
        raw = device.runner(workdir=rel).run(Request(model_path="", **FAST), tiny_cnn)
        assert raw.ok and raw.request["model_path"].startswith(str(Path.home() / rel) + "/cache/")
    finally:
        shutil.rmtree(Path.home() / rel, ignore_errors=True)


def test_missing_interpreter_is_a_runner_error_naming_python(shared_device, tiny_cnn):
    with pytest.raises(RunnerError, match="--python"):
        shared_device.runner(python="/nonexistent/python3").run(Request(model_path="", **FAST), tiny_cnn)
    assert shared_device.job_dirs() == []


def test_agent_error_comes_back_as_data(shared_device, tiny_cnn):
    raw = shared_device.runner().run(Request(model_path="", shapes={"nope": [1]}, **FAST), tiny_cnn)
    assert not raw.ok and raw.error_kind == "input" and "nope" in (raw.error or "")


def test_job_dirs_left_by_a_dead_link_are_swept_after_a_day(shared_device, tiny_cnn):
    jobs = shared_device.workdir / "jobs"
    stale, recent = jobs / "dead-link-job", jobs / "running-job"
    for d in (stale, recent):
        d.mkdir(parents=True, exist_ok=True)
        (d / "request.json").write_text("{}")
    day_ago = time.time() - 25 * 3600
    os.utime(stale, (day_ago, day_ago))
    assert shared_device.runner().run(Request(model_path="", **FAST), tiny_cnn).ok
    assert not stale.exists() and recent.exists()  # a recent one may belong to a job still running
    shutil.rmtree(recent)
