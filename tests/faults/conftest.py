"""Fault campaign fixtures: the loopback sshd "device" of tests/integration/ssh, plus helpers every case uses.

Every test here is marked ``faults`` (``make test-faults``). Each case asserts what a user would see (exit code,
one line naming the fix, no traceback) and what the device is left with (no agent running, the lock free, no
job directory or half-written cache entry that the next run trips over).
"""

from __future__ import annotations

import pytest

from tests.integration.ssh.conftest import device, shared_device  # noqa: F401  (fixtures)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/faults/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.faults)
