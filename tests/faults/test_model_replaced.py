"""A model file replaced between runs and while a run reads it: every cache keys on content (the sweep's level
and sensitivity caches, the device cache, the fleet's model copies), so nothing measured on the old model is
reused for the new one, and a run either finishes on one consistent model or stops with one clear line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from edgeopt.errors import InputError
from edgeopt.fleet.artifacts import ModelRef
from edgeopt.fsutil import sha256_file
from edgeopt.runners.ssh_cache import RemoteCache, TransferStats, file_bundle
from edgeopt.runners.ssh_session import SshSession
from edgeopt.sweep import snapshot
from tests.conftest import make_matmul_model
from tests.faults.helpers import record, wait_for

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")
from tests.digits_model import build_digits  # noqa: E402


def _sweep(model: Path, data: Path, out: Path, db: Path) -> subprocess.Popen[str]:
    args = ["sweep", str(model), "--eval", str(data), "--recipes", "fp16", "--runtimes", "onnxruntime",
            "--iterations", "20", "--min-duration", "0.1", "--no-int8-search", "--out", str(out), "--json"]
    return subprocess.Popen([sys.executable, "-m", "edgeopt", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "EDGEOPT_HISTORY_DB": str(db)})


def _finish(proc: subprocess.Popen[str]) -> dict:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), err
    assert "Traceback" not in err
    return json.loads(out)


def _input_shas(out: Path) -> set[str]:
    """The input model's sha256 of every optimize the sweep ran (each recipe's manifest records it)."""
    shas = set()
    for manifest in (out / "artifacts").rglob("*.json"):
        data = json.loads(manifest.read_text())
        if isinstance(data, dict) and isinstance(data.get("model"), dict) and "sha256" in data["model"]:
            shas.add(data["model"]["sha256"])
    return shas


@pytest.fixture()
def two_models(tmp_path):
    """Two digits classifiers with the same inputs and outputs but other weights, and their eval data."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, data = build_digits(tmp_path / "a", seed=0)
    b, _ = build_digits(tmp_path / "b", hidden=24, seed=1)
    assert sha256_file(a) != sha256_file(b)
    return a, b, data


def test_model_replaced_between_sweeps_reuses_nothing_of_the_old_one(tmp_path, two_models):
    a, b, data = two_models
    model, out, db = tmp_path / "model.onnx", tmp_path / "sweep", tmp_path / "h.sqlite3"
    shutil.copyfile(a, model)
    first = _finish(_sweep(model, data, out, db))
    assert first["model_sha256"] == sha256_file(a)
    again = _finish(_sweep(model, data, out, db))  # same model: every level from the cache
    assert all(level["cached"] for level in again["levels"])
    shutil.copyfile(b, model)  # replaced in place, same path, same size class, newer mtime
    second = _finish(_sweep(model, data, out, db))
    assert second["model_sha256"] == sha256_file(b)
    assert not any(level["cached"] for level in second["levels"]), second["levels"]
    assert _input_shas(out) >= {sha256_file(b)}
    record("model replaced between two sweeps (nothing of the old model reused)")


@pytest.mark.parametrize("how", ["rename", "in-place"])
def test_model_replaced_during_a_sweep_finishes_on_one_model(tmp_path, two_models, how):
    a, b, data = two_models
    model, out, db = tmp_path / "model.onnx", tmp_path / "sweep", tmp_path / "h.sqlite3"
    shutil.copyfile(a, model)
    proc = _sweep(model, data, out, db)
    # Once the sweep holds its copy of the model, replace the user's file while the levels are measured.
    assert wait_for(lambda: any((out / "cache" / "models").glob("[0-9a-f]*")) or proc.poll() is not None, 120)
    if how == "rename":
        shutil.copyfile(b, tmp_path / "new.onnx")
        os.replace(tmp_path / "new.onnx", model)
    else:
        shutil.copyfile(b, model)
    result = _finish(proc)
    assert result["model_sha256"] == sha256_file(a)  # the model as it was when the sweep started ...
    assert result["model"] == str(model)
    assert _input_shas(out) == {sha256_file(a)}  # ... and every recipe optimized that same model
    assert all(not level["cached"] for level in result["levels"])
    resumed = _finish(_sweep(model, data, out, db))  # the next sweep sees the new model: nothing reused
    assert resumed["model_sha256"] == sha256_file(b)
    assert not any(level["cached"] for level in resumed["levels"])
    record("model replaced during a sweep (finished on one model)")


