"""Polling for a condition that another process or thread makes true (an agent ending, a lock freed)."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], object], timeout_s: float, step_s: float = 0.05) -> bool:
    """True once ``predicate()`` is, checked every ``step_s`` for up to ``timeout_s`` (and once more at the end)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return bool(predicate())
