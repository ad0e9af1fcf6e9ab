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
