"""Eval data on which the reference decides alike for every sample is called out (issue 23, item 8)."""

from __future__ import annotations

import numpy as np
import pytest

from edgeopt.evaluation import MetricSpec, resolve_metric
from edgeopt.evaluation.degenerate import cannot_tell

RNG = np.random.default_rng(0)


def _one_class(n: int = 12, classes: int = 10, k: int = 3) -> np.ndarray:
    scores = RNG.random((n, classes)).astype(np.float32)
    scores[:, k] += 5.0
    return scores


@pytest.mark.parametrize("metric", [None, "agreement", "top1", "top5"])
def test_one_class_for_every_sample(metric):
    why = cannot_tell(resolve_metric(metric) if metric else None, _one_class())
    assert why is not None and "predicts class 3 for every one of the 12 samples" in why
    assert "untested by this data" in why and "\n" not in why


def test_a_constant_segmentation_map():
    maps = RNG.random((4, 5, 8, 8)).astype(np.float32)
    maps[:, 2] += 3.0  # class 2 wins at every pixel of every sample
    why = cannot_tell(resolve_metric(MetricSpec(name="agreement", axis=1)), maps)
    assert why is not None and "constant map" in why and "class 2" in why


def test_an_all_foreground_mask_and_a_constant_output():
    assert "foreground everywhere" in str(cannot_tell(resolve_metric("mask_iou"), np.ones((3, 1, 4, 4))))
    assert "constant 0" in str(cannot_tell(resolve_metric("cosine"), np.zeros((3, 6))))


@pytest.mark.parametrize("metric", [None, "agreement", "cosine", "mask_iou", "snr_db"])
def test_data_that_separates_levels_passes_silently(metric):
    scores = RNG.random((12, 10)).astype(np.float32)
    scores[np.arange(12), np.arange(12) % 10] += 5.0  # the reference decides ten different classes
    assert cannot_tell(resolve_metric(metric) if metric else None, scores) is None


def test_one_sample_or_a_single_score_says_nothing():
    assert cannot_tell(None, _one_class(n=1)) is None
    assert cannot_tell(None, RNG.random((6, 1))) is None
