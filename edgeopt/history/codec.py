"""Raw readings as a compact blob: little-endian int64 nanoseconds, zlib-compressed (latency samples), or
little-endian float64, zlib-compressed (any other series).

Nanoseconds are what the agent measured (``perf_counter_ns``), so the round trip ms -> ns -> ms is exact for
samples that came from the agent; zlib shrinks the mostly-zero high bytes to about a third. A series that does not
survive that round trip exactly (an LLM's token latencies, a rate) is kept as float64 (:func:`encode_series`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

SAMPLES_FORMAT = "zlib-int64-ns-le"
VALUES_FORMAT = "zlib-float64-le"
FORMATS = (SAMPLES_FORMAT, VALUES_FORMAT)
MAX_SAMPLES = 50_000_000  # what a blob decodes to at most when the row does not say how many it holds (400 MB)


class SampleCodecError(ValueError):
    """A stored blob does not decode to the number of samples recorded with it."""


def encode_samples(samples_ms: Sequence[float] | np.ndarray) -> bytes:
    """``samples_ms`` (milliseconds) as a zlib blob of little-endian int64 nanoseconds."""
    ns = np.rint(np.asarray(samples_ms, dtype=np.float64) * 1e6).astype("<i8")
    return zlib.compress(ns.tobytes(), 6)


def encode_series(values: Sequence[float] | np.ndarray) -> tuple[str, bytes]:
    """``(format, blob)`` of a series: int64 nanoseconds when that round trip is exact, else float64."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if np.isfinite(x).all() and (np.abs(x) < 9e9).all():  # ns fit int64 and NaN has no integer
        blob = encode_samples(x)
        if np.array_equal(decode_samples(blob, x.size), x):
            return SAMPLES_FORMAT, blob
    return VALUES_FORMAT, zlib.compress(x.astype("<f8").tobytes(), 6)


def decode_series(blob: bytes, fmt: str, count: int | None = None) -> np.ndarray:
    """The values of a blob written by :func:`encode_series` (or :func:`encode_samples`), as float64.

    Raises:
        SampleCodecError: an unknown format, or a blob that does not decode to ``count`` values.
    """
    if fmt == SAMPLES_FORMAT:
        return decode_samples(blob, count)
    if fmt != VALUES_FORMAT:
        raise SampleCodecError(f"unknown readings format {fmt!r} (known: {', '.join(FORMATS)}); upgrade edgeopt")
    return np.frombuffer(_inflate(blob, count), dtype="<f8").astype(np.float64)


def decode_samples(blob: bytes, count: int | None = None) -> np.ndarray:
    """The samples of ``blob`` in milliseconds (float64).

    Decompressed to at most ``count`` samples (or :data:`MAX_SAMPLES`) and one byte more: a row is untrusted
    (docs/reliability.md, "Untrusted files"), and a zlib bomb of a few KiB would otherwise expand to gigabytes.

    Raises:
        SampleCodecError: the blob is not zlib data, or does not hold ``count`` samples.
    """
    ns = np.frombuffer(_inflate(blob, count), dtype="<i8")
    return ns.astype(np.float64) / 1e6


def _inflate(blob: bytes, count: int | None) -> bytes:
    """The bytes of ``count`` (or at most MAX_SAMPLES) 8-byte values, inflated no further than that."""
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
    if count is not None and len(raw) // 8 != count:
        raise SampleCodecError(f"samples blob holds {len(raw) // 8} samples, {count} were recorded")
    return raw
