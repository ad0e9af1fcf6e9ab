"""Where third-party extensions come from: entry points of installed distributions, plus the distributions in
the directories of ``EDGEOPT_PLUGIN_PATH`` (a plug-in under development, a test's temporary plug-in).

Groups: ``edgeopt.runtimes`` and ``edgeopt.formats`` (descriptors, :mod:`edgeopt.registry`), ``edgeopt.passes``
(:mod:`edgeopt.passes.registry`), ``edgeopt.targets`` (:mod:`edgeopt.targets.registry`); the device agent reads
``edgeopt_agent.runtimes`` itself. Every registry asks this module, so a plug-in directory counts everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from ..config import from_environment


def activate(directories: Sequence[Path]) -> None:
    """Put plug-in ``directories`` on ``sys.path`` (once each), so their modules and dist-info are found."""
    for directory in directories:
        text = str(directory)
        if text not in sys.path:
            sys.path.append(text)


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """Entry points of ``group`` from installed distributions and from ``EDGEOPT_PLUGIN_PATH``'s directories."""
    activate(from_environment().plugin_path)
    return list(metadata.entry_points(group=group))
