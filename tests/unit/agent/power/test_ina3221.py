"""Jetson INA3221 rails in both sysfs layouts, from emulated trees with the real file names and units."""

import pytest

from edgeopt_agent.power import SensorNotFound, open_reader, parse_settings

from .trees import jetson_hwmon, jetson_iio, overwrite, write


def _open(root):
    return open_reader("ina3221", parse_settings({"sysfs_root": str(root)}))


def test_hwmon_layout_reads_mv_times_ma_and_uses_vdd_in_as_the_total(tmp_path):
    jetson_hwmon(tmp_path)  # VDD_IN 5000 mV x 2000 mA = 10 W; CPU_GPU_CV 3 W; SOC 2 W
    r = _open(tmp_path)
    try:
        assert r.channels == ["VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"]  # curr4 (sum) and in4..7 (shunt) skipped
        assert r.read() == pytest.approx([10.0, 3.0, 2.0])
        assert [r.channels[i] for i in r.summed] == ["VDD_IN"]  # parts of VDD_IN are not added again
        info = r.describe()
        assert info["layout"] == "hwmon" and info["rails"] == ["VDD_IN"]
        assert any("carrier board" in n for n in info["notes"])
    finally:
        r.close()


def test_hwmon_values_are_re_read_from_the_open_file_each_time(tmp_path):
    d = jetson_hwmon(tmp_path)
    r = _open(tmp_path)
    try:
        overwrite(d / "curr1_input", "1000\n")
        assert r.read()[0] == pytest.approx(5.0)
    finally:
        r.close()


def test_agx_orin_hwmon_without_total_rail_sums_rails_and_skips_nc(tmp_path):
    jetson_hwmon(tmp_path, {"VDD_GPU_SOC": (5000, 1000), "VDD_CPU_CV": (5000, 400), "VIN_SYS_5V0": (5000, 300)},
                 chip="1-0040", hwmon="hwmon1")
    jetson_hwmon(tmp_path, {"NC": (0, 0), "VDDQ_VDD2_1V8AO": (1800, 500), "NC ": (0, 0)}, chip="1-0041",
                 hwmon="hwmon2")
    r = _open(tmp_path)
    try:
        assert r.channels == ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "VDDQ_VDD2_1V8AO"]
        assert len(r.summed) == 4
        assert sum(r.read()[i] for i in r.summed) == pytest.approx(5.0 + 2.0 + 1.5 + 0.9)
    finally:
        r.close()


def test_disabled_channel_is_skipped(tmp_path):
    d = jetson_hwmon(tmp_path)
    overwrite(d / "in3_enable", "0\n")
    r = _open(tmp_path)
    try:
        assert r.channels == ["VDD_IN", "VDD_CPU_GPU_CV"]
    finally:
        r.close()


def test_iio_layout_nano_reads_mw_and_uses_pom_5v_in(tmp_path):
    jetson_iio(tmp_path, {"POM_5V_IN": 4200, "POM_5V_GPU": 900, "POM_5V_CPU": 1300})
    r = _open(tmp_path)
    try:
        assert r.describe()["layout"] == "iio"
        assert r.read() == pytest.approx([4.2, 0.9, 1.3])
        assert [r.channels[i] for i in r.summed] == ["POM_5V_IN"]
    finally:
        r.close()


def test_iio_layout_agx_xavier_two_chips_are_summed(tmp_path):
    jetson_iio(tmp_path, {"GPU": 3000, "CPU": 2000, "SOC": 1500}, chip="1-0040", device="iio:device0")
    jetson_iio(tmp_path, {"CV": 500, "VDDRQ": 700, "SYS5V": 1800}, chip="1-0041", device="iio:device1")
    r = _open(tmp_path)
    try:
        assert r.channels == ["GPU", "CPU", "SOC", "CV", "VDDRQ", "SYS5V"]
        assert sum(r.read()[i] for i in r.summed) == pytest.approx(9.5)
    finally:
        r.close()


def test_no_jetson_tree_says_where_it_looked(tmp_path):
    with pytest.raises(SensorNotFound, match="no INA3221 rails under .*ina3221/\\*/hwmon"):
        _open(tmp_path)


def test_unreadable_value_is_not_found_with_the_path(tmp_path):
    d = jetson_hwmon(tmp_path)
    write(tmp_path, str((d / "curr2_input").relative_to(tmp_path)), "n/a\n")
    with pytest.raises(SensorNotFound, match="could not be read"):
        _open(tmp_path)
