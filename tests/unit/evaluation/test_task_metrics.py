"""Metrics for detectors and dense outputs, on real ONNX heads run with onnxruntime: the class axis, the score
threshold, mask IoU and detection F1 (hand-computed values), and the parameters checked in one place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgeopt.errors import InputError
from edgeopt.evaluation import MetricSpec, parse_output, resolve_metric, retention
from edgeopt.evaluation.detection import decode
from tests.detector_model import ANCHORS, CLASSES, head_inputs, head_model, run


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """Reference, pruned (class scores mixed) and shifted (boxes moved 70 px) heads on the same 6 samples."""
    tmp = tmp_path_factory.mktemp("heads")
    x = head_inputs()
    return {
        "ref": run(head_model(tmp / "ref.onnx"), x),
        "pruned": run(head_model(tmp / "pruned.onnx", class_mix=0.45), x),
        "shifted": run(head_model(tmp / "shifted.onnx", cx_shift=70.0), x),
    }


def _score(spec: MetricSpec, ref: np.ndarray, out: np.ndarray) -> float:
    return retention(resolve_metric(spec), ref, out, None)[1]


def test_agreement_on_the_class_axis_is_the_class_agreement(outputs: dict[str, np.ndarray]) -> None:
    ref, out = outputs["ref"], outputs["pruned"]
    assert ref.shape == (6, 4 + CLASSES, ANCHORS)
    classes = parse_output("0,slice=[:,4:,:]")
    a, b = classes.pick([ref], ["y"]), classes.pick([out], ["y"])
    truth = float(np.mean(a.argmax(axis=1) == b.argmax(axis=1)))  # per (sample, anchor): same class?
    assert 0.5 < truth < 0.95
    assert _score(MetricSpec(name="agreement", axis=1), a, b) == pytest.approx(truth)
    # The old default (argmax over the last axis) picks the best *anchor* per class row: another number.
    old = _score(MetricSpec(name="agreement"), a, b)
    assert old != pytest.approx(truth)
    # The documented '[...,4:]' slice cut anchors, not classes: the same (wrong) thing as no slice at all.
    anchors_cut = parse_output("0,slice=[...,4:]")
    assert anchors_cut.pick([ref], ["y"]).shape == (6, 4 + CLASSES, ANCHORS - 4)
    # With a score threshold only confident anchors count: those hold the real objects.
    confident = a.max(axis=1) > 0.25
    want = float(np.mean((a.argmax(axis=1) == b.argmax(axis=1))[confident]))
    assert _score(MetricSpec(name="agreement", axis=1, score_threshold=0.25), a, b) == pytest.approx(want)
    assert want != pytest.approx(truth)


def test_cosine_of_the_whole_head_hides_what_the_class_slice_shows(outputs: dict[str, np.ndarray]) -> None:
    ref, out = outputs["ref"], outputs["pruned"]
    whole = _score(MetricSpec(name="cosine"), ref, out)
    classes = parse_output("0,slice=[:,4:,:]")
    sliced = _score(MetricSpec(name="cosine"), classes.pick([ref], ["y"]), classes.pick([out], ["y"]))
    assert whole > 0.999  # box coordinates (pixels) dominate the norm
    assert sliced < 0.95


def test_detection_f1_identical_pruned_and_shifted(outputs: dict[str, np.ndarray]) -> None:
    det = MetricSpec(name="detection")
    ref = outputs["ref"]
    assert _score(det, ref, ref) == 1.0
    # Same boxes, a class flipped on some objects: F1 = the share of objects that keep their class.
    a, b = ref[:, 4:], outputs["pruned"][:, 4:]
    kept = float(np.mean((a.argmax(axis=1) == b.argmax(axis=1))[a.max(axis=1) > 0.25]))
    assert _score(det, ref, outputs["pruned"]) == pytest.approx(kept) and kept < 1.0
    assert _score(det, ref, outputs["shifted"]) == 0.0  # 70 px on boxes at most 120 px wide: IoU < 0.5


def _head(boxes: list[tuple[float, float, float, float, int, float]]) -> np.ndarray:
    """One sample's [4+C, N] head from (cx, cy, w, h, class, score) rows."""
    h = np.zeros((4 + CLASSES, len(boxes)), dtype=np.float32)
    for i, (cx, cy, w, hh, cls, score) in enumerate(boxes):
        h[:4, i] = (cx, cy, w, hh)
        h[4 + cls, i] = score
    return h


