"""Peak resident memory of this process from ``VmHWM`` in /proc/self/status.

``ru_maxrss`` is not used: after fork it can inherit the parent's peak, so a small model run from a big
host process would report the host's memory.
"""

from __future__ import annotations

from typing import Optional


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
