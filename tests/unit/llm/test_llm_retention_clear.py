"""The sweep's default decision measure (issue 33): top-1 agreement where the reference's next token is clear, so a
level that only flips near-tied tokens is not judged on them, while a level that changes clear tokens is."""

from __future__ import annotations

import math

import numpy as np

from edgeopt.llm.retention import CLEAR_MARGIN, SWEEP_METRIC, check_metric, compare


def _scores(top_ids: list[list[int]], top_p: list[list[float]]) -> dict[str, np.ndarray]:
    ids = np.asarray([top_ids], dtype=np.int32)  # one window
    logp = np.log(np.asarray([top_p], dtype=np.float64))
    n = ids.shape[1]
    return {"tokens": np.arange(n + 1)[None], "top_ids": ids, "top_logp": logp, "target_logp": logp[..., 0],
            "kl_ids": ids, "kl_logp": logp, "greedy": np.zeros((1, 4), dtype=np.int32)}


# The reference: two clear positions (0.8 vs 0.1) and two near-ties (0.41 vs 0.39).
REF = _scores([[1, 2], [3, 4], [5, 6], [7, 8]], [[0.8, 0.1], [0.41, 0.39], [0.8, 0.1], [0.41, 0.39]])


def test_flips_at_near_ties_do_not_count_and_flips_of_clear_tokens_do():
    ties_flipped = _scores([[1, 2], [4, 3], [5, 6], [8, 7]], [[0.8, 0.1], [0.40, 0.39], [0.8, 0.1], [0.40, 0.39]])
    r = compare(REF, ties_flipped, metric="top1_clear")
    assert r.top1_agreement == 0.5 and r.top1_clear_agreement == 1.0 and r.clear_positions == 2
    assert r.retention == 1.0 and r.metric == "top1_clear"
    clear_flipped = _scores([[2, 1], [3, 4], [5, 6], [7, 8]], [[0.5, 0.4], [0.41, 0.39], [0.8, 0.1], [0.41, 0.39]])
    r = compare(REF, clear_flipped, metric="top1_clear")
    assert r.top1_agreement == 0.75 and r.top1_clear_agreement == 0.5 and r.retention == 0.5


def test_with_no_clear_position_it_is_plain_top1_agreement_and_the_margin_is_1_5x():
    flat = _scores([[1, 2], [3, 4]], [[0.41, 0.39], [0.41, 0.39]])
    other = _scores([[2, 1], [3, 4]], [[0.41, 0.39], [0.41, 0.39]])
    r = compare(flat, other, metric="top1_clear")
    assert r.clear_positions == 0 and r.top1_clear_agreement == r.top1_agreement == 0.5
    assert math.isclose(CLEAR_MARGIN, math.log(1.5))
    above, below = _scores([[1, 2]], [[0.601, 0.4]]), _scores([[1, 2]], [[0.599, 0.4]])  # 1.5x either side
    assert compare(above, above).clear_positions == 1 and compare(below, below).clear_positions == 0


def test_a_sweep_decides_on_it_unless_told_otherwise():
    assert SWEEP_METRIC == "top1_clear" == check_metric(None, SWEEP_METRIC)
    assert check_metric(None) == "top1" and check_metric("kl", SWEEP_METRIC) == "kl"
