"""Raw latency samples as a compact blob: little-endian int64 nanoseconds, zlib-compressed.

Nanoseconds are what the agent measured (``perf_counter_ns``), so the round trip ms -> ns -> ms is exact for
samples that came from the agent; zlib shrinks the mostly-zero high bytes to about a third.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

SAMPLES_FORMAT = "zlib-int64-ns-le"
MAX_SAMPLES = 50_000_000  # what a blob decodes to at most when the row does not say how many it holds (400 MB)


class SampleCodecError(ValueError):
    """A stored blob does not decode to the number of samples recorded with it."""


def encode_samples(samples_ms: Sequence[float] | np.ndarray) -> bytes:
    """``samples_ms`` (milliseconds) as a zlib blob of little-endian int64 nanoseconds."""
    ns = np.rint(np.asarray(samples_ms, dtype=np.float64) * 1e6).astype("<i8")
    return zlib.compress(ns.tobytes(), 6)


def decode_samples(blob: bytes, count: int | None = None) -> np.ndarray:
    """The samples of ``blob`` in milliseconds (float64).

    Decompressed to at most ``count`` samples (or :data:`MAX_SAMPLES`) and one byte more: a row is untrusted
    (docs/reliability.md, "Untrusted files"), and a zlib bomb of a few KiB would otherwise expand to gigabytes.

    Raises:
        SampleCodecError: the blob is not zlib data, or does not hold ``count`` samples.
    """
    limit = 8 * (count if count is not None else MAX_SAMPLES) + 1
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(blob, limit)
    except zlib.error as exc:
        raise SampleCodecError(f"samples blob is not zlib data ({exc})") from None
    if len(raw) >= limit or inflater.unconsumed_tail:
        raise SampleCodecError(f"samples blob holds more than {(limit - 1) // 8} samples"
                               + (f", {count} were recorded" if count is not None else ""))
    if not inflater.eof:
        raise SampleCodecError("samples blob is not zlib data (incomplete or truncated stream)")
    if len(raw) % 8:
        raise SampleCodecError(f"samples blob holds {len(raw)} bytes, not a whole number of int64 values")
    ns = np.frombuffer(raw, dtype="<i8")
    if count is not None and ns.size != count:
        raise SampleCodecError(f"samples blob holds {ns.size} samples, {count} were recorded")
    return ns.astype(np.float64) / 1e6
