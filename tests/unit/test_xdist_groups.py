"""The test scheduler's grouping (tests/xdist_groups.py): an ordinary test belongs to no group.

An autouse session fixture is used by every test; grouping by it would put the whole suite on one worker (it did:
``make test`` ran on one of its two workers until ``_local_lock_per_session`` joined ``CHEAP_FIXTURES``).
"""

from __future__ import annotations

import fcntl
from collections import OrderedDict
from pathlib import Path

import pytest

from tests import xdist_groups
from tests.xdist_groups import ALONE, ENV, TAIL_SCOPES, alone_among_unit_tests, group_of, turn


def test_an_ordinary_test_is_in_no_group(request: pytest.FixtureRequest) -> None:
    assert group_of(request.node) is None


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def _run_lock_free(where: Path) -> bool:
    """Whether another worker could take the run lock shared now (it could start an ordinary test)."""
    with open(where / "run.lock", "a") as run:
        try:
            fcntl.flock(run, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(run, fcntl.LOCK_UN)
        return True


def test_consecutive_alone_tests_keep_the_other_worker_out_between_them(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, str(tmp_path))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setattr(xdist_groups._Held, "files", None)  # under xdist this very test holds the real run lock
    first, second = (_Item(n) for n in sorted(ALONE)[:2])
    ordinary = _Item("tests/unit/test_x.py::test_y")
    with turn(first, second):  # type: ignore[arg-type]
        assert not _run_lock_free(tmp_path)
    assert not _run_lock_free(tmp_path)  # held for the next ALONE test: nothing of the other worker's starts between
    with turn(second, ordinary):  # type: ignore[arg-type]
        assert not _run_lock_free(tmp_path)
    assert _run_lock_free(tmp_path)
    with turn(ordinary, None):  # type: ignore[arg-type]
        assert _run_lock_free(tmp_path)  # shared: the other worker's ordinary tests run beside it


def test_integration_scopes_with_an_alone_test_are_handed_out_among_the_unit_tests() -> None:
    throttled = sorted(n for n in ALONE if n.startswith("tests/integration/test_qualify.py"))[0]
    queue: OrderedDict[str, dict[str, bool]] = OrderedDict()
    queue["tests/integration/test_a.py::test_a"] = {"tests/integration/test_a.py::test_a": False}
    queue["tests/integration/test_qualify.py"] = {throttled: False, "tests/integration/test_qualify.py::t": False}
    queue["tests/integration/test_b.py::test_b"] = {"tests/integration/test_b.py::test_b": False}
    units = [f"tests/unit/test_u.py::test_{i}" for i in range(TAIL_SCOPES + 100)]
    queue.update({u: {u: False} for u in units})
    alone_among_unit_tests(queue)
    order = list(queue)
    assert order[:2] == ["tests/integration/test_a.py::test_a", "tests/integration/test_b.py::test_b"]
    at = order.index("tests/integration/test_qualify.py")
    assert 2 < at < len(order) - TAIL_SCOPES  # among the unit tests, not at the tail
    assert list(queue["tests/integration/test_qualify.py"]) == [throttled, "tests/integration/test_qualify.py::t"]
    assert sorted(order) == sorted(["tests/integration/test_a.py::test_a", "tests/integration/test_b.py::test_b",
                                    "tests/integration/test_qualify.py", *units])
