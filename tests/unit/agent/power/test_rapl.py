"""Intel RAPL energy counters: deltas, wrap-around at max_energy_range_uj, which zones count."""

import time

import pytest

from edgeopt_agent.power import KIND_ENERGY, PowerSession, SensorNotFound, open_reader, parse_settings
from edgeopt_agent.power.rapl import delta_uj

from .trees import RaplCounter, overwrite, rapl


def _open(root):
    return open_reader("rapl", parse_settings({"sysfs_root": str(root)}))


def test_delta_handles_one_wrap():
    assert delta_uj(100, 350, 1000) == 250
    assert delta_uj(900, 50, 1000) == 150  # 100 to the wrap, then 50 after it
    assert delta_uj(5, 5, 1000) == 0


def test_counter_deltas_accumulate_across_a_wrap(tmp_path):
    rng = 262143328850
    (zone,) = rapl(tmp_path, energy_uj=rng - 1_000_000, max_range_uj=rng)
    r = _open(tmp_path)
    try:
        assert r.kind == KIND_ENERGY and r.channels == ["package-0"]  # core/uncore are inside the package
        assert r.read() == [0.0]
        overwrite(zone / "energy_uj", str(rng - 250_000) + "\n")
        assert r.read() == pytest.approx([0.75])
        overwrite(zone / "energy_uj", "500000\n")  # wrapped: 0.25 J to the top, 0.5 J after
        assert r.read() == pytest.approx([1.5])
        overwrite(zone / "energy_uj", "2500000\n")
        assert r.read() == pytest.approx([3.5])
    finally:
        r.close()


def test_dram_subzone_is_added_and_psys_is_not(tmp_path):
    rapl(tmp_path, packages=2, dram=True, psys=True)
    r = _open(tmp_path)
    try:
        assert r.channels == ["package-0", "package-0/dram", "package-1", "package-1/dram"]
        assert r.summed == [0, 1, 2, 3]
        notes = " ".join(r.describe()["notes"])
        assert "psys" in notes and "DRAM power is not included" not in notes
    finally:
        r.close()


def test_package_only_cpu_says_dram_is_missing(tmp_path):
    rapl(tmp_path)
    r = _open(tmp_path)
    try:
        assert "DRAM power is not included" in " ".join(r.describe()["notes"])
    finally:
        r.close()


def test_missing_range_or_tree_is_not_found(tmp_path):
    with pytest.raises(SensorNotFound, match="no RAPL package zone"):
        _open(tmp_path)
    (zone,) = rapl(tmp_path)
    (zone / "max_energy_range_uj").unlink()
    with pytest.raises(SensorNotFound, match="max_energy_range_uj"):
        _open(tmp_path)


def test_known_power_gives_known_energy_through_several_wraps(tmp_path):
    """A counter advancing at 12 W that wraps every 0.25 s, read at 20 Hz for ~0.6 s: 12 W comes back."""
    rng = 3_000_000
    zones = rapl(tmp_path, max_range_uj=rng)
    with RaplCounter([z / "energy_uj" for z in zones], watts=12.0, max_range_uj=rng):
        time.sleep(0.01)
        session = PowerSession.open({"sysfs_root": str(tmp_path), "sensor": "rapl", "rate_hz": 20, "idle_s": 0.2})
        try:
            session.idle()
            session.start()
            time.sleep(0.6)
            session.stop()
            report = session.report()
        finally:
            session.close()
    active = report["active"]
    assert report["sensor"] == "rapl" and report["kind"] == "energy"
    assert active["duration_s"] == pytest.approx(0.6, abs=0.1)
    assert active["avg_w"] == pytest.approx(12.0, rel=0.03)  # >= 2 wraps inside the window
    assert active["energy_j"] == pytest.approx(12.0 * active["duration_s"], rel=0.03)
    assert report["idle"]["avg_w"] == pytest.approx(12.0, rel=0.05)
