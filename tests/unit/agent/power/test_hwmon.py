"""Generic hwmon power channels (microwatts), _input preferred, _average as fallback."""

import pytest

from edgeopt_agent.power import SensorNotFound, open_reader, parse_settings

from .trees import hwmon, write


def test_sums_every_power_channel_in_microwatts(tmp_path):
    total = hwmon(tmp_path)
    r = open_reader("hwmon", parse_settings({"sysfs_root": str(tmp_path)}))
    try:
        assert r.channels == ["amdgpu/PPT", "ina226/power1"]
        assert sum(r.read()) == pytest.approx(total)
    finally:
        r.close()


def test_input_wins_over_average_for_the_same_channel(tmp_path):
    write(tmp_path, "sys/class/hwmon/hwmon0/name", "psu\n")
    write(tmp_path, "sys/class/hwmon/hwmon0/power1_average", "9000000\n")
    write(tmp_path, "sys/class/hwmon/hwmon0/power1_input", "7000000\n")
    r = open_reader("hwmon", parse_settings({"sysfs_root": str(tmp_path)}))
    try:
        assert r.read() == pytest.approx([7.0])
    finally:
        r.close()


def test_temperature_only_hwmon_is_not_a_power_sensor(tmp_path):
    write(tmp_path, "sys/class/hwmon/hwmon0/name", "k10temp\n")
    write(tmp_path, "sys/class/hwmon/hwmon0/temp1_input", "45000\n")
    with pytest.raises(SensorNotFound, match="no power"):
        open_reader("hwmon", parse_settings({"sysfs_root": str(tmp_path)}))
