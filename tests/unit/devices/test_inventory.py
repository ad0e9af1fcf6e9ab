"""The inventory file, ``--host`` parsing and runner selection (nothing connects here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from edgeopt.config import from_environment
from edgeopt.devices import Device, InventoryError, SshAddress, default_inventory_path, load_inventory, parse_host
from edgeopt.errors import ExitCode, InputError
from edgeopt.runners import LocalRunner
from edgeopt.runners.select import choose_runner
from edgeopt.runners.ssh import SshRunner
from edgeopt.settings import RemoteSpec

GOOD = """\
devices:
  - name: pi5-lab
    host: 192.168.1.50
    user: pi
    key: keys/pi_ed25519
    target: rpi5
  - name: orin
    host: orin.local
    port: 2222
    user: nvidia
    key: ~/.ssh/orin
    target: jetson-orin-nano
    python: /usr/bin/python3.8
    workdir: /data/edgeopt
"""


def test_good_inventory_loads_with_defaults_and_resolved_keys(tmp_path: Path):
    path = tmp_path / "devices.yaml"
    path.write_text(GOOD)
    inv = load_inventory(path)
    assert inv.names() == ["pi5-lab", "orin"] and inv.source == path
    pi = inv.get("pi5-lab")
    assert (pi.port, pi.python, pi.workdir) == (22, "/usr/bin/python3", ".cache/edgeopt")
    assert pi.key == tmp_path / "keys" / "pi_ed25519"  # relative to the inventory file, not the cwd
    orin = inv.get("orin")
    assert orin.key == Path("~/.ssh/orin").expanduser() and orin.label() == "nvidia@orin.local:2222"
    with pytest.raises(ValidationError):
        orin.port = 22  # type: ignore[misc]  # frozen


def test_unknown_device_suggests_the_closest(tmp_path: Path):
    path = tmp_path / "devices.yaml"
    path.write_text(GOOD)
    expected = r"unknown device 'pi5-lb' \(did you mean 'pi5-lab'\?\).*known devices: pi5-lab, orin"
    with pytest.raises(InputError, match=expected):
        load_inventory(path).get("pi5-lb")


@pytest.mark.parametrize("text,needle", [
    ("devices:\n  - {name: a, host: h, user: u, target: rpi5}\n  - {name: a, host: h2, user: u, target: rpi5}\n",
     "device name 'a' appears twice"),
    ("devices:\n  - {name: a, host: 'h; rm -rf /', user: u, target: rpi5}\n", "devices[0] (a).host"),
    ("devices:\n  - {name: a, host: h, user: 'u x', target: rpi5}\n", "devices[0] (a).user"),
    ("devices:\n  - {name: a, host: h, user: u, target: rpi5, workdir: '~bob/x'}\n", "devices[0] (a).workdir"),
    ("devices:\n  - {name: a, host: h, user: u, target: rpi5, port: 0}\n", "devices[0] (a).port"),
    ("devices: {a: 1}\n", "key 'devices'"),
    ("hosts: []\n", "key 'hosts'"),
])
def test_invalid_inventory_names_file_and_key(tmp_path: Path, text: str, needle: str):
    path = tmp_path / "devices.yaml"
    path.write_text(text)
    with pytest.raises(InventoryError) as info:
        load_inventory(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and needle in message and "\n" not in message
    assert info.value.exit_code == ExitCode.USAGE


def test_empty_inventory_is_valid_and_missing_one_says_how_to_create_it(tmp_path: Path):
    (tmp_path / "devices.yaml").write_text("")
    assert load_inventory(tmp_path / "devices.yaml").devices == []
    with pytest.raises(InventoryError, match="not found.*--inventory.*EDGEOPT_INVENTORY"):
        load_inventory(tmp_path / "nope.yaml")


def test_inventory_path_comes_from_the_environment_only_through_config(tmp_path: Path):
    settings = from_environment({"EDGEOPT_INVENTORY": str(tmp_path / "inv.yaml")})
    assert default_inventory_path(settings) == tmp_path / "inv.yaml"
    assert default_inventory_path(from_environment({})) == Path("devices.yaml")


@pytest.mark.parametrize("text,expected", [
    ("pi@192.168.1.50", ("pi", "192.168.1.50", 22)),
    ("root@127.0.0.1:2222", ("root", "127.0.0.1", 2222)),
    ("nvidia@orin.local", ("nvidia", "orin.local", 22)),
    ("me@[fe80::1%eth0]:22", ("me", "fe80::1%eth0", 22)),
    ("me@[::1]:2200", ("me", "::1", 2200)),
])
def test_parse_host(text: str, expected: tuple[str, str, int]):
    a = parse_host(text)
    assert (a.user, a.host, a.port) == expected and a.python == "/usr/bin/python3"


@pytest.mark.parametrize("text", ["192.168.1.50", "pi@", "@host", "pi@host:99999", "pi@host:x", "pi@ho st",
                                  "pi@$(reboot)", "pi;ls@host", "pi@-oProxyCommand=x"])
def test_parse_host_rejects_malformed(text: str):
    with pytest.raises(InputError, match="--host"):
        parse_host(text)


def test_parse_host_checks_python_and_workdir():
    with pytest.raises(InputError, match="--python"):
        parse_host("pi@h", python="python3")
    assert parse_host("pi@h", workdir="~/bench").workdir == "bench"


def test_device_overrides_key_and_python():
    dev = Device(name="d", host="h", user="u", target="rpi5", key=Path("/k"))
    a = dev.address(python="/opt/py/bin/python3")
    assert isinstance(a, SshAddress) and a.key == Path("/k") and a.python == "/opt/py/bin/python3"
    assert dev.address(key=Path("/k2")).key == Path("/k2")
    with pytest.raises(InputError, match="--python"):
        dev.address(python="relative/python")


def test_choose_runner(tmp_path: Path):
    assert isinstance(choose_runner().runner, LocalRunner)
    assert choose_runner(RemoteSpec(python="/usr/bin/python3")).runner.describe().python == "/usr/bin/python3"
    choice = choose_runner(RemoteSpec(host="pi@10.0.0.5:2200", key="~/k"))
    assert isinstance(choice.runner, SshRunner) and choice.target is None
    assert choice.runner.name == "ssh:pi@10.0.0.5:2200" and choice.runner.address.key == Path("~/k").expanduser()
    (tmp_path / "devices.yaml").write_text(GOOD)
    choice = choose_runner(RemoteSpec(device="orin", inventory=tmp_path / "devices.yaml", python="/usr/bin/python3"))
    assert choice.target == "jetson-orin-nano" and choice.runner.name == "ssh:nvidia@orin.local:2222"
    assert choice.runner.describe().python == "/usr/bin/python3" and not choice.runner.describe().local
    with pytest.raises(InputError, match="pick one"):
        choose_runner(RemoteSpec(host="pi@h", device="orin"))
    with pytest.raises(InputError, match="--key and --accept-new-host-key apply to a remote device"):
        choose_runner(RemoteSpec(key="k"))
