"""Which tests must run on the same pytest-xdist worker, and the scheduler that keeps them there (``make test``).

A test that uses a module-scoped fixture (an sshd, a lab of devices, a Ray cluster, a built model) stays with the
other tests of its file, so the fixture is built once; a test that uses a session-scoped result (the digits
INT8-search sweep that two files read, the exported PyTorch CNN) runs on the one worker that computes it. Every
other test goes to whichever worker is free.

Why not xdist's own ``--dist loadgroup`` with ``xdist_group`` marks: with pytest 9.2 it silently stops grouping
(pytest-xdist issue 1386: it renames node IDs, which pytest 9.2 no longer reads), and marks would have to be kept
in step with the fixtures by hand. Instead each worker writes the groups it computed from the collected tests'
fixtures (and any explicit ``xdist_group`` mark) to a file in a directory the controller named (``ENV``), and
``--dist loadgroup`` gets this module's scheduler (:class:`GroupScheduling`, through the hook in
``tests/conftest.py``), which reads the files once every worker has finished collecting, before it hands out a
test.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "EDGEOPT_XDIST_GROUPS_DIR"
# Fixtures too cheap to tie their users to one worker: built again on each worker in well under a second (the
# shared headless Chromium: one start, ~1-2 CPU-s), or (the tiny LLMs) read or copied from the suite's cache, where
# they are built once per checkout under a lock that the other worker waits on (tests/llm_models.py). Every autouse
# session fixture must be here: every test uses it, so grouping by it puts the whole suite on one worker.
CHEAP_FIXTURES = frozenset({"tiny_cnn", "_history_db_outside_home", "_local_lock_per_session", "digits",
                            "digits_npz", "_one_torch_thread", "browser", "tiny_llama_fp32", "tiny_ortgenai",
                            "tiny_ovgenai"})

# Tests that judge latencies measured in the same test against each other (a throttled run must be slower, two runs
# of one model must agree, one layer must take most of the time): they run while the other worker waits between
# its tests, so its load cannot tip them (node IDs without the parameters).
ALONE = frozenset({
    "tests/integration/test_qualify.py::test_same_model_on_a_throttled_cpu_is_flagged",
    "tests/integration/test_qualify.py::test_history_same_model_is_noise_and_a_heavier_model_is_a_regression",
    "tests/integration/test_profile.py::test_the_big_conv_is_ranked_first_with_most_of_the_time",
    "tests/unit/agent/test_profile.py::test_profile_returns_layers_and_the_unprofiled_p50",
    # two equal-cost models must tie within noise: the other worker's load made one "faster beyond noise"
    "tests/unit/sweep/test_ranking.py::test_equal_latency_real_models_the_smaller_wins_every_time",
    "tests/integration/test_sweep_ranking.py::test_equal_latency_levels_the_smaller_wins_twice",
})


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None (any worker).

    An explicit ``xdist_group`` mark wins; then the first session-scoped fixture it uses (``session:NAME``: all
    its users on one worker), then its file when it uses a module-scoped fixture; fixtures in ``CHEAP_FIXTURES``
    do not count.
    """
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:  # as xdist's loadgroup scheduler would read it
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", {})
    scopes = {name: defs[name][-1].scope for name in getattr(info, "names_closure", ())
              if defs.get(name) and name not in CHEAP_FIXTURES and _ours(defs[name][-1])}
    shared = [name for name, scope in scopes.items() if scope == "session"]
    if shared:
        return f"session:{shared[0]}"
    if "module" in scopes.values():
        return item.nodeid.split("::", 1)[0]
    return None


def _ours(fixturedef: Any) -> bool:
    """Defined in this test tree (pytest's own session fixtures, e.g. ``tmp_path_factory``, do not count)."""
    return str(getattr(getattr(fixturedef, "func", None), "__module__", "")).startswith("tests.")


def name_groups_dir(config: pytest.Config) -> None:
    """Controller only: a fresh directory the workers (which inherit the environment) write their groups to."""
    if getattr(config, "workerinput", None) is None and config.getoption("dist", "no") != "no":
        os.environ[ENV] = tempfile.mkdtemp(prefix="edgeopt-xdist-groups-")


