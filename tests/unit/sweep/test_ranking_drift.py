"""Rule 1 ("faster beyond noise") with the machine's drift between rounds divided out (issue 32).

On PP-OCRv4 det at 0.99 the INT8 search's mix was 1.3-1.6x faster than fp32@openvino in every paired round, yet the
ranking called the two a tie (fp32 recommended, "higher retention"): rule 1 also asked the two levels' raw intervals
to be apart, and with five rounds each raw interval is the range of the level's round medians, which spans the
2-vCPU VM's drift between rounds. The round medians below are a real re-run of the ranking's rounds (the sweep's
settings: 10 inferences, at least 0.3 s, one served agent) on a sweep's own artifacts, on a loaded 2-vCPU VM: the
machine ran 2.3x slower in the last round than in the first, every level alike. Synthetic round samples here (no
timing); the interval arithmetic is the sweep's own.
"""

from __future__ import annotations

import pytest

from edgeopt.sweep.rank.decide import Candidate, decide
from edgeopt.sweep.rank.round_stats import machine_factors

# round medians, ms, in the order the rounds ran (PP-OCRv4 det 480x640, openvino, 2 threads)
FP32 = [255.21, 259.48, 340.13, 334.04, 600.14]
INT8 = [163.78, 114.14, 179.2, 248.87, 336.34]  # plain INT8: 0.44-0.75x of fp32 in every round
MIX = [227.86, 212.88, 320.39, 276.1, 404.16]  # the search's mix: 0.67-0.94x of fp32 in every round

CANDIDATES = [Candidate("fp32@openvino", 4_745_517, 0, retention=1.0),
              Candidate("int8-search@openvino", 4_558_686, 3, retention=0.9902)]


def rounds(medians: list[float]) -> list[list[float]]:
    return [[m * 0.98, m * 0.99, m, m, m * 1.01, m * 1.02] for m in medians]


def test_a_mix_faster_in_every_round_is_not_a_tie_through_the_machines_drift() -> None:
    d = decide({"fp32@openvino": rounds(FP32), "int8-search@openvino": rounds(MIX)}, CANDIDATES)
    raw = d.stats
    assert raw["fp32@openvino"].low_ms <= raw["int8-search@openvino"].high_ms  # the raw intervals overlap
    assert d.beaten_by == {"fp32@openvino": "int8-search@openvino"} and d.rule == "faster beyond noise", d
    assert d.winner == "int8-search@openvino"
    cmp = d.compared
    assert cmp["int8-search@openvino"].high_ms < cmp["fp32@openvino"].low_ms  # apart once the drift is out
    assert max(d.machine_factors) / min(d.machine_factors) > 1.8


def test_the_drift_is_common_to_every_level_of_a_round() -> None:
    factors = machine_factors({"a": rounds(FP32), "b": rounds(INT8), "c": rounds(MIX)}, ["a", "b", "c"])
    assert factors is not None and factors.tolist() == pytest.approx([0.825, 0.771, 1.018, 1.0, 1.797], abs=0.001)


def test_noise_of_one_level_of_its_own_stays_a_tie() -> None:
    """The mix slower than fp32 in two rounds of five (its own hiccups, not the machine's): no verdict."""
    own = [m * r for m, r in zip(FP32, [0.7, 1.1, 0.72, 1.08, 0.7], strict=True)]
    d = decide({"fp32@openvino": rounds(FP32), "int8-search@openvino": rounds(own)}, CANDIDATES)
    assert not d.beaten_by and d.winner == "fp32@openvino" and d.rule == "tie: higher retention", d


def test_without_paired_rounds_the_raw_intervals_decide() -> None:
    """Two rounds (or unequal round counts) are not paired: no machine factors, the raw intervals as before."""
    two = {"fp32@openvino": rounds(FP32[:2]), "int8-search@openvino": rounds(MIX[:2])}
    assert machine_factors(two, list(two)) is None
    unequal = {"fp32@openvino": rounds(FP32), "int8-search@openvino": rounds(MIX[:4])}
    d = decide(unequal, CANDIDATES)
    assert d.machine_factors == () and d.compared == d.stats
