"""Energy settings, the reader registry, and which sensor ``auto`` picks."""

import pytest

from edgeopt_agent.power import find_reader, names, open_reader, parse_settings, probe
from edgeopt_agent.protocol import ENERGY_DEFAULTS

from .trees import hwmon, jetson_hwmon, rapl


def test_defaults_come_from_the_protocol():
    s = parse_settings(None)
    assert (s.enabled, s.sensor, s.sysfs_root, s.rate_hz, s.idle_s) == (True, "auto", "/", 20.0, 0.5)
    assert set(ENERGY_DEFAULTS) == {"enabled", "sensor", "prefer", "sysfs_root", "rate_hz", "idle_s", "vcgencmd"}
    assert parse_settings({"sysfs_root": "/x"}).sys_path("/sys/class/hwmon") == "/x/sys/class/hwmon"


@pytest.mark.parametrize("bad, match", [
    ({"sensr": "auto"}, "unknown energy setting.*sensr"),
    ({"sensor": "ina226"}, "'ina226' is not one of: hwmon, ina3221, rapl, rpi5_pmic, auto, none"),
    ({"rate_hz": 0}, "rate_hz must be in"),
    ({"rate_hz": "fast"}, "must be numbers"),
    ({"idle_s": -1}, "idle_s must be >= 0"),
    ({"prefer": "tpu"}, "preferred energy sensor 'tpu'"),
])
def test_bad_settings_name_the_value(bad, match):
    with pytest.raises(ValueError, match=match):
        parse_settings(bad)


def test_unknown_reader_lists_known_ones():
    assert names() == ["hwmon", "ina3221", "rapl", "rpi5_pmic"]
    with pytest.raises(KeyError, match="known sensors: hwmon, ina3221"):
        open_reader("nope", parse_settings({}))


def _found(root, **kw):
    reader, reason = find_reader(parse_settings(dict(sysfs_root=str(root), vcgencmd=str(root / "none"), **kw)))
    if reader is not None:
        reader.close()
    return reader.name if reader else None, reason


def test_auto_prefers_board_sensors_then_the_targets_choice(tmp_path):
    jetson_hwmon(tmp_path)
    hwmon(tmp_path)
    rapl(tmp_path)
    assert _found(tmp_path)[0] == "ina3221"
    assert _found(tmp_path, prefer="hwmon")[0] == "hwmon"  # the target's sensor goes first
    assert _found(tmp_path, sensor="rapl")[0] == "rapl"


def test_nothing_found_gives_every_reason(tmp_path):
    name, reason = _found(tmp_path)
    assert name is None and reason.startswith("no power sensor found")
    for sensor in names():
        assert sensor + ":" in reason
    assert _found(tmp_path, sensor="ina3221") == (None, reason.split("; ")[0] + ")")


def test_probe_lists_each_sensor_with_rails_or_reason(tmp_path):
    jetson_hwmon(tmp_path)
    found = probe(parse_settings({"sysfs_root": str(tmp_path), "vcgencmd": str(tmp_path / "none")}))
    assert found["ina3221"]["available"] and found["ina3221"]["rails"] == ["VDD_IN"]
    assert not found["rapl"]["available"] and "RAPL" in found["rapl"]["reason"]
