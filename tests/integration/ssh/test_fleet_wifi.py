"""A fleet where half the devices are Wi-Fi-like: latency (user-space proxy) and packet loss (nftables in the
device's own network namespace). The fleet completes and every device's row is its own, correct result.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from edgeopt.bench.fleet import fleet_benchmark
from edgeopt.runners.ssh_session import SshTimeouts
from tests.faults.helpers import wait_for
from tests.integration.ssh.lab import DEVICE_PYTHON, Lab
from tests.integration.ssh.sshd import processes_mentioning
from tests.integration.ssh.wifi import WifiDevice, netns_unavailable_reason

pytestmark = [pytest.mark.netns, pytest.mark.slow]  # ~1 min: the first agent upload crosses the slow links

# name -> (one-way delay s, loss %): a board at the edge of the Wi-Fi's range, and a busy 2.4 GHz channel.
WIFI = {"wifi-00": (0.05, 3), "wifi-01": (0.02, 5)}


@pytest.fixture()
def mixed_lab(tmp_path: Path) -> Iterator[tuple[Lab, dict[str, WifiDevice]]]:
    reason = netns_unavailable_reason()
    if reason:
        pytest.skip(reason)
    wifis: dict[str, WifiDevice] = {}
    with Lab(tmp_path / "lab", 2) as lab:
        try:
            for i, name in enumerate(WIFI):
                wifis[name] = WifiDevice(tmp_path / name / "server", 50 + i).start()
            inventory = yaml.safe_load(lab.inventory.read_text())
            hosts = lab.known_hosts.read_text()
            for name, wifi in wifis.items():
                inventory["devices"].append({
                    "name": name, "host": "127.0.0.1", "port": wifi.port, "user": "root", "target": "local",
                    "workdir": str(tmp_path / name / "device"), "tags": ["lab", "wifi"],
                    "key": str(wifi.sshd.client_key), "python": DEVICE_PYTHON})
                kind, key = Path(f"{wifi.sshd.host_key}.pub").read_text().split()[:2]
                hosts += f"[127.0.0.1]:{wifi.port} {kind} {key}\n"
            lab.inventory.write_text(yaml.safe_dump(inventory, sort_keys=False))
            lab.known_hosts.write_text(hosts)
            yield lab, wifis
        finally:
            for wifi in wifis.values():
                wifi.stop()


def test_fleet_with_wifi_like_devices_completes_with_each_devices_own_result(mixed_lab, tiny_cnn: Path,
                                                                               tmp_path: Path):
    lab, wifis = mixed_lab
    for name, (delay_s, loss) in WIFI.items():
        assert wifis[name].proxy is not None
        wifis[name].proxy.slow(delay_s)
        wifis[name].loss(loss)
        assert f"mod 100 < {loss} drop" in wifis[name].rules()
    started = time.monotonic()
    result = fleet_benchmark(tiny_cnn, devices="tag:lab", inventory=lab.inventory, known_hosts=lab.known_hosts,
                             timeouts=SshTimeouts(keepalive_s=1, dead_after_s=15), iterations=30,
                             min_duration_s=1.0, warmup=2, energy=False, deadline_s=180)
    took = time.monotonic() - started
    rows = {r.device: r for r in result.rows}
    assert list(rows) == ["lab-00", "lab-01", "wifi-00", "wifi-01"], list(rows)
    ports = {d.name: d.port for d in lab.devices} | {name: w.port for name, w in wifis.items()}
    for name, row in rows.items():
        assert row.status == "ok" and row.result is not None and row.result.valid, (name, row.error)
        assert row.result.runner == f"ssh:root@127.0.0.1:{ports[name]}"  # each row is its own device's run
        assert row.result.run.samples >= 30 and row.result.run.timed_s >= 1.0
        others = [p for n, p in ports.items() if n != name]
        assert not any(f":{p}" in json.dumps(row.model_dump(mode="json")) for p in others)
    assert all(w.proxy is not None and w.proxy.connections >= 1 for w in wifis.values())  # through the slow link
    assert result.exit_code == 0 and result.aggregate.ok == 4 and result.aggregate.failed == []
    print(f"fleet of 2 loopback + 2 Wi-Fi-like devices: {took:.1f} s")
    workdirs = [str(d.workdir) for d in lab.devices] + [str(tmp_path / n / "device") for n in WIFI]
    assert wait_for(lambda: not any(processes_mentioning(f"{w}/") for w in workdirs), 20)
    for w in workdirs:
        assert not (Path(w) / "locks" / "device.lock").exists(), w
        assert not list((Path(w) / "jobs").iterdir()), w
