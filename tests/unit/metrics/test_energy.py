"""Energy figures on the host: measured from the agent's power report, or a plainly marked TDP estimate."""

import pytest

from edgeopt.enums import PowerSensor
from edgeopt.errors import InputError
from edgeopt.metrics.energy import energy_from_run, energy_request
from edgeopt.targets.schema import Target

TARGET = Target(
    name="t", description="test target", arch="aarch64", accelerator="gpu",
    peak_fp16_tflops={"value": 1, "source": "test"}, memory_gb={"value": 4, "source": "test"},
    memory_bandwidth_gbps={"value": 25, "source": "test"}, tdp_w={"value": 15, "source": "datasheet 15 W mode"},
    runtimes=["onnxruntime"], precisions=["fp16"], power_sensor="ina3221",
)


def _power(active_w=10.0, idle_w=4.0, samples=40, **kw):
    p = {"sensor": "ina3221", "kind": "power", "rails": ["VDD_IN"], "notes": ["on-module rails only"],
         "rate_hz": 20.0, "rate_hz_used": 20.0, "read_errors": 0,
         "idle": {"avg_w": idle_w, "samples": 10, "duration_s": 0.5},
         "active": {"avg_w": active_w, "samples": samples, "duration_s": 2.0}}
    p.update(kw)
    return p


def _run(power, n=1000, timed_s=2.0, flops=2_000_000_000):
    return energy_from_run(power, target=TARGET, inferences=n, timed_s=timed_s, flops_per_inference=flops)


def test_measured_figures():
    e, warnings = _run(_power())
    assert e.source == "measured" and e.sensor == "ina3221" and e.rails == ["VDD_IN"] and warnings == []
    assert (e.active_power_w, e.idle_power_w, e.samples) == (10.0, 4.0, 40)
    assert e.energy_per_inference_mj == pytest.approx(20.0)  # 10 W x 2 s / 1000 inferences
    assert e.energy_per_inference_above_idle_mj == pytest.approx(12.0)  # (10 - 4) W x 2 s / 1000
    assert e.inferences_per_joule == pytest.approx(50.0)
    assert e.tops_per_watt == pytest.approx(2e9 * 500 / 10 / 1e12)  # 1 TOPS achieved at 10 W
    assert e.note.startswith("measured: ina3221 (VDD_IN)") and "on-module rails only" in e.note


def test_few_samples_failed_reads_and_active_below_idle_are_warned():
    e, warnings = _run(_power(active_w=3.0, samples=4, read_errors=2, last_error="ValueError: x"))
    assert e.energy_per_inference_above_idle_mj == 0.0
    text = " | ".join(warnings)
    assert "below idle" in text and "only 4 power readings" in text and "2 power readings failed" in text
    counter = _power(samples=2, kind="energy", idle=None)
    e, warnings = _run(counter)
    assert warnings == [] and e.idle_power_w is None and e.energy_per_inference_above_idle_mj is None
    assert "energy counter deltas" in e.note


def test_no_sensor_is_an_estimate_from_tdp_and_says_so():
    e, warnings = _run({"sensor": None, "reason": "no power sensor found (ina3221: not a Jetson?)"})
    assert e.source == "estimate" and e.sensor is None and e.rails == [] and e.samples is None
    assert e.active_power_w == 15.0 and e.idle_power_w is None and e.energy_per_inference_above_idle_mj is None
    assert e.energy_per_inference_mj == pytest.approx(30.0)
    assert e.note.startswith("ESTIMATE, not a measurement") and "not a Jetson" in e.note and "15 W" in e.note
    assert "datasheet 15 W mode" in e.note and warnings == []


def test_sensor_that_failed_every_read_falls_back_to_an_estimate():
    e, _ = _run(_power(error="no usable power readings in the timed phase (9 read errors)"))
    assert e.source == "estimate" and "ina3221: no usable power readings" in e.note


def test_disabled_is_none_and_null_runtime_has_no_tops():
    assert _run({}) == (None, [])
    assert _run(_power(), flops=None)[0].tops_per_watt is None


def test_target_without_tdp_gives_no_estimate_but_a_warning():
    bare = TARGET.model_copy(update={"tdp_w": None})
    e, warnings = energy_from_run({"sensor": None, "reason": "x"}, target=bare, inferences=1, timed_s=1.0,
                                  flops_per_inference=None)
    assert e is None and "states no tdp_w" in warnings[0]


def test_request_settings_prefer_the_targets_sensor_and_check_values():
    req = energy_request(TARGET, sysfs_root="/emu", rate_hz=50)
    assert req == {"enabled": True, "sensor": "auto", "prefer": "ina3221", "sysfs_root": "/emu", "rate_hz": 50.0,
                   "idle_s": 0.5, "vcgencmd": "vcgencmd"}
    assert energy_request(TARGET.model_copy(update={"power_sensor": PowerSensor.NONE}))["prefer"] == ""
    with pytest.raises(InputError, match="--power-sensor 'ina226'"):
        energy_request(TARGET, sensor="ina226")
    with pytest.raises(InputError, match="--power-rate-hz 0"):
        energy_request(TARGET, rate_hz=0)
    with pytest.raises(InputError, match="idle window -1"):
        energy_request(TARGET, idle_s=-1)
