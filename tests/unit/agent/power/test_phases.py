"""Splitting a window of power readings between time intervals (the generate command's prefill/decode phases)."""

from __future__ import annotations

import pytest

from edgeopt_agent.power.base import KIND_ENERGY, KIND_POWER, PowerReader
from edgeopt_agent.power.phases import interval_energy

S = 1_000_000_000


def _reader(kind: str) -> PowerReader:
    r = PowerReader(["TOTAL", "PART"], [0], "test", [])
    r.kind = kind
    return r


def test_power_ramp_is_integrated_over_each_interval():
    # 0 W at t=0 s rising linearly to 10 W at t=2 s (PART is not summed)
    samples = [(0, [0.0, 99.0]), (1 * S, [5.0, 99.0]), (2 * S, [10.0, 99.0])]
    got = interval_energy(samples, _reader(KIND_POWER), {"early": [(0, S)], "late": [(S, 2 * S)],
                                                         "both": [(0, S // 2), (3 * S // 2, 2 * S)]})
    assert got["early"] == {"energy_j": pytest.approx(2.5), "seconds": 1.0}  # trapezoid 0..5 W over 1 s
    assert got["late"]["energy_j"] == pytest.approx(7.5)
    # inside a reading interval the energy is spread linearly: half of each second's energy
    assert got["both"]["energy_j"] == pytest.approx(2.5 / 2 + 7.5 / 2) and got["both"]["seconds"] == 1.0


def test_energy_counter_differences_and_intervals_outside_the_window():
    samples = [(0, [100.0, 0.0]), (S, [103.0, 0.0]), (2 * S, [109.0, 0.0])]  # cumulative joules
    got = interval_energy(samples, _reader(KIND_ENERGY), {"a": [(S // 2, 3 * S // 2)], "out": [(3 * S, 4 * S)]})
    assert got["a"]["energy_j"] == pytest.approx(1.5 + 3.0)
    assert got["out"]["energy_j"] == 0.0  # after the last reading: nothing is extrapolated


def test_fewer_than_two_readings_give_nothing():
    assert interval_energy([(0, [1.0, 0.0])], _reader(KIND_POWER), {"a": [(0, 1)]}) == {}
