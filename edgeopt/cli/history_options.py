"""``--history-db`` / ``--no-history``, shared by bench, qualify and the history commands, and the bench hook
that records a run (a failure to record warns on stderr: it never fails the measurement)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from ..config import ENV_HISTORY_DB
from ..history import HistoryError, open_store

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class HistoryOptions:
    db: Path | None = None
    enabled: bool = True


def history_db_option(f: F) -> F:
    return click.option("--history-db", "history_db", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help=f"Results history file [default: ${ENV_HISTORY_DB} or "
                             "$XDG_DATA_HOME/edgeopt/history.sqlite3].")(f)


def history_options(f: F) -> F:
    """Add ``--history-db`` and ``--no-history``; the command receives ``history: HistoryOptions``."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = HistoryOptions(db=kwargs.pop("history_db", None), enabled=not kwargs.pop("no_history", False))
        return f(*args, history=opts, **kwargs)

    decorated: Any = click.option("--no-history", is_flag=True, help="Do not record this run in the history.")(wrapper)
    return history_db_option(decorated)


def record_run(result: Any, history: HistoryOptions | None, *, device: str | None = None,
               verdict: str | None = None) -> int | None:
    """Store a run of any kind (``HistoryStore.record``); returns its run id, or None when disabled or the history
    cannot be written (a warning on stderr)."""
    if history is None or not history.enabled:
        return None
    try:
        store = open_store(history.db)
        run = store.record(result, kind="bench", device=device, verdict=verdict)
    except HistoryError as exc:
        click.echo(f"edgeopt: warning: run not recorded in the history: {exc}", err=True)
        return None
    click.echo(f"edgeopt: recorded as history run {run.id} in {store.path}", err=True)
    return run.id
