"""Memory in use: RSS right after glibc's malloc_trim(0), beside the raw reading; null with the reason off glibc."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edgeopt.bench.llm.stats import kv_probe
from edgeopt_agent import memory


def _glibc() -> bool:
    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "malloc_trim")
    except OSError:
        return False


# Run in a fresh interpreter: in the test process, heap left by earlier tests (and pytest's own) decides where the
# blocks land, so the freed pages' share of raw RSS varied (seen failing after the other agent tests).
_FREED_HEAP = """
import json
from edgeopt_agent import memory
assert memory.trim_unavailable() is None
# heap blocks (64 KiB: below the mmap threshold) each followed by a small live one (1 KiB: malloc, not pymalloc),
# then the big ones freed: they cannot merge into the heap's top, so glibc keeps their pages
blocks, pins = [], []
for _ in range(800):  # ~50 MB, touched (bytearray zero-fills)
    blocks.append(bytearray(64 * 1024))
    pins.append(bytearray(1024))
del blocks
print(json.dumps(memory.in_use_kb()))
"""


def test_freed_heap_pages_count_in_raw_rss_but_not_in_use():
    if not _glibc():
        pytest.skip("needs glibc's malloc_trim")
    agent = Path(memory.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", _FREED_HEAP], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(agent)}, check=True)
    raw, in_use, seconds = json.loads(out.stdout)
    assert raw is not None and in_use is not None and 0 <= seconds < 1.0
    assert in_use <= raw + 64  # KiB: the trim only returns pages
    assert raw - in_use > 20 * 1024, (raw, in_use)  # most of the ~50 MB freed was still resident in raw RSS


def test_off_glibc_the_in_use_reading_is_null_with_the_reason(monkeypatch):
    monkeypatch.setattr(memory, "_LIBC", [None, "not glibc (no malloc_trim in libc.so.6: test): trimmed readings "
                                                "need glibc"])
    raw, in_use, seconds = memory.in_use_kb()
    assert in_use is None and seconds == 0.0 and (raw is not None) == (memory.vm_rss_kb() is not None)
    assert memory.trim_unavailable().startswith("not glibc")


def test_the_host_fits_bytes_per_token_from_in_use_and_raw_points():
    probe = kv_probe({"method": "decode_growth", "note": "n", "seconds": 1.0,
                      "points": [[800, 1000, 5000], [1056, 1500, 5200], [1312, 2000, 5100]]})
    assert probe.bytes_per_token == 2000.0  # 500 KiB per 256 tokens
    assert probe.raw_bytes_per_token == 200.0
    off = kv_probe({"method": None, "points": [], "note": "not glibc"})
    assert off.bytes_per_token is None and off.note == "not glibc"
    assert kv_probe(None) is None  # agents before session 9
