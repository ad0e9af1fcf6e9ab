"""A fleet run's device rows into the results history, whatever the rows hold (a benchmark, an LLM bench).

Why one place: a history that cannot be opened or written must cost a warning, never a measurement, and every
fleet command must say so in the same words; only how a row becomes a history run differs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from .result import DeviceOutcome

if TYPE_CHECKING:
    from ..history import HistoryStore

RowT = TypeVar("RowT", bound=DeviceOutcome)


def record_each(rows: list[RowT], history_db: str | Path | None, warnings: list[str],
                save: Callable[[HistoryStore, RowT], int | None]) -> list[RowT]:
    """``save`` each row's run in the history (it returns the run id, or None for a row with nothing to record);
    rows come back with their ``history_run_id``. A history error is one warning (per row where a row failed)."""
    from ..history import HistoryError, open_store

    try:
        store = open_store(history_db)
    except HistoryError as exc:
        warnings.append(f"runs not recorded in the history: {exc}")
        return rows
    out = []
    for row in rows:
        try:
            run_id = save(store, row)
        except HistoryError as exc:
            warnings.append(f"{row.device}: run not recorded in the history: {exc}")
            run_id = None
        out.append(row if run_id is None else row.model_copy(update={"history_run_id": run_id}))
    return out
