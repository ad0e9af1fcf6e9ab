"""The sampler: window summaries, thread cadence, prompt stop, failed reads reported instead of raised."""

import statistics
import time

import pytest

from edgeopt_agent.power import (
    KIND_ENERGY,
    PowerReader,
    PowerSession,
    Sampler,
    clip,
    open_reader,
    parse_settings,
    summarize,
)

from .trees import fake_vcgencmd, jetson_hwmon, overwrite


def _shape(kind, channels=("a", "b"), summed=(0, 1)):
    reader = PowerReader(list(channels), list(summed), "test", [])
    reader.kind = kind
    return reader


def test_power_window_is_the_time_weighted_mean():
    reader = _shape("power")
    ramp = [(0, [0.0, 1.0]), (500_000_000, [5.0, 1.0]), (1_000_000_000, [10.0, 1.0])]
    s = summarize(ramp, reader)
    assert s["avg_w"] == pytest.approx(6.0) and s["energy_j"] == pytest.approx(6.0)
    assert s["channels_w"] == {"a": pytest.approx(5.0), "b": pytest.approx(1.0)}
    assert (s["min_w"], s["max_w"], s["samples"], s["duration_s"]) == (1.0, 11.0, 3, 1.0)
    # Uneven spacing: 0 W for 0.9 s then 10 W for 0.1 s is not the plain mean of the readings (3.3 W).
    uneven = [(0, [0.0, 0.0]), (900_000_000, [0.0, 0.0]), (900_000_001, [10.0, 0.0]), (1_000_000_000, [10.0, 0.0])]
    assert summarize(uneven, reader)["avg_w"] == pytest.approx(1.0, rel=1e-6)


def test_energy_window_uses_counter_deltas_and_summed_channels_only():
    reader = _shape(KIND_ENERGY, summed=(0,))
    s = summarize([(0, [100.0, 7.0]), (123, [101.0, 9.0]), (2_000_000_000, [106.0, 9.0])], reader)
    assert s["energy_j"] == pytest.approx(6.0) and s["avg_w"] == pytest.approx(3.0)
    assert s["channels_w"]["b"] == pytest.approx(1.0)


def test_single_or_no_reading():
    assert summarize([(5, [2.0, 3.0])], _shape("power"))["avg_w"] == 5.0
    assert summarize([], _shape("power"))["avg_w"] is None
    assert summarize([(5, [2.0, 3.0])], _shape(KIND_ENERGY))["avg_w"] is None


def test_clip_closes_the_window_with_an_interpolated_reading():
    readings = [(0, [0.0]), (100, [10.0]), (200, [20.0]), (300, [30.0])]
    assert clip(readings, 150) == [(0, [0.0]), (100, [10.0]), (150, [15.0])]
    assert clip(readings, 300) == readings and clip(readings, None) == readings


@pytest.fixture()
def jetson(tmp_path):
    jetson_hwmon(tmp_path)
    reader = open_reader("ina3221", parse_settings({"sysfs_root": str(tmp_path)}))
    yield reader
    reader.close()


def test_thread_samples_at_the_set_rate_and_never_back_to_back(jetson):
    sampler = Sampler(jetson, 20.0)
    t0 = time.perf_counter()
    sampler.start()
    time.sleep(0.5)
    samples = sampler.stop()
    ticks = (time.perf_counter() - t0) * 20.0
    assert ticks - 3 <= len(samples) - 2 <= ticks + 1  # first + one per tick + final: no extra readings
    gaps = [(b[0] - a[0]) / 1e6 for a, b in zip(samples[:-2], samples[1:-1], strict=True)]
    assert statistics.median(gaps) == pytest.approx(50.0, abs=10.0)
    assert summarize(samples, jetson)["avg_w"] == pytest.approx(10.0)


def test_stop_is_prompt_even_at_a_low_rate(jetson):
    sampler = Sampler(jetson, 0.5)
    sampler.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    samples = sampler.stop()
    assert time.perf_counter() - t0 < 0.2 and len(samples) == 2


def test_active_window_ends_when_stop_is_called_not_at_the_next_tick(tmp_path):
    jetson_hwmon(tmp_path)
    session = PowerSession.open({"sysfs_root": str(tmp_path), "rate_hz": 2.0, "idle_s": 0})
    t0 = time.perf_counter()
    session.start()
    time.sleep(0.1)
    t1 = time.perf_counter()
    session.stop()
    active = session.report()["active"]
    session.close()
    # The thread sleeps until its next tick (0.5 s) but the window ends when stop() was called.
    assert 0.099 <= active["duration_s"] <= (t1 - t0) + 0.02
    assert active["avg_w"] == pytest.approx(10.0) and active["samples"] == 1  # the end point is interpolated


def test_idle_window_is_sampled_in_the_calling_thread(jetson):
    t0 = time.perf_counter()
    samples = Sampler(jetson, 20.0).window(0.3)
    wall = time.perf_counter() - t0
    assert 0.3 <= wall < 0.4
    assert 5 <= len(samples) <= 8  # first, one per 50 ms tick inside the window, last at its end
    assert (samples[-1][0] - samples[0][0]) / 1e9 == pytest.approx(wall, abs=0.01)


def test_failed_reads_are_counted_and_reported_not_raised(tmp_path):
    d = jetson_hwmon(tmp_path)
    session = PowerSession.open({"sysfs_root": str(tmp_path), "idle_s": 0})
    overwrite(d / "curr1_input", "garbage\n")
    session.start()
    time.sleep(0.12)
    session.stop()
    report = session.report()
    session.close()
    assert report["read_errors"] >= 3 and "ValueError" in report["last_error"]
    assert report["active"]["samples"] == 0 and "no usable power readings" in report["error"]


def test_slow_command_sensor_rate_is_capped(tmp_path):
    session = PowerSession.open({"vcgencmd": str(fake_vcgencmd(tmp_path)), "sensor": "rpi5_pmic",
                                 "rate_hz": 100.0, "idle_s": 0})
    try:
        assert session.sampler.rate_hz == 5.0
        session.start()
        time.sleep(0.5)
        session.stop()
        report = session.report()
    finally:
        session.close()
    assert report["rate_hz"] == 100.0 and report["rate_hz_used"] == 5.0
    assert report["active"]["samples"] <= 5 and report["read_cost_us"] > 0


def test_disabled_and_none_sessions_measure_nothing(tmp_path):
    jetson_hwmon(tmp_path)
    off = PowerSession.open({"enabled": False, "sysfs_root": str(tmp_path)})
    assert not off.measuring and off.report() == {}
    none = PowerSession.open({"sensor": "none", "sysfs_root": str(tmp_path)})
    assert not none.measuring and none.report() == {"sensor": None, "reason": "power sensor 'none' requested"}
