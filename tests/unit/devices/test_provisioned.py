"""The setup sidecar (devices.state.json): later runs use the recorded venv unless devices.yaml says otherwise."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from edgeopt.devices import load_inventory
from edgeopt.devices.provisioned import SetupRecord, read_state, state_path, write_record
from edgeopt.errors import InputError

INVENTORY = """\
devices:
  - {name: a, host: 10.0.0.1, user: pi, target: rpi5}
  - {name: b, host: 10.0.0.2, user: pi, target: rpi5, python: /opt/py/bin/python3}
  - {name: c, host: 10.0.0.3, user: pi, target: rpi5}
"""


def _record(host: str, python: str = "/home/pi/.cache/edgeopt/venv/bin/python") -> SetupRecord:
    return SetupRecord(user="pi", host=host, port=22, workdir=".cache/edgeopt", python=python,
                       base_python="/usr/bin/python3", python_version="3.11.2", arch="aarch64",
                       updated_at="2026-01-01T00:00:00+00:00")


def test_recorded_venv_applies_only_without_explicit_python_and_to_the_same_address(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(INVENTORY)
    write_record(inv, "a", _record("10.0.0.1"))
    write_record(inv, "b", _record("10.0.0.2"))
    write_record(inv, "c", _record("10.9.9.9"))  # the inventory now points c elsewhere: stale record
    assert state_path(inv) == tmp_path / "devices.state.json"
    loaded = load_inventory(inv)
    assert loaded.get("a").python == "/home/pi/.cache/edgeopt/venv/bin/python"
    assert loaded.get("b").python == "/opt/py/bin/python3"  # devices.yaml wins
    assert loaded.get("c").python == "/usr/bin/python3"
    assert load_inventory(inv, setup_state=False).get("a").python == "/usr/bin/python3"
    assert inv.read_text() == INVENTORY  # the user's file is never rewritten


def test_parallel_writers_keep_every_record(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(INVENTORY)
    threads = [threading.Thread(target=write_record, args=(inv, f"d{i}", _record(f"10.0.1.{i}"))) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(read_state(state_path(inv)).devices) == sorted(f"d{i}" for i in range(12))
    assert not list(tmp_path.glob("*.tmp"))


def test_a_corrupt_state_file_is_one_line_with_the_fix(tmp_path: Path):
    inv = tmp_path / "devices.yaml"
    inv.write_text(INVENTORY)
    state_path(inv).write_text("{not json")
    with pytest.raises(InputError, match="not a valid device setup state .*delete it and run 'edgeopt devices setup"):
        load_inventory(inv)
