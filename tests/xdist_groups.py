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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "EDGEOPT_XDIST_GROUPS_DIR"
# Fixtures too cheap to tie their users to one worker: built again on each worker in well under a second, or (the
# tiny LLMs) read or copied from the suite's cache, where they are built once per checkout under a lock that the
# other worker waits on (tests/llm_models.py). Every autouse session fixture must be here: every test uses it, so
# grouping by it puts the whole suite on one worker.
CHEAP_FIXTURES = frozenset({"tiny_cnn", "_history_db_outside_home", "_local_lock_per_session", "digits",
                            "digits_npz", "_one_torch_thread", "tiny_llama_fp32", "tiny_ortgenai", "tiny_ovgenai"})

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
        tail of the run balances), not largest-count first."""

        def schedule(self) -> None:
            if self.collection is None:
                self._groups = _read_groups()
                self.config.option.loadscopereorder = False
            super().schedule()

        def _split_scope(self, nodeid: str) -> str:
            return getattr(self, "_groups", {}).get(nodeid, nodeid)

    return GroupScheduling(config, log)


def _read_groups() -> dict[str, str]:
    where = os.environ.get(ENV)
    groups: dict[str, str] = {}
    if where and Path(where).is_dir():
        for path in sorted(Path(where).glob("gw*.json")):
            groups.update(json.loads(path.read_text()))
    return groups


def alone(item: pytest.Item | None) -> bool:
    """Whether ``item`` is one of the :data:`ALONE` tests."""
    return item is not None and item.nodeid.split("[", 1)[0] in ALONE


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
