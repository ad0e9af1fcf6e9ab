"""``--devices``: names, tags and globs against a real inventory file; a selection that matches nothing is exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.devices import load_inventory
from edgeopt.devices.select import parse_selection, select_devices
from edgeopt.errors import InputError

INVENTORY = """\
devices:
  - {name: pi5-01, host: 10.0.0.1, user: pi, target: rpi5, tags: [rpi5, shelf-a]}
  - {name: pi5-02, host: 10.0.0.2, user: pi, target: rpi5, tags: [rpi5, shelf-b]}
  - {name: orin-1, host: 10.0.0.3, user: nv, target: jetson-orin-nano, tags: [jetson, shelf-a]}
  - {name: nuc, host: 10.0.0.4, user: me, target: intel-nuc}
"""


@pytest.fixture()
def inventory(tmp_path: Path):
    path = tmp_path / "devices.yaml"
    path.write_text(INVENTORY)
    return load_inventory(path)


def _names(devices) -> list[str]:
    return [d.name for d in devices]


def test_names_tags_globs_and_all_select_in_inventory_order(inventory):
    assert _names(select_devices(inventory, "tag:rpi5")) == ["pi5-01", "pi5-02"]
    assert _names(select_devices(inventory, "nuc,tag:shelf-a")) == ["pi5-01", "orin-1", "nuc"]
    assert _names(select_devices(inventory, "pi5-*")) == ["pi5-01", "pi5-02"]
    assert _names(select_devices(inventory, ["orin-?", "pi5-0[2]"])) == ["pi5-02", "orin-1"]
    assert _names(select_devices(inventory, "all")) == ["pi5-01", "pi5-02", "orin-1", "nuc"]
    assert _names(select_devices(inventory, "tag:rpi5,pi5-01")) == ["pi5-01", "pi5-02"]  # each device once
    assert inventory.tags() == ["jetson", "rpi5", "shelf-a", "shelf-b"]


def test_a_tag_nobody_has_names_the_inventory_and_the_known_tags(inventory):
    with pytest.raises(InputError) as err:
        select_devices(inventory, "tag:rpi4")
    text = str(err.value)
    assert "no device has tag 'tag:rpi4'" in text and "did you mean 'tag:rpi5'" in text
    assert str(inventory.source) in text and "tags: jetson, rpi5, shelf-a, shelf-b" in text
    assert "\n" not in text


def test_unknown_name_glob_and_empty_selection_are_input_errors(inventory):
    with pytest.raises(InputError, match=r"unknown device 'pi5-03' \(did you mean 'pi5-0[12]'\?\)"):
        select_devices(inventory, "pi5-01,pi5-03")  # one bad term fails the whole selection
    with pytest.raises(InputError, match="no device name matches 'rpi-\\*'"):
        select_devices(inventory, "rpi-*")
    with pytest.raises(InputError, match="--devices is empty"):
        parse_selection(" , ")
    with pytest.raises(InputError, match="write tag:NAME"):
        parse_selection("tag:")


def test_tags_are_validated_in_the_inventory(tmp_path: Path):
    from edgeopt.devices import InventoryError

    bad = tmp_path / "devices.yaml"
    bad.write_text("devices:\n  - {name: a, host: h, user: u, target: rpi5, tags: ['bad tag']}\n")
    with pytest.raises(InventoryError, match="devices\\[0\\] \\(a\\).tags"):
        load_inventory(bad)
    bad.write_text("devices:\n  - {name: a, host: h, user: u, target: rpi5, tags: [x, x]}\n")
    with pytest.raises(InventoryError, match="appears twice"):
        load_inventory(bad)
