"""Raw samples survive the round trip exactly, and a damaged blob is refused."""

import zlib

import numpy as np
import pytest

from edgeopt.history.codec import SampleCodecError, decode_samples, encode_samples


def test_round_trip_is_exact_for_nanosecond_samples():
    ns = np.random.default_rng(0).integers(50_000, 50_000_000, 5000)
    ms = ns / 1e6
    blob = encode_samples(ms)
    assert np.array_equal(decode_samples(blob, 5000), ms)
    assert len(blob) < ms.size * 8 * 0.75  # compressed below the raw int64 size


def test_damaged_or_mismatched_blobs_are_refused():
    blob = encode_samples([1.0, 2.0, 3.0])
    with pytest.raises(SampleCodecError, match="3 samples, 4 were recorded"):
        decode_samples(blob, 4)
    with pytest.raises(SampleCodecError, match="not zlib"):
        decode_samples(b"garbage")
    with pytest.raises(SampleCodecError, match="whole number"):
        decode_samples(zlib.compress(b"12345"))


def test_a_zlib_bomb_is_refused_without_inflating_it():
    bomb = zlib.compress(b"\0" * (64 << 20), 9)  # 64 MiB of zeros in ~64 KiB: 8 Mi samples claimed as 10
    assert len(bomb) < 100_000
    with pytest.raises(SampleCodecError, match="more than 10 samples, 10 were recorded"):
        decode_samples(bomb, 10)
    with pytest.raises(SampleCodecError, match="truncated"):
        decode_samples(encode_samples([1.0] * 1000)[:-8], 1000)
