"""Energy end to end: ``edgeopt.benchmark`` and ``edgeopt bench`` with an emulated Jetson, and without sensors."""

from __future__ import annotations

import json

import pytest

import edgeopt
from edgeopt.errors import InputError
from edgeopt.targets import load_registry
from edgeopt_agent.power import parse_settings, probe
from tests.cli_here import edgeopt_here as edgeopt_cli
from tests.unit.agent.power.trees import jetson_hwmon

FAST = dict(iterations=50, min_duration_s=0.5, warmup=5, use_target_fps=False, percentile="p50", power_idle_s=0.2)


def test_emulated_jetson_hwmon_tree_is_measured(tiny_cnn, tmp_path):
    jetson_hwmon(tmp_path)  # VDD_IN 5000 mV x 2000 mA = 10 W, constant
    r = edgeopt.benchmark(tiny_cnn, target="jetson-orin-nano", sysfs_root=tmp_path, **FAST)
    e = r.energy
    assert e is not None and e.source == "measured" and e.sensor == "ina3221" and e.rails == ["VDD_IN"]
    assert e.active_power_w == pytest.approx(10.0) and e.idle_power_w == pytest.approx(10.0)
    # W x ms = mJ: at least the power times the mean latency (the timed phase's wall time per inference also holds
    # the loop's gaps, which a loaded CPU widens: 7 % on a 2-core runner beside two CPU hogs)
    assert e.energy_per_inference_mj >= 10.0 * r.latency_ms.mean * 0.999
    assert e.energy_per_inference_mj == pytest.approx(10.0 * r.run.timed_s / r.run.samples * 1e3)
    assert e.energy_per_inference_above_idle_mj == pytest.approx(0.0, abs=1e-9)
    assert e.inferences_per_joule == pytest.approx(r.run.samples / (10.0 * r.run.timed_s))
    flops = r.compute.flops_per_inference
    assert e.tops_per_watt == pytest.approx(flops * r.run.samples / r.run.timed_s / 10.0 / 1e12)
    assert e.samples >= 5 and "ESTIMATE" not in e.note
    assert r.settings.energy["sysfs_root"] == str(tmp_path) and r.settings.energy["prefer"] == "ina3221"


def test_same_run_without_sensors_is_an_estimate(tiny_cnn, tmp_path):
    r = edgeopt.benchmark(tiny_cnn, target="local", sysfs_root=tmp_path, vcgencmd=str(tmp_path / "none"), **FAST)
    e = r.energy
    tdp = load_registry().get("local").tdp_w
    assert e is not None and e.source == "estimate" and e.sensor is None and e.samples is None
    assert e.active_power_w == pytest.approx(tdp.value) and e.idle_power_w is None
    assert e.note.startswith("ESTIMATE, not a measurement") and "no power sensor found" in e.note
    assert e.energy_per_inference_mj == pytest.approx(tdp.value * r.run.timed_s / r.run.samples * 1e3)


def test_this_machine_without_sensors_is_an_estimate(tiny_cnn):
    found = probe(parse_settings({}))
    if any(v["available"] for v in found.values()):
        pytest.skip("this machine has a readable power sensor: " + ", ".join(k for k, v in found.items()
                                                                             if v["available"]))
    r = edgeopt.benchmark(tiny_cnn, target="local", **FAST)
    assert r.energy is not None and r.energy.source == "estimate"


def test_energy_off_and_sensor_none(tiny_cnn, tmp_path):
    jetson_hwmon(tmp_path)
    assert edgeopt.benchmark(tiny_cnn, energy=False, sysfs_root=tmp_path, **FAST).energy is None
    r = edgeopt.benchmark(tiny_cnn, power_sensor="none", sysfs_root=tmp_path, **FAST)
    assert r.energy.source == "estimate" and "power sensor 'none' requested" in r.energy.note
    with pytest.raises(InputError, match="--power-sensor"):
        edgeopt.benchmark(tiny_cnn, power_sensor="ina226", **FAST)


def test_cli_json_measured_and_table_marks_estimates(tiny_cnn, tmp_path):
    jetson_hwmon(tmp_path)
    common = ["bench", str(tiny_cnn), "-n", "50", "--min-duration", "0.3", "--no-budget", "--percentile", "p50"]
    p = edgeopt_cli(*common, "--sysfs-root", str(tmp_path), "--power-rate-hz", "50", "--json")
    assert p.returncode == 0, p.stderr
    e = json.loads(p.stdout)["energy"]
    assert e["source"] == "measured" and e["active_power_w"] == pytest.approx(10.0)
    assert set(e) >= {"source", "sensor", "rails", "idle_power_w", "active_power_w", "energy_per_inference_mj",
                      "energy_per_inference_above_idle_mj", "inferences_per_joule", "tops_per_watt", "note"}
    p = edgeopt_cli(*common, "--power-sensor", "none")
    assert p.returncode == 0, p.stderr
    row = next(line for line in p.stdout.splitlines() if "energy" in line)
    assert "ESTIMATE, not measured" in row and "measured:" not in row
    p = edgeopt_cli(*common, "--no-energy", "--json")
    assert json.loads(p.stdout)["energy"] is None
    p = edgeopt_cli(*common, "--power-sensor", "ina226")
    assert p.returncode == 2 and "ina226" in p.stderr