def test_detection_by_hand_moves_flips_and_nms() -> None:
    det = resolve_metric(MetricSpec(name="detection"))
    ref = _head([(100, 100, 40, 40, 0, 0.9), (300, 300, 40, 40, 1, 0.8)])[None]
    # One box moved by 20 px on a 40 px box: IoU = 20*40 / (2*1600 - 800) = 1/3 < 0.5 -> 1 TP of 2 and 2.
    moved = _head([(120, 100, 40, 40, 0, 0.9), (300, 300, 40, 40, 1, 0.8)])[None]
    assert det.score(ref, moved, None) == pytest.approx(2 * 1 / (2 + 2))
    # Moved by 5 px: IoU = 35/45 = 0.78 >= 0.5, still a match.
    close = _head([(105, 100, 40, 40, 0, 0.9), (300, 300, 40, 40, 1, 0.8)])[None]
    assert det.score(ref, close, None) == 1.0
    # A class flip on the second box: 1 TP.
    flipped = _head([(100, 100, 40, 40, 0, 0.9), (300, 300, 40, 40, 2, 0.8)])[None]
    assert det.score(ref, flipped, None) == pytest.approx(0.5)
    # A near-duplicate of the first box (IoU 0.9, same class, lower score) is removed by NMS: still F1 1.0.
    dup = _head([(100, 100, 40, 40, 0, 0.9), (102, 100, 40, 40, 0, 0.7), (300, 300, 40, 40, 1, 0.8)])
    assert len(decode(dup, 0.25)) == 2
    assert det.score(ref, dup[None], None) == 1.0
    # The same overlap with another class is a second object: kept, and a false positive here.
    other = _head([(100, 100, 40, 40, 0, 0.9), (102, 100, 40, 40, 2, 0.7), (300, 300, 40, 40, 1, 0.8)])
    assert len(decode(other, 0.25)) == 3
    assert det.score(ref, other[None], None) == pytest.approx(2 * 2 / (2 + 3))
    # Below the score threshold nothing is decoded; pooled over samples: (2 + 0 TP) / ((2 + 2) + (2 + 0)) * 2.
    faint = _head([(100, 100, 40, 40, 0, 0.2), (300, 300, 40, 40, 1, 0.1)])[None]
    both = np.concatenate([ref, ref]), np.concatenate([ref, faint])
    assert det.score(*both, None) == pytest.approx(2 * 2 / (4 + 2))


def test_mask_iou_exact_values() -> None:
    ref = np.zeros((2, 1, 4, 4), dtype=np.float32)
    ref[0, 0, 0:2, 0:2] = 0.9  # 4 pixels
    ref[1, 0, 1:3, 1:3] = 0.8  # 4 pixels
    shifted = np.zeros_like(ref)
    shifted[0, 0, 0:2, 1:3] = 0.9  # one column right: 2 shared of 6
    shifted[1] = ref[1]  # identical: 4 of 4
    m = resolve_metric(MetricSpec(name="mask_iou"))
    assert m.score(ref, ref, None) == 1.0
    assert m.score(ref, shifted, None) == pytest.approx((2 + 4) / (6 + 4))  # pooled, not the mean 2/3
    # The threshold binarizes both: at 0.85 only sample 0 is foreground in the reference.
    high = resolve_metric(MetricSpec(name="mask_iou", mask_threshold=0.85))
    assert high.score(ref, shifted, None) == pytest.approx(2 / 6)
    assert retention(m, ref, shifted, None) == (pytest.approx(0.6), pytest.approx(0.6))


def test_parameters_are_checked_where_the_metric_is_resolved() -> None:
    assert resolve_metric(MetricSpec(name="detection")).spec.given() == {
        "axis": 1, "score_threshold": 0.25, "iou_threshold": 0.5}
    assert resolve_metric(None, has_labels=True).name == "top1"
    assert resolve_metric(MetricSpec(axis=2)).label == "agreement(axis=2)"
    with pytest.raises(InputError, match="--mask-threshold 0.3 does not apply to metric agreement"):
        resolve_metric(MetricSpec(name="agreement", mask_threshold=0.3))
    with pytest.raises(InputError, match="does not apply to metric numpy:vdot"):
        resolve_metric(MetricSpec(name="numpy:vdot", axis=1))
    scores = np.zeros((2, 3, 5), dtype=np.float32)
    with pytest.raises(InputError, match="axis 0 is the sample"):
        resolve_metric(MetricSpec(name="agreement", axis=0)).score(scores, scores, None)
    with pytest.raises(InputError, match="no position of the reference scores above --score-threshold 0.5"):
        resolve_metric(MetricSpec(name="agreement", axis=1, score_threshold=0.5)).score(scores, scores, None)
    with pytest.raises(InputError, match=r"reads a \[samples, 4\+C, N\] head"):
        resolve_metric(MetricSpec(name="detection")).score(scores[:, 0], scores[:, 0], None)
    with pytest.raises(InputError, match="no box scoring above"):
        resolve_metric(MetricSpec(name="detection", axis=2)).score(np.zeros((1, 9, 6)), np.zeros((1, 9, 6)), None)


def test_top1_takes_the_class_axis(tmp_path: Path) -> None:
    scores = np.zeros((3, 4, 1), dtype=np.float32)  # [samples, classes, 1]: class axis 1
    scores[np.arange(3), [2, 0, 3], 0] = 1.0
    labels = np.array([2, 0, 1])
    assert resolve_metric(MetricSpec(name="top1", axis=1)).score(scores, scores, labels) == pytest.approx(2 / 3)
    assert resolve_metric(MetricSpec(name="top5", axis=1)).score(scores, scores, labels) == 1.0
    with pytest.raises(InputError, match="does not fit one label per sample"):
        resolve_metric("top1").score(np.zeros((3, 2, 4)), np.zeros((3, 2, 4)), labels)
