"""Detection F1: decode a YOLO-style head on both outputs, then match candidate boxes to the reference's.

The head is ``[samples, 4 + C, N]`` (YOLOv8/v11 export layout: per anchor ``cx, cy, w, h`` then ``C`` class
scores, no objectness); ``spec.axis`` names the axis of the ``4 + C`` rows when it is not 1 (``[samples, N, 4 + C]``
exports use ``--axis 2``). Decoding keeps anchors whose best class score is above ``spec.score_threshold`` and
runs class-wise greedy NMS at IoU :data:`NMS_IOU`. A candidate box is a true positive when it matches a not yet
matched reference box of the same class at IoU >= ``spec.iou_threshold`` (candidates in descending score order).
F1 is pooled over samples: ``2 TP / (candidate boxes + reference boxes)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .spec import MetricSpec

NMS_IOU = 0.45


@dataclass(frozen=True)
class Boxes:
    """Decoded detections of one sample: ``xyxy`` ``[K, 4]``, ``scores`` ``[K]``, ``classes`` ``[K]``."""

    xyxy: np.ndarray
    scores: np.ndarray
    classes: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


def iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of one ``xyxy`` box with each row of ``others`` ``[K, 4]``."""
    x1 = np.maximum(box[0], others[:, 0])
    y1 = np.maximum(box[1], others[:, 1])
    x2 = np.minimum(box[2], others[:, 2])
    y2 = np.minimum(box[3], others[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(xyxy: np.ndarray, scores: np.ndarray, classes: np.ndarray, iou_threshold: float = NMS_IOU) -> np.ndarray:
    """Indices kept by class-wise greedy NMS, best score first (boxes of different classes never suppress)."""
    order = np.argsort(-scores, kind="stable")
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        overlap = iou(xyxy[i], xyxy[rest])
        order = rest[(overlap <= iou_threshold) | (classes[rest] != classes[i])]
    return np.asarray(keep, dtype=np.int64)


def decode(head: np.ndarray, score_threshold: float) -> Boxes:
    """Boxes of one sample's ``[4 + C, N]`` head above ``score_threshold``, after NMS."""
    scores_all = head[4:].astype(np.float64)
    best = scores_all.max(axis=0)
    keep = best > score_threshold
    cx, cy, w, h = (head[k, keep].astype(np.float64) for k in range(4))
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    scores, classes = best[keep], scores_all[:, keep].argmax(axis=0)
    kept = nms(xyxy, scores, classes)
    return Boxes(xyxy[kept], scores[kept], classes[kept])


def true_positives(ref: Boxes, out: Boxes, iou_threshold: float) -> int:
    """Candidate boxes matched one-to-one to reference boxes of the same class at IoU >= ``iou_threshold``."""
    taken = np.zeros(len(ref), dtype=bool)
    tp = 0
    for i in np.argsort(-out.scores, kind="stable"):
        if not len(ref):
            break
        overlap = np.where((ref.classes == out.classes[i]) & ~taken, iou(out.xyxy[i], ref.xyxy), -1.0)
        j = int(np.argmax(overlap))
        if overlap[j] >= iou_threshold:
            taken[j] = True
            tp += 1
    return tp


def heads(arr: np.ndarray, axis: int) -> np.ndarray:
    """``arr`` as ``[samples, 4 + C, N]``.

    Raises:
        InputError: the selected output is not a 3-D head with at least one class row on ``axis``.
    """
    if arr.ndim != 3 or axis % 3 == 0:
        raise InputError(f"metric detection reads a [samples, 4+C, N] head; the selected output is {list(arr.shape)} "
                         f"with box axis {axis}: pick the head with --output and its 4+C axis with --axis")
    out = np.moveaxis(arr, axis, 1)
    if out.shape[1] < 5:
        raise InputError(f"metric detection: axis {axis} of {list(arr.shape)} has {out.shape[1]} rows, fewer than "
                         "4 box values + 1 class: pass --axis for the 4+C axis")
    return out


def detection_f1(ref: np.ndarray, out: np.ndarray, labels: np.ndarray | None, spec: MetricSpec) -> float:
    """F1 of the candidate's decoded boxes against the reference's, pooled over samples (module docstring).

    Raises:
        InputError: a wrong layout, or no reference box above the score threshold in any sample.
    """
    axis = int(spec.axis if spec.axis is not None else 1)
    threshold = float(spec.score_threshold if spec.score_threshold is not None else 0.25)
    match = float(spec.iou_threshold if spec.iou_threshold is not None else 0.5)
    ref_h, out_h = heads(np.asarray(ref), axis), heads(np.asarray(out), axis)
    tp = n_ref = n_out = 0
    for r, o in zip(ref_h, out_h, strict=True):
        rb, ob = decode(r, threshold), decode(o, threshold)
        tp += true_positives(rb, ob, match)
        n_ref += len(rb)
        n_out += len(ob)
    if n_ref == 0:
        raise InputError(f"metric detection: the reference has no box scoring above --score-threshold "
                         f"{threshold:g} in any of {len(ref_h)} sample(s): lower the threshold, or check --output "
                         "selects the detection head (scores, not logits)")
    return 2.0 * tp / (n_ref + n_out)
