"""``devices setup`` takes bench's SSH flags (``--ssh-timeout STEP=S``, ``--device-cache-mb``) through RemoteSpec.

A device that accepts TCP but never sends an SSH banner (a board that hangs at boot) stands in for a slow link:
with ``--ssh-timeout connect=1`` setup gives up on it in about a second instead of the default 15 s.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from edgeopt.cli.main import main
from edgeopt.devices import load_inventory
from edgeopt.devices.fleet_setup import SetupJob
from edgeopt.settings import RemoteSpec, SshTimeouts


@pytest.fixture()
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never says anything."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


def _inventory(tmp_path: Path, port: int) -> Path:
    inv = tmp_path / "devices.yaml"
    inv.write_text(yaml.safe_dump({"devices": [{"name": "mute", "host": "127.0.0.1", "port": port, "user": "root",
                                                "target": "local", "workdir": str(tmp_path / "w")}]}))
    return inv


def test_setup_honours_ssh_timeout_and_cache_size(tmp_path: Path, silent_port: int, capsys):
    inv = _inventory(tmp_path, silent_port)
    started = time.monotonic()
    code = main(["devices", "setup", "mute", "--inventory", str(inv), "--known-hosts", str(tmp_path / "kh"),
                 "--ssh-timeout", "connect=1", "--device-cache-mb", "64", "--json"])
    elapsed = time.monotonic() - started
    out = json.loads(capsys.readouterr().out)
    row = out["devices"][0]
    assert code == 3 == out["exit_code"] and row["status"] == "error" and row["error_kind"] == "unreachable", row
    assert elapsed < 10, elapsed  # the default connect deadline is 15 s


def test_setup_job_carries_the_remote_spec_to_the_device(tmp_path: Path):
    inv = _inventory(tmp_path, 22)
    device = load_inventory(inv, setup_state=False).get("mute")
    remote = RemoteSpec(timeouts=SshTimeouts(connect_s=2.0), device_cache_mb=64, known_hosts=Path("~/kh"))
    fleet_device = SetupJob(device, inv, {}, remote).device
    assert fleet_device.timeouts is not None and fleet_device.timeouts.connect_s == 2.0
    assert fleet_device.cache_limit_bytes == 64 * 1024 * 1024 and fleet_device.known_hosts == Path("~/kh").expanduser()


def test_setup_refuses_flags_it_does_not_take_and_bad_timeouts(tmp_path: Path, capsys):
    inv = _inventory(tmp_path, 22)
    assert main(["devices", "setup", "mute", "--inventory", str(inv), "--ssh-timeout", "nap=1"]) == 2
    assert "--ssh-timeout 'nap=1': expected STEP=SECONDS" in capsys.readouterr().err
    assert main(["devices", "setup", "mute", "--inventory", str(inv), "--host", "root@x"]) == 2