def remove_groups_dir(config: pytest.Config) -> None:
    """Controller only: the directory :func:`name_groups_dir` made, at the end of the run."""
    where = os.environ.get(ENV)
    if getattr(config, "workerinput", None) is None and where:
        shutil.rmtree(where, ignore_errors=True)
        os.environ.pop(ENV, None)


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Worker only: ``{nodeid: group}`` of the grouped tests, written before the worker reports its collection."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    where = os.environ.get(ENV)
    if worker is None or not where:
        return
    groups = {item.nodeid: g for item in items if (g := group_of(item))}
    tmp = Path(where) / f".{worker}.json.tmp"
    tmp.write_text(json.dumps(groups))
    tmp.replace(Path(where) / f"{worker}.json")


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the groups above (None for other modes: xdist's own scheduler)."""
    if config.getoption("dist", "no") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """Scopes are the groups the workers computed; an ungrouped test is a scope of its own. Scopes are handed
        out in collection order (the integration files' long groups before the many short unit tests, so the
        tail of the run balances), not largest-count first, except the integration scopes with an ``ALONE``
        test, handed out among the unit tests (:func:`alone_among_unit_tests`)."""

        def schedule(self) -> None:
            first = self.collection is None
            if first:
                self._groups = _read_groups()
                self.config.option.loadscopereorder = False
            super().schedule()
            if first:
                alone_among_unit_tests(self.workqueue)

        def _split_scope(self, nodeid: str) -> str:
            return getattr(self, "_groups", {}).get(nodeid, nodeid)

    return GroupScheduling(config, log)


# Scopes left after the last moved ALONE scope (alone_among_unit_tests): the short unit tests that even out the two
# workers' ends, whatever the moved groups cost.
TAIL_SCOPES = 300


def alone_among_unit_tests(queue: OrderedDict[str, dict[str, bool]]) -> None:
    """Move the scopes (work units) holding an ``ALONE`` test from among the integration tests to among the unit
    tests, spread evenly before the last :data:`TAIL_SCOPES`.

    An ``ALONE`` test first waits for the other worker's current test to end (its exclusive lock); among the
    integration tests that is often a sweep of 20-40 s, during which this worker idles (33 s measured before
    tests/integration/test_qualify.py's history test). Among the unit tests, the other worker's current test ends
    within a second or two.
    """
    scopes = list(queue.items())
    first_unit = next((i for i, (scope, _) in enumerate(scopes) if scope.startswith("tests/unit/")), None)
    if first_unit is None:
        return
    moved = [(scope, work) for scope, work in scopes[:first_unit] if any(alone_id(n) for n in work)]
    if not moved:
        return
    rest = [(scope, work) for scope, work in scopes if all(scope != m for m, _ in moved)]
    first_unit -= len(moved)
    step = max(1, (len(rest) - TAIL_SCOPES - first_unit) // (len(moved) + 1))
    for k, unit in enumerate(moved):
        rest.insert(min(len(rest), first_unit + (k + 1) * step + k), unit)
    queue.clear()
    queue.update(rest)


def alone_id(nodeid: str) -> bool:
    """Whether the test ``nodeid`` (parameters or not) is one of :data:`ALONE`."""
    return nodeid.split("[", 1)[0] in ALONE


def _read_groups() -> dict[str, str]:
    where = os.environ.get(ENV)
    groups: dict[str, str] = {}
    if where and Path(where).is_dir():
        for path in sorted(Path(where).glob("gw*.json")):
            groups.update(json.loads(path.read_text()))
    return groups


def alone(item: pytest.Item | None) -> bool:
    """Whether ``item`` is one of the :data:`ALONE` tests."""
    return item is not None and alone_id(item.nodeid)


class _Held:
    """This worker's open lock files while it holds the run lock exclusively across consecutive ``ALONE`` tests."""

    files: tuple[Any, Any] | None = None


@contextlib.contextmanager
def turn(item: pytest.Item, nextitem: pytest.Item | None = None) -> Iterator[None]:
    """Worker only: run ``item`` alone (``ALONE``: an exclusive lock) or beside other ordinary tests (shared).

    A turnstile lock taken before the shared/exclusive one keeps a waiting ``ALONE`` test from being overtaken
    forever by the other worker's next tests (flock does not queue). When this worker's next test is ``ALONE`` too
    (the two latency comparisons of tests/integration/test_qualify.py follow each other), the exclusive lock is kept
    for it: taken again, it would wait once more for whatever test the other worker started in between.
    """
    where = os.environ.get(ENV)
    if not where or os.environ.get("PYTEST_XDIST_WORKER") is None:
        yield
        return
    exclusive = alone(item)
    if _Held.files is not None and not exclusive:  # not expected (nextitem said ALONE): give the lock back first
        _release()
    if _Held.files is None:
        gate, run = open(Path(where) / "turnstile.lock", "a"), open(Path(where) / "run.lock", "a")  # noqa: SIM115
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(run, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        _Held.files = (gate, run)
    try:
        yield
    finally:
        if not (exclusive and alone(nextitem)):
            _release()


def _release() -> None:
    if _Held.files is not None:
        gate, run = _Held.files
        _Held.files = None
        fcntl.flock(run, fcntl.LOCK_UN)
        run.close()
        gate.close()
