"""Results history: every bench / qualify run in an SQLite file, with raw samples, baselines and comparisons.

The file's default location comes from :mod:`edgeopt.config` (``EDGEOPT_HISTORY_DB``, else the XDG data dir).
"""

from __future__ import annotations

from pathlib import Path

from ..config import Settings, from_environment
from .compare import RunComparison, SampleComparison, Verdict, compare, compare_samples
from .records import Baseline, RunRecord
from .store import HistoryError, HistoryStore


def default_db_path(settings: Settings | None = None) -> Path:
    """The history file: ``EDGEOPT_HISTORY_DB`` or ``$XDG_DATA_HOME/edgeopt/history.sqlite3``."""
    settings = from_environment() if settings is None else settings
    assert settings.history_db is not None  # from_environment always resolves it
    return settings.history_db


def open_store(path: str | Path | None = None) -> HistoryStore:
    """The history at ``path``, or at the default location."""
    return HistoryStore(Path(path) if path is not None else default_db_path())


__all__ = [
    "Baseline", "HistoryError", "HistoryStore", "RunComparison", "RunRecord", "SampleComparison", "Verdict",
    "compare", "compare_samples", "default_db_path", "open_store",
]
