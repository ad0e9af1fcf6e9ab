"""The agent's harness with energy on: emulated boards with known power give known energy per inference.

The host's ``energy_from_run`` turns the raw power report into the figures, as ``edgeopt bench`` does.
"""

import pytest

from edgeopt.metrics.energy import energy_from_run
from edgeopt.targets import load_registry
from edgeopt_agent.harness import run
from edgeopt_agent.protocol import ERROR_INPUT, Request

from .trees import RaplCounter, fake_vcgencmd, jetson_iio, rapl, rpi5_expected_w

TARGET = load_registry().get("jetson-nano")


def _run(model, energy, **kw):
    seen = []
    raw = run(Request(model_path=str(model), iterations=50, min_duration_s=0.5, warmup=5, energy=energy, **kw),
              seen.append)
    assert raw.ok, raw.error
    return raw, [e.get("phase") for e in seen if e["event"] == "phase"]


def _energy(raw):
    n = len(raw.samples_ns)
    return energy_from_run(raw.power, target=TARGET, inferences=n, timed_s=raw.timed_wall_s,
                           flops_per_inference=1_000_000)


def test_jetson_nano_iio_rails(tiny_cnn, tmp_path):
    jetson_iio(tmp_path, {"POM_5V_IN": 4000, "POM_5V_GPU": 1000, "POM_5V_CPU": 1500})
    raw, phases = _run(tiny_cnn, {"sysfs_root": str(tmp_path), "idle_s": 0.2, "rate_hz": 40})
    assert phases == ["load", "idle", "warmup", "timed"]
    p = raw.power
    assert p["sensor"] == "ina3221" and p["layout"] == "iio" and p["rails"] == ["POM_5V_IN"]
    assert p["active"]["avg_w"] == pytest.approx(4.0) and p["idle"]["avg_w"] == pytest.approx(4.0)
    assert p["active"]["channels_w"]["POM_5V_GPU"] == pytest.approx(1.0)
    assert p["active"]["duration_s"] >= raw.timed_wall_s  # the window covers the timed phase
    assert p["active"]["samples"] >= 0.5 * 40 * 0.8
    assert p["idle"]["duration_s"] == pytest.approx(0.2, abs=0.05)
    energy, warnings = _energy(raw)
    per_inference_mj = 4.0 * raw.timed_wall_s / len(raw.samples_ns) * 1e3
    assert energy.source == "measured" and energy.energy_per_inference_mj == pytest.approx(per_inference_mj)
    assert energy.energy_per_inference_above_idle_mj == pytest.approx(0.0, abs=1e-9) and warnings == []
    assert energy.inferences_per_joule == pytest.approx(1e3 / per_inference_mj)


def test_rapl_counter_with_wraps(tiny_cnn, tmp_path):
    rng = 4_000_000  # wraps every ~0.33 s at 12 W
    zones = rapl(tmp_path, max_range_uj=rng)
    with RaplCounter([z / "energy_uj" for z in zones], watts=12.0, max_range_uj=rng):
        raw, _ = _run(tiny_cnn, {"sysfs_root": str(tmp_path), "idle_s": 0.2, "sensor": "rapl"})
    energy, _ = _energy(raw)
    assert raw.power["kind"] == "energy" and raw.power["active"]["energy_j"] > rng / 1e6  # spans a wrap
    assert energy.active_power_w == pytest.approx(12.0, rel=0.03)
    assert energy.energy_per_inference_mj == pytest.approx(12.0 * raw.timed_wall_s / len(raw.samples_ns) * 1e3,
                                                           rel=0.03)


def test_rpi5_pmic_through_vcgencmd(tiny_cnn, tmp_path):
    cmd = fake_vcgencmd(tmp_path)
    raw, _ = _run(tiny_cnn, {"vcgencmd": str(cmd), "sensor": "rpi5_pmic", "idle_s": 0.1})
    energy, _ = _energy(raw)
    assert energy.sensor == "rpi5_pmic" and len(energy.rails) == 12
    assert energy.active_power_w == pytest.approx(rpi5_expected_w())
    assert raw.power["rate_hz_used"] == 5.0


def test_no_sensor_runs_no_idle_window_and_says_why(tiny_cnn, tmp_path):
    raw, phases = _run(tiny_cnn, {"sysfs_root": str(tmp_path), "vcgencmd": str(tmp_path / "none")})
    assert phases == ["load", "warmup", "timed"]
    assert raw.power["sensor"] is None and raw.power["reason"].startswith("no power sensor found")
    raw, _ = _run(tiny_cnn, {"enabled": False})
    assert raw.power == {}


def test_bad_energy_settings_are_an_input_error(tiny_cnn):
    raw = run(Request(model_path=str(tiny_cnn), energy={"rate_hz": -1}), lambda e: None)
    assert not raw.ok and raw.error_kind == ERROR_INPUT and "rate_hz" in raw.error
