"""The history's cells: one ``run_cells`` row per run and cell, one ``run_metrics`` row per run, cell and metric
(its summary as JSON, its raw readings as a blob, :mod:`.codec`). Written beside the ``runs`` row in the same
transaction (:meth:`HistoryStore.record`), filled for older files by :mod:`.migrate`, read back as
:class:`~edgeopt.metrics.cells.ResultCell` (docs/history.md, "Cells").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from .. import jsonio
from ..metrics.cells import MetricSeries, ResultCell
from .codec import SampleCodecError, decode_series, encode_series

CELLS_DDL = (
    """CREATE TABLE IF NOT EXISTS run_cells (
        run_id INTEGER NOT NULL REFERENCES runs (id),
        position INTEGER NOT NULL,
        cell TEXT NOT NULL,
        axes_json TEXT NOT NULL,
        impossible_json TEXT NOT NULL,
        PRIMARY KEY (run_id, cell)
    )""",
    """CREATE TABLE IF NOT EXISTS run_metrics (
        run_id INTEGER NOT NULL REFERENCES runs (id),
        cell TEXT NOT NULL,
        position INTEGER NOT NULL,
        metric TEXT NOT NULL,
        unit TEXT NOT NULL,
        summary_json TEXT NOT NULL,
        readings_count INTEGER NOT NULL,
        readings_format TEXT,
        readings BLOB,
        PRIMARY KEY (run_id, cell, metric)
    )""",
)
_JSON_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class StoredSeries:
    """One ``run_metrics`` row before it is written: the readings already a blob (or a blob copied as is)."""

    metric: str
    unit: str
    summary: dict[str, float]
    count: int
    fmt: str | None
    blob: bytes | None

    @classmethod
    def of(cls, s: MetricSeries) -> StoredSeries:
        fmt, blob = encode_series(s.readings) if s.readings else (None, None)
        return cls(s.metric, s.unit, dict(s.summary), len(s.readings), fmt, blob)

    def decoded(self, cell: str, *, readings_too: bool = True) -> MetricSeries:
        """The series with its readings decoded (left empty unless ``readings_too``). Raises ValueError naming the
        metric when the blob is damaged."""
        readings: tuple[float, ...] = ()
        if readings_too and self.blob is not None and self.count:
            try:
                readings = tuple(decode_series(self.blob, str(self.fmt), self.count).tolist())
            except SampleCodecError as exc:
                raise ValueError(f"{self.metric} readings of cell {cell!r}: {exc}") from None
        return MetricSeries(metric=self.metric, unit=self.unit, readings=readings, summary=self.summary)


@dataclass(frozen=True)
class StoredCell:
    """One ``run_cells`` row and its metric rows."""

    key: str
    axes: dict[str, int]
    impossible: tuple[str, ...]
    series: tuple[StoredSeries, ...]

    @classmethod
    def of(cls, c: ResultCell) -> StoredCell:
        return cls(c.key, dict(c.axes), c.impossible, tuple(StoredSeries.of(s) for s in c.series))

    def decoded(self, metrics: Sequence[str] | None = None, summaries_only: Sequence[str] = ()) -> ResultCell:
        """The cell with its series decoded (only those of ``metrics`` when given; those of ``summaries_only``
        without their readings)."""
        return ResultCell(key=self.key, axes=self.axes, impossible=self.impossible,
                          series=tuple(s.decoded(self.key, readings_too=s.metric not in summaries_only)
                                       for s in self.series if metrics is None or s.metric in metrics))


def write_cells(conn: sqlite3.Connection, run_id: int, cells: Sequence[StoredCell]) -> None:
    """Insert the cell and metric rows of run ``run_id`` (inside the caller's transaction)."""
    for position, c in enumerate(cells):
        conn.execute("INSERT INTO run_cells (run_id, position, cell, axes_json, impossible_json) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (run_id, position, c.key, json.dumps(c.axes), json.dumps(list(c.impossible))))
        for order, s in enumerate(c.series):
            conn.execute("INSERT INTO run_metrics (run_id, cell, position, metric, unit, summary_json, readings_count, "
                         "readings_format, readings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (run_id, c.key, order, s.metric, s.unit, json.dumps(s.summary), s.count, s.fmt, s.blob))


def has_cells(conn: sqlite3.Connection, run_id: int) -> bool:
    return conn.execute("SELECT 1 FROM run_cells WHERE run_id = ? LIMIT 1", (run_id,)).fetchone() is not None


def read_cells(conn: sqlite3.Connection, run_id: int, metrics: Sequence[str] | None = None,
               summaries_only: Sequence[str] = ()) -> tuple[ResultCell, ...] | None:
    """The cells of run ``run_id`` (only the series of ``metrics`` when given; those of ``summaries_only`` without
    their readings, which are then not even fetched), None when it has no cell rows.

    Raises:
        ValueError: a damaged row (JSON not an object, a blob that does not decode to its count).
    """
    heads = conn.execute("SELECT cell, axes_json, impossible_json FROM run_cells WHERE run_id = ? ORDER BY position",
                         (run_id,)).fetchall()
    if not heads:
        return None
    skip = ", ".join("?" for _ in summaries_only) or "NULL"
    query = ("SELECT cell, metric, unit, summary_json, readings_count, readings_format, "
             f"CASE WHEN metric IN ({skip}) THEN NULL ELSE readings END FROM run_metrics "
             "WHERE run_id = ? ORDER BY cell, position")
    rows = [] if metrics is not None and not metrics else conn.execute(query, (*summaries_only, run_id)).fetchall()
    by_cell: dict[str, list[StoredSeries]] = {}
    for cell, metric, unit, summary, count, fmt, blob in rows:
        if metrics is None or metric in metrics:
            by_cell.setdefault(cell, []).append(StoredSeries(
                metric, unit, _object(summary, "summary_json"), int(count or 0), fmt,
                bytes(blob) if blob is not None else None))
    return tuple(StoredCell(cell, _object(axes, "axes_json"), tuple(_list(bad)), tuple(by_cell.get(cell, ())))
                 .decoded(summaries_only=summaries_only) for cell, axes, bad in heads)


def _object(text: str, column: str) -> dict:
    value = jsonio.loads(text, max_bytes=_JSON_MAX_BYTES)
    if not isinstance(value, dict):
        raise ValueError(f"{column} is not a JSON object")
    return value


def _list(text: str) -> list[str]:
    value = jsonio.loads(text, max_bytes=_JSON_MAX_BYTES)
    if not isinstance(value, list):
        raise ValueError("impossible_json is not a JSON list")
    return [str(v) for v in value]
