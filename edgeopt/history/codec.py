"""Raw latency samples as a compact blob: little-endian int64 nanoseconds, zlib-compressed.

Nanoseconds are what the agent measured (``perf_counter_ns``), so the round trip ms -> ns -> ms is exact for
samples that came from the agent; zlib shrinks the mostly-zero high bytes to about a third.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

SAMPLES_FORMAT = "zlib-int64-ns-le"


class SampleCodecError(ValueError):
    """A stored blob does not decode to the number of samples recorded with it."""


def encode_samples(samples_ms: Sequence[float] | np.ndarray) -> bytes:
    """``samples_ms`` (milliseconds) as a zlib blob of little-endian int64 nanoseconds."""
    ns = np.rint(np.asarray(samples_ms, dtype=np.float64) * 1e6).astype("<i8")
    return zlib.compress(ns.tobytes(), 6)


def decode_samples(blob: bytes, count: int | None = None) -> np.ndarray:
    """The samples of ``blob`` in milliseconds (float64).

    Raises:
        SampleCodecError: the blob is not zlib data, or does not hold ``count`` samples.
    """
    try:
        raw = zlib.decompress(blob)
    except zlib.error as exc:
        raise SampleCodecError(f"samples blob is not zlib data ({exc})") from None
    if len(raw) % 8:
        raise SampleCodecError(f"samples blob holds {len(raw)} bytes, not a whole number of int64 values")
    ns = np.frombuffer(raw, dtype="<i8")
    if count is not None and ns.size != count:
        raise SampleCodecError(f"samples blob holds {ns.size} samples, {count} were recorded")
    return ns.astype(np.float64) / 1e6
