"""The Ray executor on a real in-process Ray cluster: the same jobs, the same per-device schema as the local one.

The cluster is started once for the module with one custom resource per lab device (``edgeopt-device:NAME``).
Skips with the reason when Ray is not installed (``pip install -e '.[ray]'``).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from edgeopt import qualify
from edgeopt.bench.fleet import fleet_benchmark
from edgeopt.deploy import load_deployment
from edgeopt.fleet.executors.ray_exec import RayExecutor
from edgeopt.fsutil import sha256_file
from edgeopt.history import open_store
from tests.integration.ssh.lab import Lab
from tests.integration.ssh.sshd import unavailable_reason

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]' (the [ray] extra)")

QUICK = {"iterations": 20, "min_duration_s": 0.2, "warmup": 2, "energy": False}


@pytest.fixture(scope="module")
def ray_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with Lab(tmp_path_factory.mktemp("ray-lab"), 4, unreachable=["lab-off"]) as lab:
        # lab-off gets no resource: no node can reach it, which the executor must report, not wait for
        resources = {f"edgeopt-device:{d.name}": 1.0 for d in lab.devices if d.sshd is not None}
        ray.init(address="local", resources=resources, num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            yield lab
        finally:
            ray.shutdown()


def _keys(value: Any) -> Any:
    """The shape of a JSON value: dict keys (recursively), list element shapes (a run's warnings depend on the
    host's load at the time, so only their presence as a key counts)."""
    if isinstance(value, dict):
        return {k: (_keys(v) if k != "warnings" else "list") for k, v in value.items() if k not in ("samples_ms",)}
    if isinstance(value, list):
        return [_keys(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__ if value is not None else None
    return "number" if isinstance(value, (int, float)) else type(value).__name__  # 0 and 0.2 are one field's values


def _shape_diff(a: Any, b: Any, prefix: str = "") -> list[str]:
    """The key paths where two shapes differ, each with both sides (the test failed twice under load, in sessions
    18 and 19, with pytest's diff cut before the field). A key both sides have, null on one side, is the same
    field (an optional measurement a loaded host may leave out); a key only one side has is a difference."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _shape_diff(a.get(k, "<missing>"), b.get(k, "<missing>"),
                                                                        f"{prefix}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and (not a or not b):
        return []  # an empty list has no element shape to compare
    return [] if a == b or a is None or b is None else [f"{prefix}: ray {a!r} vs local {b!r}"]


def _paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (list elements as ``[]``), values aside."""
    if isinstance(value, dict):
        return {prefix} | {p for k, v in value.items() for p in _paths(v, f"{prefix}.{k}")}
    if isinstance(value, list):
        return {prefix} | {p for v in value for p in _paths(v, f"{prefix}[]")}
    return {prefix}


def _row_shape(row: Any) -> Any:
    data = row.model_dump(mode="json", exclude={"seconds", "started_at", "worker"})
    data["result"] = _keys(data["result"]) if data["result"] else None
    return _keys(data)


def test_ray_and_local_give_the_same_rows(ray_lab: Lab, tiny_cnn: Path):
    common = dict(devices="tag:lab", inventory=ray_lab.inventory, known_hosts=ray_lab.known_hosts, **QUICK)
    on_ray = fleet_benchmark(tiny_cnn, executor="ray", jobs=2, **common)
    local = fleet_benchmark(tiny_cnn, executor="local", **common)
    assert [r.device for r in on_ray.rows] == [r.device for r in local.rows]
    for a, b in zip(on_ray.rows, local.rows, strict=True):
        assert a.status == b.status and a.error_kind == b.error_kind, (a.device, a.error, b.error)
        if a.status == "ok":
            shape_a, shape_b = _row_shape(a), _row_shape(b)
            assert not _shape_diff(shape_a, shape_b), (a.device, _shape_diff(shape_a, shape_b))
            assert a.worker and a.worker.startswith("ray:") and b.worker and b.worker.startswith("edgeopt-fleet")
            assert a.result.model.path == b.result.model.path == str(tiny_cnn)  # host path, whatever the transport
    off = on_ray.rows[-1]
    assert off.device == "lab-off" and off.error_kind == "unreachable" and "edgeopt-device:lab-off" in str(off.error)
    assert on_ray.executor == "ray" and on_ray.aggregate.ok == local.aggregate.ok == 4


def test_models_travel_through_the_object_store_by_content_hash(ray_lab: Lab, tiny_cnn: Path, tmp_path: Path):
    result = fleet_benchmark(tiny_cnn, devices="tag:even", inventory=ray_lab.inventory,
                             known_hosts=ray_lab.known_hosts, executor=RayExecutor(shared_paths=False), **QUICK)
    assert [r.status for r in result.rows] == ["ok", "ok"], [r.error for r in result.rows]
    assert all(r.result is not None and r.result.model.sha256 == result.rows[0].result.model.sha256
               for r in result.rows)
    assert ray.is_initialized()  # a cluster the executor did not start is left running


@pytest.mark.slow  # two small sweeps (Ray, then local to compare): ~50 s on the loaded 2-core machine
def test_sweep_under_ray_builds_on_cpu_tasks_and_matches_the_local_rows(ray_lab: Lab, tiny_cnn: Path,
                                                                         tmp_path: Path):
    """The host side as Ray CPU tasks (files back through the object store), each device's job on its resource,
    the bundle by content hash; the same per-device schema as the local executor."""
    from edgeopt.sweep.fleet.api import fleet_sweep
    from tests.integration.ssh.test_fleet_sweep import MEASURE, options

    common = dict(inventory=ray_lab.inventory, known_hosts=ray_lab.known_hosts)
    db = tmp_path / "h.sqlite3"
    on_ray = fleet_sweep(tiny_cnn, options(tiny_cnn, tmp_path / "ray", history_db=db), MEASURE,
                         devices="lab-00,lab-off", executor=RayExecutor(shared_paths=False), **common)
    local = fleet_sweep(tiny_cnn, options(tiny_cnn, tmp_path / "local", history_db=tmp_path / "l.sqlite3"), MEASURE,
                        devices="lab-00", **common)
    ok, off = on_ray.rows
    assert ok.status == "ok" and ok.worker and ok.worker.startswith("ray:"), ok.error
    assert off.error_kind == "unreachable" and "edgeopt-device:lab-off" in str(off.error)
    ray_paths, local_paths = _paths(ok.model_dump(mode="json")), _paths(local.rows[0].model_dump(mode="json"))
    assert ray_paths == local_paths, ray_paths ^ local_paths
    assert [(lv.recipe, lv.runtime) for lv in ok.result.levels] == \
        [(lv.recipe, lv.runtime) for lv in local.rows[0].result.levels]
    # not a shared path: the artifacts came back as bytes from a CPU task, the device's sweep from a worker dir
    assert (tmp_path / "ray" / "host" / "artifacts" / "local" / "fp16" / "manifest.json").is_file()
    assert ok.result.out_dir == str(tmp_path / "ray" / "devices" / "lab-00")
    assert (tmp_path / "ray" / "devices" / "lab-00" / "pareto.svg").is_file()
    _assert_reshipped_here(ok, tmp_path / "ray", db)
    assert on_ray.exit_code == 1 and local.exit_code == 0 and on_ray.executor == "ray"


def _assert_reshipped_here(row: Any, out: Path, db: Path) -> None:
    """The device's deployment checked as shipped on the worker, re-shipped under the host's
    ``<out>/devices/<name>/recommended`` from the host's own files (the same ones, by hash) with that check; the
    sweep's and the history's paths name files on the host."""
    from edgeopt.history import HistoryStore

    folder = out / "devices" / row.device / "recommended"
    rec = row.result.recommendation
    assert rec is not None and rec.deployment == str(folder), rec
    deployment, _ = load_deployment(folder)  # every file there, with its recorded size and SHA-256
    assert deployment.files and all(sha256_file(folder / f.path) == f.sha256 for f in deployment.files)
    assert deployment.measured.device == row.device and Path(rec.artifact).is_file()
    assert str(out) in rec.artifact  # the host's bundle, not the worker's copy
    check = rec.shipped_check
    assert check is not None and check.passed and deployment.shipped_check == check
    assert not [w for w in row.result.warnings if "dropped" in w or "not written" in w], row.result.warnings
    saved = json.loads((out / "devices" / row.device / "sweep.json").read_text())
    assert saved["recommendation"]["deployment"] == str(folder)
    assert saved["recommendation"]["shipped_check"]["passed"] is True
    runs = HistoryStore(db).runs(kind="sweep")
    assert runs and all(r.model_path.startswith(str(out)) for r in runs), [r.model_path for r in runs]


def test_llm_fleet_sweep_jobs_hold_their_device_resource(ray_lab: Lab, tiny_llama_fp32: dict[str, Path],
                                                         tmp_path: Path):
    """The LLM fleet sweep on the same executor path as the ONNX one: each device job a Ray task holding its
    device's resource (a device no node offers is its unreachable row), the levels by content hash, the host
    ranking, shipping and recording from its own level folders."""
    from edgeopt.history import HistoryStore
    from edgeopt.llm.sweep_fleet import fleet_llm_sweep
    from edgeopt.llm.sweep_options import LlmSweepOptions
    from tests.integration.ssh.test_fleet_llm_sweep import FAST, TEXT

    out, text, db = tmp_path / "llm", tmp_path / "heldout.txt", tmp_path / "h.sqlite3"
    shutil.copytree(tiny_llama_fp32["levels"], out / "host" / "levels")
    text.write_text(TEXT)
    opts = LlmSweepOptions(eval_text=text, min_retention=0.5, levels=["fp32"], runtimes=["onnxruntime_genai"],
                           out_dir=out, retention=FAST, history_db=db)
    result = fleet_llm_sweep(tiny_llama_fp32["src"], opts, devices="lab-00,lab-off", inventory=ray_lab.inventory,
                             known_hosts=ray_lab.known_hosts, executor=RayExecutor(shared_paths=False))
    ok, off = result.rows
    assert ok.status == "ok" and ok.worker and ok.worker.startswith("ray:"), ok.error
    assert off.error_kind == "unreachable" and "edgeopt-device:lab-off" in str(off.error)
    host_folder = str(out / "host" / "levels" / "onnxruntime_genai" / "fp32")  # the worker read a copy
    assert ok.result is not None and [lv.folder for lv in ok.result.levels] == [host_folder]
    # checked as shipped on the device, then re-shipped here from the host's folder (the same files, by hash)
    rec = ok.result.recommendation
    assert rec is not None and rec.shipped_check is not None and rec.shipped_check.passed
    assert ok.result.out_dir == str(out / "devices" / "lab-00") and rec.deployment == f"{ok.result.out_dir}/recommended"
    (run,) = HistoryStore(db).runs(kind="sweep")
    assert run.id in ok.history_run_ids and run.group_id == result.fleet_id and run.model_path == host_folder
    assert run.device == "lab-00" and result.executor == "ray" and result.exit_code == 1  # lab-off did not run


def _device_shape(device: Any) -> Any:
    data = device.model_dump(mode="json")
    for key in ("bench", "paced"):
        data[key] = _keys(data[key]) if data[key] else None
    return _keys(data)


def test_qualify_runs_its_devices_as_ray_tasks_with_the_same_result(ray_lab: Lab, tiny_cnn: Path, tmp_path: Path):
    spec = tmp_path / "q.yaml"
    spec.write_text(f"""
name: ray-q
model: {{path: {tiny_cnn}}}
inventory: {ray_lab.inventory}
targets:
  - {{devices: "tag:even,lab-off", known_hosts: {ray_lab.known_hosts}}}
measure: {{iterations: 100, min_duration_s: 0.2, warmup: 2, energy: false}}
gates: {{latency: {{max_ms: 1000}}}}
""")  # 100 iterations: the latency gate reads p99, which needs 100 samples however slow a loaded host makes the run
    db = tmp_path / "h.sqlite3"
    on_ray = qualify(spec, report_dir=tmp_path / "ray", history_db=db, executor="ray", jobs=2)
    local = qualify(spec, report_dir=tmp_path / "local", history_db=db, executor="local")
    assert [d.label for d in on_ray.devices] == [d.label for d in local.devices] == ["lab-00", "lab-02", "lab-off"]
    for a, b in zip(on_ray.devices[:2], local.devices[:2], strict=True):
        assert a.passed and b.passed, (a.error, b.error)
        assert _device_shape(a) == _device_shape(b)
        assert a.bench is not None and a.bench.model.path == str(tiny_cnn) and a.history_run_id is not None
    off = on_ray.devices[2]
    assert off.status == "error" and "edgeopt-device:lab-off" in str(off.error) and on_ray.exit_code == 1
    runs = {r.group_id for r in open_store(db).runs(kind="qualify")}
    assert on_ray.group_id in runs and local.group_id in runs  # history written on the driver, grouped per run
    assert (tmp_path / "ray" / "result.json").is_file()