def test_model_rewritten_while_the_sweep_copies_it_is_refused(tmp_path, monkeypatch):
    """A writer appending to the model during the sweep's copy: one clear error, no entry left to trust."""
    model = make_matmul_model(tmp_path / "m.onnx", k=256, n=256)
    real_copy = shutil.copyfileobj

    def copy_while_written(fsrc, fdst, length=0):
        real_copy(fsrc, fdst, length)
        time.sleep(0.01)  # mtime granularity
        with open(fsrc.name, "ab") as fh:  # the user's exporter still writing
            fh.write(b"\0" * 64)

    monkeypatch.setattr(snapshot.shutil, "copyfileobj", copy_while_written)
    with pytest.raises(InputError, match=r"changed while the sweep was reading it: run again once it is"):
        snapshot.snapshot_model(model, tmp_path / "cache")
    assert list((tmp_path / "cache" / "models").iterdir()) == []
    record("model rewritten while the sweep copies it (refused)")


def test_model_changed_between_hash_and_upload_never_becomes_a_cache_entry(shared_device, tmp_path):
    model = make_matmul_model(tmp_path / "m.onnx", k=512, n=512)
    bundle = file_bundle(model)
    make_matmul_model(model, k=512, n=256)  # replaced after it was hashed, before the upload
    with SshSession(shared_device.address(), known_hosts=shared_device.known_hosts,
                    accept_new_host_key=True) as s:
        cache = RemoteCache(s.sftp, f"{shared_device.workdir}/cache", TransferStats())
        with pytest.raises(InputError, match=r"changed while it was being uploaded.*run again"):
            cache.ensure(bundle)
        entries = sorted(p.name for p in (shared_device.workdir / "cache").iterdir())
        assert bundle.key not in entries and not [e for e in entries if e.startswith(".tmp-")]
        fresh = file_bundle(model)
        placed = cache.ensure(fresh)  # the file as it is now: uploaded under its own hash
    assert Path(placed).name == sha256_file(model)
    record("model changed between hashing and upload to the device cache (refused)")


def test_fleet_model_changed_after_hashing_is_refused(tmp_path):
    model = make_matmul_model(tmp_path / "m.onnx", k=64, n=32)
    ref = ModelRef.of(model)
    assert ref.read_blobs()
    make_matmul_model(model, k=64, n=16)
    with pytest.raises(InputError, match="changed while the fleet run was reading it"):
        ref.read_blobs()
    record("model changed between hashing and shipping to fleet workers (refused)")


def test_concurrent_writer_never_yields_a_mixed_snapshot(tmp_path):
    """A writer replacing the model (by rename) over and over while snapshots are taken: every snapshot is one
    of the two models, whole (its key is its content's hash)."""
    a = make_matmul_model(tmp_path / "a.onnx", k=128, n=64)
    b = make_matmul_model(tmp_path / "b.onnx", k=128, n=32)
    shas = {sha256_file(a), sha256_file(b)}
    model = tmp_path / "model.onnx"
    shutil.copyfile(a, model)
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            src = (a, b)[i % 2]
            shutil.copyfile(src, tmp_path / ".next.onnx")
            os.replace(tmp_path / ".next.onnx", model)
            i += 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        for _ in range(50):
            copy, key = snapshot.snapshot_model(model, tmp_path / "cache")
            assert key in shas and sha256_file(copy) == key
    finally:
        stop.set()
        thread.join(5)
    record("model replaced by rename during 50 snapshots (each whole, one model)", 50, 50)
