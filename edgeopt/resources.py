"""Where the shipped data directories (``targets/``, ``recipes/``) live.

In a source checkout (and an editable install) they sit at the repository root; a wheel installs them as
data files under ``<prefix>/share/edgeopt/`` (see ``[tool.setuptools.data-files]`` in pyproject.toml).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def builtin_dir(kind: str) -> Path | None:
    """The shipped directory ``kind`` (``"targets"`` or ``"recipes"``), or None when neither layout has it."""
    for candidate in (REPO_ROOT / kind, Path(sys.prefix) / "share" / "edgeopt" / kind):
        if candidate.is_dir():
            return candidate
    return None
