"""Raspberry Pi 5 PMIC rails through a vcgencmd that prints the firmware's real output format."""

import os

import pytest

from edgeopt_agent.power import SensorNotFound, open_reader, parse_settings
from edgeopt_agent.power.rpi5_pmic import MAX_RATE_HZ, parse_pmic_adc

from .trees import RPI5_PMIC_OUTPUT, fake_vcgencmd, rpi5_expected_w


def test_parse_pairs_current_and_volt_lines_by_rail_name():
    rails = parse_pmic_adc(RPI5_PMIC_OUTPUT)
    assert rails["VDD_CORE"] == (2.5, 0.8)
    assert list(rails)[:2] == ["3V7_WL_SW", "3V3_SYS"]
    assert "EXT5V" not in rails and "BATT" not in rails  # voltage only: no current, not a rail
    assert len(rails) == 12


def test_parse_ignores_other_text():
    assert parse_pmic_adc('error=1 error_msg="Command not registered"\n') == {}
    assert parse_pmic_adc("   VDD_CORE_A volt(15)=0.85V\n") == {}  # suffix and word disagree


def test_reader_sums_current_times_volt(tmp_path):
    cmd = fake_vcgencmd(tmp_path)
    r = open_reader("rpi5_pmic", parse_settings({"vcgencmd": str(cmd)}))
    values = r.read()
    assert sum(values) == pytest.approx(rpi5_expected_w())
    assert values[r.channels.index("VDD_CORE")] == pytest.approx(2.0)
    assert r.max_rate_hz == MAX_RATE_HZ and "pmic_read_adc" in r.describe()["source"]


def test_missing_command_or_a_pi4_is_not_found(tmp_path):
    with pytest.raises(SensorNotFound, match="not an executable"):
        open_reader("rpi5_pmic", parse_settings({"vcgencmd": str(tmp_path / "nope")}))
    pi4 = fake_vcgencmd(tmp_path, output='error=1 error_msg="Command not registered"\n', exit_code=0)
    with pytest.raises(SensorNotFound, match="no rail current/volt pairs"):
        open_reader("rpi5_pmic", parse_settings({"vcgencmd": str(pi4)}))
    failing = fake_vcgencmd(tmp_path, output="VCHI initialization failed\n", exit_code=255)
    with pytest.raises(SensorNotFound, match="exited with 255"):
        open_reader("rpi5_pmic", parse_settings({"vcgencmd": str(failing)}))


def test_bare_name_is_looked_up_on_path(tmp_path, monkeypatch):
    fake_vcgencmd(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    r = open_reader("rpi5_pmic", parse_settings({}))
    assert r.source.startswith(str(tmp_path))
