"""History files as schema version 1 left them, for the migration tests and for rows damaged before it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data"
V1_FILE = DATA / "history_v1.sqlite"  # written by tests/data/make_history_v1.py with the code of commit 35102fb
V1_EXPECTED = DATA / "history_v1_expected.json"


def v1_copy(to: Path) -> Path:
    """A copy of the committed version-1 file at ``to`` (the committed one is never opened for writing)."""
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(V1_FILE, to)
    return to


def as_version_1(path: Path) -> Path:
    """Turn a history file written by this edgeopt back into version 1: no cells tables, no ``model_kind``
    column, ``schema_version`` 1; the ``runs`` rows (what version 1 held) stay as they are."""
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE run_metrics")
        conn.execute("DROP TABLE run_cells")
        conn.execute("ALTER TABLE runs DROP COLUMN model_kind")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.close()
    return path
