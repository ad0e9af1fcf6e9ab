"""The results history: an embedded SQLite file holding every recorded run with its raw latency samples.

Safety: every write is one ``BEGIN IMMEDIATE`` transaction in WAL mode with ``synchronous=FULL`` and a busy
timeout, so several processes can record at once without losing rows (writers queue on the lock), readers never
block writers, and a writer killed mid-transaction leaves the file as it was before that transaction (SQLite's
journal rolls it back on the next open). One connection per operation: nothing is held open between calls.

The file is local by design: SQLite's locking is unreliable on network file systems (NFS, SMB); keep the history
on a local disk (docs/history.md).

Every run is also kept as cells of metric series (:mod:`.cells_rows`: one row per run, cell and metric, with the
raw readings): compare and its noise floor read those. A file of schema version 1 gets them on first open
(:mod:`.migrate`, in the transaction that reads the version).

This module is the SQLite file only (connections, transactions, writes, run queries). The schema is
:mod:`.schema`'s; reading a run's cells, readings and typed result back is :mod:`.result_reads`' (mixed in); how a
result becomes a row and a row a record is :mod:`.bench_runs`' (every kind, from the facts its ``history_row`` hook
gives: the one-pass kind's there, the generative kind's in :mod:`edgeopt.bench.llm.history_row`, a plug-in kind's
:mod:`.kind_runs`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import first_line
from ..metrics.kind_result import KindBenchResult
from ..registry import get_kind
from .bench_runs import RUN_COLUMNS, record_of, run_values
from .cells_rows import StoredCell, write_cells
from .migrate import migrate
from .records import Baseline, HistoryError, RunKind, RunRecord
from .result_reads import ResultReads
from .schema import DDL, SCHEMA_VERSION

if TYPE_CHECKING:  # bench.llm pulls in the bench package (onnx): loaded through the generative kind's hooks
    from ..bench.llm.result import LlmBenchResult

DEFAULT_BUSY_TIMEOUT_S = 30.0
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
T = TypeVar("T")


def _deprecated(name: str) -> None:
    warnings.warn(f"HistoryStore.{name} is deprecated: call HistoryStore.record(result), which stores a run of "
                  "every kind (docs/history.md)", DeprecationWarning, stacklevel=3)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


class HistoryStore(ResultReads):
    """A history file. Creating the object creates the file (and its directory) when missing.

    Args:
        path: the SQLite file (``edgeopt.config`` gives the default: ``EDGEOPT_HISTORY_DB`` or the XDG data dir).
        busy_timeout_s: how long a writer waits for another writer's lock before giving up.

    Raises:
        HistoryError: the path is not writable, not an SQLite file, or from a newer edgeopt.
    """

    def __init__(self, path: str | Path, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> None:
        self.path = Path(path).expanduser()
        self.busy_timeout_s = busy_timeout_s
        # Rows skipped because they cannot be read (damaged, or impossible numbers an untrusted device sent
        # before edgeopt checked them): one line each, for the caller to show as warnings.
        self.skipped: list[str] = []
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryError(f"history {self.path}: cannot create its directory ({exc.strerror}); "
                               "pass --history-db to a writable path") from None
        self._init_schema()

    # -- connections and transactions ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None)
        except sqlite3.Error as exc:
            raise HistoryError(f"history {self.path}: cannot open ({exc}); pass --history-db to a writable path") \
                from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            yield conn
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise HistoryError(f"history {self.path} stayed locked by another writer for more than "
                                   f"{self.busy_timeout_s:g} s; retry, or pass another --history-db") from None
            raise HistoryError(f"history {self.path}: {exc}; pass --history-db to a writable local file") from None
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"history {self.path}: {exc}; if the file is not an edgeopt history, move it away "
                               "or pass another --history-db") from None
        finally:
            conn.close()

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one IMMEDIATE transaction (the write lock is taken up front: no upgrade deadlocks)."""
        with self._connect() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = work(conn)
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return out

    def _init_schema(self) -> None:
        with self._connect() as conn:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise HistoryError(f"history {self.path}: cannot switch to WAL mode (got {mode}); keep the history "
                                   "on a local disk")

        def create(conn: sqlite3.Connection) -> None:
            for statement in DDL:
                conn.execute(statement)
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise HistoryError(f"history {self.path} has schema version {row[0]}, newer than this edgeopt's "
                                   f"{SCHEMA_VERSION}: upgrade edgeopt or use another --history-db")
            elif int(row[0]) < SCHEMA_VERSION:  # checked inside the write lock: one opener migrates
                filled = migrate(conn)
                conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             (f"migrated_from_{row[0]}", f"{_now()} ({filled} runs given cells)"))

        self._write(create)

    # -- writing ----------------------------------------------------------------------------------------------
    def record(
        self,
        result: Any,
        *,
        kind: RunKind = "bench",
        device: str | None = None,
        verdict: str | None = None,
        group_id: str | None = None,
        label: str | None = None,
        model_kind: str | None = None,
    ) -> RunRecord:
        """Store one run of any model kind: its ``runs`` row (the version-1 columns, for older readers: the kind's
        ``history_row``) and its cells with every raw reading (the kind's ``cells``, else ``result.cells``), in one
        transaction.

        Args:
            result: the kind's typed result (:class:`BenchResult`, an LLM bench result, :class:`KindBenchResult`).
            kind: what recorded it (bench, qualify, sweep).
            device: the device label (default: from ``result.runner``: ``local`` or ``user@host:port``).
            verdict: ``pass`` / ``fail`` when gates or a budget were checked.
            group_id: ties together the runs of one qualify call.
            label: free text (e.g. the spec name).
            model_kind: the registered kind of model measured (None: the result's own ``model_kind``).

        Returns:
            The stored row (with its id).
        """
        desc = get_kind(model_kind or result.model_kind)
        values = run_values(desc.load_history("history_row")(result), kind=kind, device=device, verdict=verdict,
                            group_id=group_id, label=label, now=_now())
        cells = desc.load_cells()(result) if desc.cells is not None else result.cells
        return self._insert({**values, "model_kind": desc.name}, [StoredCell.of(c) for c in cells])

    def record_llm(self, result: LlmBenchResult, *, kind: RunKind = "bench", device: str | None = None,
                   verdict: str | None = None, group_id: str | None = None, label: str | None = None) -> RunRecord:
        """Deprecated: :meth:`record` (which stores every kind); warns with a DeprecationWarning."""
        _deprecated("record_llm")
        return self.record(result, kind=kind, device=device, verdict=verdict, group_id=group_id, label=label)

    def record_kind(self, result: KindBenchResult, *, kind: RunKind = "bench", device: str | None = None,
                    verdict: str | None = None, group_id: str | None = None, label: str | None = None) -> RunRecord:
        """Deprecated: :meth:`record` (which stores every kind); warns with a DeprecationWarning."""
        _deprecated("record_kind")
        return self.record(result, kind=kind, device=device, verdict=verdict, group_id=group_id, label=label)

    def _insert(self, values: dict[str, Any], stored: list[StoredCell]) -> RunRecord:
        """One ``runs`` row and its cells, in one transaction."""
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)

        def insert(conn: sqlite3.Connection) -> int:
            cur = conn.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", tuple(values.values()))
            run_id = int(cur.lastrowid or 0)
            write_cells(conn, run_id, stored)
            return run_id

        return self.get(self._write(insert))

    def set_baseline(self, name: str, run: int | str) -> Baseline:
        """Point baseline ``name`` at ``run`` for that run's device (replacing an older one of that name there).

        Raises:
            HistoryError: a malformed name or an unknown run.
        """
        if not _NAME.match(name) or name == "latest" or name.isdigit():
            raise HistoryError(f"baseline name {name!r}: use letters, digits and . _ + - (not a bare number or "
                               "'latest'), e.g. release-1.2")
        record = self.get(run)
        created = _now()

        def upsert(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO baselines (name, device, run_id, created_at) VALUES (?, ?, ?, ?) "
                         "ON CONFLICT (name, device) DO UPDATE SET run_id = excluded.run_id, "
                         "created_at = excluded.created_at", (name, record.device, record.id, created))

        self._write(upsert)
        return Baseline(name=name, device=record.device, run_id=record.id, created_at=created)

    # -- reading ----------------------------------------------------------------------------------------------
    def _rows(self, where: str = "", params: tuple[Any, ...] = (), tail: str = "") -> list[RunRecord]:
        cols = ", ".join(RUN_COLUMNS)
        with self._connect() as conn:
            rows = conn.execute(f"SELECT {cols} FROM runs {where} {tail}", params).fetchall()
            names: dict[int, list[str]] = {}
            for name, run_id in conn.execute("SELECT name, run_id FROM baselines ORDER BY name"):
                names.setdefault(int(run_id), []).append(str(name))
        records: list[RunRecord] = []
        for row in rows:
            try:
                records.append(record_of(row, names.get(int(row[0]), [])))
            except (ValueError, TypeError, KeyError) as exc:  # JSON and pydantic errors are ValueErrors
                note = (f"history run {row[0]} in {self.path} is unreadable ({first_line(exc, limit=120)}): "
                        "skipped; delete it or record the run again")
                if note not in self.skipped:
                    self.skipped.append(note)
        return records

    def runs(self, *, model: str | None = None, target: str | None = None, kind: str | None = None,
             limit: int | None = 50) -> list[RunRecord]:
        """Recorded runs, newest first.

        Args:
            model: model file stem, a path fragment, or a sha256 prefix.
            target: target name or device label.
            kind: bench, qualify or sweep.
            limit: at most this many (None: all).
        """
        clauses: list[str] = []
        params: list[Any] = []
        if model:
            clauses.append("(model_name = ? OR model_sha256 LIKE ? OR instr(model_path, ?) > 0)")
            params += [model, f"{model.lower()}%", model]
        if target:
            clauses.append("(target = ? OR device = ?)")
            params += [target, target]
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        tail = "ORDER BY id DESC" + (f" LIMIT {int(limit)}" if limit else "")
        return self._rows(where, tuple(params), tail)

    def baselines(self) -> list[Baseline]:
        """Every baseline, by name then device."""
        with self._connect() as conn:
            rows = conn.execute("SELECT name, device, run_id, created_at FROM baselines ORDER BY name, device")
            return [Baseline(name=r[0], device=r[1], run_id=int(r[2]), created_at=r[3]) for r in rows]

    def baseline(self, name: str, device: str) -> Baseline | None:
        """Baseline ``name`` for ``device``, or None."""
        return next((b for b in self.baselines() if b.name == name and b.device == device), None)

    def get(self, ref: int | str) -> RunRecord:
        """A run by id, ``latest``, or baseline name (``NAME`` when it names one device, else ``NAME@DEVICE``).

        Raises:
            HistoryError: nothing matches (the message says what exists).
        """
        text = str(ref).strip()
        if text.isdigit():
            rows = self._rows("WHERE id = ?", (int(text),))
            damaged = next((n for n in self.skipped if n.startswith(f"history run {int(text)} ")), None)
            if not rows and damaged:
                raise HistoryError(damaged.replace(": skipped;", ": it cannot be used;"))
            if not rows:
                raise HistoryError(f"run {text} is not in history {self.path}; list runs with: edgeopt history")
            return rows[0]
        if text == "latest":
            rows = self._rows(tail="ORDER BY id DESC LIMIT 1")
            if not rows:
                raise HistoryError(f"history {self.path} is empty: record a run first (edgeopt bench / qualify)")
            return rows[0]
        name, _, device = text.partition("@")
        matches = [b for b in self.baselines() if b.name == name and (not device or b.device == device)]
        if len(matches) == 1:
            return self.get(matches[0].run_id)
        if len(matches) > 1:
            devices = ", ".join(f"{name}@{b.device}" for b in matches)
            raise HistoryError(f"baseline '{name}' exists for several devices: pick one of {devices}")
        known = ", ".join(sorted({b.name for b in self.baselines()})) or "(none)"
        raise HistoryError(f"'{text}' is not a run id, 'latest' or a baseline in {self.path} (baselines: {known}); "
                           "list runs with: edgeopt history")

    def count(self) -> int:
        with self._connect() as conn:
            return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def integrity(self) -> str:
        """``PRAGMA integrity_check``: ``ok`` for a sound file."""
        with self._connect() as conn:
            return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
