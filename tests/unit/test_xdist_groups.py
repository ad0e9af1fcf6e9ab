"""The test scheduler's grouping (tests/xdist_groups.py): an ordinary test belongs to no group.

An autouse session fixture is used by every test; grouping by it would put the whole suite on one worker (it did:
``make test`` ran on one of its two workers until ``_local_lock_per_session`` joined ``CHEAP_FIXTURES``).
"""

from __future__ import annotations

import pytest

from tests.xdist_groups import group_of


def test_an_ordinary_test_is_in_no_group(request: pytest.FixtureRequest) -> None:
    assert group_of(request.node) is None
