"""Resident memory of this process: ``VmHWM``/``VmRSS`` in /proc/self/status, and the memory in use (RSS right
after glibc's ``malloc_trim``).

``ru_maxrss`` is not used: after fork it can inherit the parent's peak, so a small model run from a big
host process would report the host's memory.
"""

from __future__ import annotations

import time
from typing import Any, List, Optional, Tuple


def vm_hwm_kb(status_path: str = "/proc/self/status") -> Optional[int]:
    """The process's peak resident set size in KiB, or None where /proc is unavailable (e.g. macOS)."""
    try:
        with open(status_path) as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def vm_rss_kb(status_path: str = "/proc/self/status") -> Optional[int]:
    """The process's current resident set size in KiB (``VmRSS``), or None where /proc is unavailable."""
    try:
        with open(status_path) as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def reset_peak(clear_refs_path: str = "/proc/self/clear_refs") -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0: write 5 to clear_refs), so the next peak is one
    phase's; False where it cannot be reset (then ``VmHWM`` stays the process's peak since start)."""
    try:
        with open(clear_refs_path, "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


_LIBC: List[Any] = []  # [handle or None, reason]: loaded once


def _libc() -> Tuple[Any, Optional[str]]:
    """glibc's handle (with ``malloc_trim``), or None and why not (musl, macOS, Windows)."""
    if not _LIBC:
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            libc.gnu_get_libc_version.restype = ctypes.c_char_p
            libc.malloc_trim.argtypes = [ctypes.c_size_t]
            libc.malloc_trim.restype = ctypes.c_int
            _LIBC[:] = [libc, None]
        except (OSError, AttributeError) as exc:
            _LIBC[:] = [None, "not glibc (no malloc_trim in libc.so.6: %s): trimmed readings need glibc" % exc]
    return _LIBC[0], _LIBC[1]


def trim_unavailable() -> Optional[str]:
    """None where in-use readings can be taken (glibc and /proc), else the reason they are null."""
    libc, why = _libc()
    if libc is None:
        return why
    if vm_rss_kb() is None:
        return "no /proc/self/status: RSS cannot be read"
    return None


def in_use_kb() -> Tuple[Optional[int], Optional[int], float]:
    """(raw VmRSS, VmRSS right after glibc's ``malloc_trim(0)``, seconds the trim took) in KiB.

    glibc keeps freed heap pages resident (a cache that grows by reallocation leaves its old copies there), so
    raw RSS overstates the memory in use; ``malloc_trim(0)`` returns every whole free page of every arena to the
    system first, so the second reading is the memory the live allocations hold. The trim costs up to
    milliseconds on a large heap and makes the next allocations fault their pages in again: never call it inside
    a timed section. Trimmed is None where glibc is absent (``trim_unavailable`` says why)."""
    raw = vm_rss_kb()
    libc, _ = _libc()
    if libc is None or raw is None:
        return raw, None, 0.0
    t0 = time.perf_counter()
    libc.malloc_trim(0)
    seconds = time.perf_counter() - t0
    return raw, vm_rss_kb(), seconds
