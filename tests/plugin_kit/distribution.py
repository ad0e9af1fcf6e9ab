"""A throwaway distribution written under a directory: its package modules and a ``*.dist-info`` with
``entry_points.txt`` beside it, found through ``EDGEOPT_PLUGIN_PATH`` as an installed one is."""

from __future__ import annotations

import textwrap
from pathlib import Path


def distribution(root: Path, name: str, entry_points: str, modules: dict[str, str]) -> Path:
    """Write package ``name`` (its modules) and its dist-info under ``root``; return ``root``."""
    dist = root / f"{name}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(textwrap.dedent(entry_points).lstrip())
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for rel, text in modules.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root
