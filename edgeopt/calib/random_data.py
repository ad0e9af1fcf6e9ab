"""Random inputs, the last resort when no calibration data is given (with a loud warning: accuracy suffers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .base import InputSpec

RANDOM_WARNING = (
    "NO CALIBRATION DATA: calibrating on RANDOM inputs, so INT8 ranges will not match real data and accuracy will "
    "be poor. Pass --calib DATA (an .npz keyed by input name, an .npy, or a folder of images) with ~100 real samples "
    "(docs/calibration.md)"
)


def random_samples(
    specs: Sequence[InputSpec], input_shapes: Mapping[str, Sequence[int]], count: int, seed: int
) -> list[dict[str, np.ndarray]]:
    """``count`` feeds of uniform [0, 1) floats (small non-negative integers for integer inputs)."""
    rng = np.random.default_rng(seed)
    shapes = {s.name: s.resolved(input_shapes) for s in specs}
    out = []
    for _ in range(count):
        feed = {}
        for s in specs:
            if s.dtype.kind == "f":
                feed[s.name] = rng.random(shapes[s.name], dtype=np.float32).astype(s.dtype)
            elif s.dtype.kind == "b":
                feed[s.name] = np.zeros(shapes[s.name], dtype=s.dtype)
            else:
                feed[s.name] = rng.integers(0, 2, shapes[s.name]).astype(s.dtype)
        out.append(feed)
    return out
