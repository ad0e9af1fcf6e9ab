"""Which tests must run on the same pytest-xdist worker, and the scheduler that keeps them there (``make test``).

A test that uses a module-scoped fixture (an sshd, a lab of devices, a Ray cluster, a built model) stays with the
other tests of its file, so the fixture is built once; a test that uses a shared session result
(``SHARED_FIXTURES``: the digits INT8-search sweep read by two files) joins that result's group, so one worker
computes it and runs all its readers. Every other test goes to whichever worker is free.

Why not xdist's own ``--dist loadgroup`` with ``xdist_group`` marks: with pytest 9.2 it silently stops grouping
(pytest-xdist issue 1386: it renames node IDs, which pytest 9.2 no longer reads), and marks would have to be kept
in step with the fixtures by hand. Instead each worker writes the groups it computed from the collected tests'
fixtures (and any explicit ``xdist_group`` mark) to a file in a directory the controller named (``ENV``), and
``--dist loadgroup`` gets this module's scheduler (:class:`GroupScheduling`, through the hook in
``tests/conftest.py``), which reads the files once every worker has finished collecting, before it hands out a
test.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

ENV = "EDGEOPT_XDIST_GROUPS_DIR"
# Shared session results (tests/integration/conftest.py) -> their group.
SHARED_FIXTURES = {"digits_int8_search": "shared:digits-int8-search"}
# Module-scoped fixtures too cheap to keep a file on one worker (torch's one-thread switch).
CHEAP_MODULE_FIXTURES = frozenset({"_one_torch_thread"})


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None (any worker)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:  # an explicit mark, as loadgroup's own scheduler would read it
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    info = getattr(item, "_fixtureinfo", None)
    names = list(getattr(info, "names_closure", ()))
    for name in names:
        if name in SHARED_FIXTURES:
            return SHARED_FIXTURES[name]
    defs = getattr(info, "name2fixturedefs", {})
    if any(d.scope == "module" for n in names if n not in CHEAP_MODULE_FIXTURES for d in defs.get(n, ())):
        return item.nodeid.split("::", 1)[0]
    return None


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
