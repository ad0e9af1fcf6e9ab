"""The one reader (edgeopt/inbound.py, issue 31 item 1): regular files only, sizes before reading, arrays by their
headers before loading, and the surfaces that now go through it (YAML configs, calibration data, stamps)."""

from __future__ import annotations

import io
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from edgeopt import inbound, jsonio
from edgeopt.calib.arrays import load_arrays as load_calibration
from edgeopt.calib.base import CalibrationError, InputSpec
from edgeopt.errors import InputError
from edgeopt.targets.loader import load_target_file
from edgeopt.yamlio import YamlLimitError, read_text


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _in_thread(fn, *args):  # type: ignore[no-untyped-def]
    """Run fn in a thread and give it 10 s: a reader that blocks on a FIFO fails the test instead of hanging it."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001  # handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), f"{fn.__name__} blocked on a FIFO"
    return box


def test_a_fifo_is_refused_at_once_by_every_reader(tmp_path: Path) -> None:
    for reader in (lambda p: inbound.read_bytes(p, max_bytes=100), inbound.read_json, inbound.load_arrays):
        box = _in_thread(reader, _fifo(tmp_path, f"f{len(list(tmp_path.iterdir()))}"))
        assert isinstance(box.get("error"), ValueError) and "not a regular file" in str(box["error"])


def test_a_yaml_config_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Before the one reader, yamlio read a FIFO's zero stat size as 'small' and then blocked on it forever."""
    box = _in_thread(read_text, _fifo(tmp_path, "target.yaml"))
    assert isinstance(box.get("error"), YamlLimitError) and "not a regular file" in str(box["error"])


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text("[" + "0," * 1000 + "0]")
    with pytest.raises(inbound.InboundError, match="over the 100-byte limit"):
        inbound.read_bytes(path, max_bytes=100)
    with pytest.raises(jsonio.JsonLimitError, match="over the 100-byte limit"):
        inbound.read_json(path, max_bytes=100)


def test_text_that_is_not_utf8_names_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "stamp.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ValueError, match="byte 0xff at offset 7"):
        inbound.read_json(path)


def _npy_header_only(shape: tuple[int, ...]) -> bytes:
    """An .npy that declares ``shape`` of float32 but carries no data: what a hostile file looks like."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return buf.getvalue()


def test_arrays_are_refused_by_their_declared_size_before_loading(tmp_path: Path) -> None:
    npy = tmp_path / "huge.npy"
    npy.write_bytes(_npy_header_only((1 << 20, 1 << 20)))
    with pytest.raises(inbound.InboundError, match="declare 4,398,046,511,104 bytes"):
        inbound.load_arrays(npy)
    npz = tmp_path / "huge.npz"
    with zipfile.ZipFile(npz, "w") as zf:
        zf.writestr("x.npy", _npy_header_only((1 << 16, 1 << 16)))
    with pytest.raises(inbound.InboundError, match="declare"):
        inbound.load_arrays(npz, max_bytes=1 << 20)


def test_object_arrays_are_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "objects.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(inbound.InboundError, match="pickles"):
        inbound.load_arrays(path)


def test_real_arrays_round_trip(tmp_path: Path) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "xy.npz", x=x, y=x * 2)
    assert np.array_equal(inbound.load_arrays(tmp_path / "x.npy"), x)  # type: ignore[arg-type]
    both = inbound.load_arrays(tmp_path / "xy.npz")
    assert isinstance(both, dict) and sorted(both) == ["x", "y"] and np.array_equal(both["y"], x * 2)


def test_calibration_data_goes_through_the_reader(tmp_path: Path) -> None:
    spec = InputSpec(name="input", dtype=np.dtype("float32"), dims=(None, 4))
    path = tmp_path / "calib.npy"
    path.write_bytes(_npy_header_only((1 << 20, 1 << 20)))
    with pytest.raises(CalibrationError, match=r"calib\.npy .*declare"):
        load_calibration(path, [spec])
    np.save(path, np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(CalibrationError, match="pickles"):
        load_calibration(path, [spec])


def test_a_target_file_that_is_a_device_is_one_line_not_a_hang(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    box = _in_thread(load_target_file, link)
    err = box.get("error")
    assert isinstance(err, InputError) and "\n" not in str(err) and "zero.yaml" in str(err)
