"""Where third-party extensions come from: entry points of installed distributions, plus the distributions in
the directories of ``EDGEOPT_PLUGIN_PATH`` (a plug-in under development, a test's temporary plug-in).

Groups: ``edgeopt.runtimes`` and ``edgeopt.formats`` (descriptors, :mod:`edgeopt.registry`), ``edgeopt.passes``
(:mod:`edgeopt.passes.registry`), ``edgeopt.targets`` (:mod:`edgeopt.targets.registry`); the device agent reads
``edgeopt_agent.runtimes`` itself. Every registry asks this module, so a plug-in directory counts everywhere.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from ..config import from_environment


def activate(directories: Sequence[Path]) -> None:
    """Put plug-in ``directories`` on ``sys.path`` (once each), so their modules and dist-info are found."""
    for directory in directories:
        text = str(directory)
        if text not in sys.path:
            sys.path.append(text)


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """Entry points of ``group`` from installed distributions and from ``EDGEOPT_PLUGIN_PATH``'s directories.

    Reading every distribution's metadata costs ~20 ms, and every benchmark, optimize and profile call asks (the
    target registry, the passes): the answer is kept while ``sys.path`` and its directories' modification times
    are the same (a distribution installed or removed is a dist-info directory added or removed there)."""
    activate(from_environment().plugin_path)
    return list(_scan(group, metadata.entry_points, _path_state()))


def _path_state() -> tuple[tuple[str, int | None], ...]:
    """``sys.path`` with each entry's modification time (None: not there)."""
    state: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            state.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            state.append((entry, None))
    return tuple(state)


@functools.lru_cache(maxsize=64)
def _scan(group: str, scan: Callable[..., Any], state: tuple[tuple[str, int | None], ...]) -> tuple[Any, ...]:
    """``scan(group=group)`` once per ``state`` (``scan`` is ``metadata.entry_points``, part of the key so that a
    replaced one is asked, not a kept answer)."""
    return tuple(scan(group=group))
