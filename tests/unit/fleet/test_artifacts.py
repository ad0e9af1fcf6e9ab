"""A model travels by content hash: same bytes same key, and a worker's copy is complete and at its own path."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.errors import InputError
from edgeopt.fleet import ModelRef
from tests.conftest import make_matmul_model


def test_key_follows_content_and_copies_are_materialized_once(tmp_path: Path):
    a = ModelRef.of(make_matmul_model(tmp_path / "a.onnx"))
    assert a.files == ("a.onnx",) and a.main == "a.onnx" and a.path == tmp_path / "a.onnx"
    other_dir = tmp_path / "sub"
    other_dir.mkdir()
    b = ModelRef.of(make_matmul_model(other_dir / "a.onnx"))
    assert b.key == a.key  # same bytes, same relative names
    c = ModelRef.of(make_matmul_model(tmp_path / "c.onnx", k=32))
    assert c.key != a.key
    cache = tmp_path / "cache"
    located = a.locate(a.read_blobs(), cache)
    assert located == cache / a.key / "a.onnx" and located.read_bytes() == a.path.read_bytes()
    assert a.locate(a.read_blobs(), cache) == located and not list(cache.glob(".tmp-*"))
    assert a.locate(None) == a.path  # shared path: nothing copied


def test_missing_model_and_escaping_paths_are_refused(tmp_path: Path):
    with pytest.raises(InputError, match="not found"):
        ModelRef.of(tmp_path / "none.onnx")
    ref = ModelRef.of(make_matmul_model(tmp_path / "m.onnx"))
    with pytest.raises(InputError, match="not a relative path"):
        ref.locate({"../evil.onnx": b"x"}, tmp_path / "cache")


def test_the_fleet_takes_every_measurement_option_and_refuses_the_rest():
    from edgeopt.bench.fleet.api import measure_settings
    from edgeopt.settings import MEASURE_KEYWORDS, MeasureSettings

    assert measure_settings(None, {"iterations": 7, "energy": False}) == MeasureSettings.from_kwargs(
        iterations=7, energy=False)
    assert {"iterations", "pacing_fps", "runtime_options", "power_sensor"} <= MEASURE_KEYWORDS
    with pytest.raises(InputError, match="'runner' is not a measurement option"):
        measure_settings(None, {"runner": object()})
    with pytest.raises(InputError, match="not both"):
        measure_settings(MeasureSettings(), {"iterations": 3})


def test_a_fleet_refuses_host_and_device():
    from edgeopt.fleet.devices import remote_spec
    from edgeopt.settings import RemoteSpec

    with pytest.raises(InputError, match="--devices with --host"):
        remote_spec(RemoteSpec(host="pi@10.0.0.5"))
    with pytest.raises(InputError, match="--devices with --device pi"):
        remote_spec(device="pi")
    assert remote_spec(RemoteSpec(device_cache_mb=10), known_hosts=Path("/x")).device_cache_mb == 10
