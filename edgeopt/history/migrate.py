"""History schema version 1 -> 2: the ``model_kind`` column on ``runs`` and the cells tables (:mod:`.cells_rows`),
filled from what a version-1 file holds.

A one-pass run's cell comes from its columns (p50, p99, mean, throughput, peak memory, energy, size) and its
samples blob, copied as is (the same codec); an LLM bench run's cells from its stored result (``result_json``),
through the generative kind's ``cells`` function. Which of the two a version-1 row is can only be read from the
start of that stored result (``{"kind":"<the kind descriptor's result_kind>"``, the generative kind's
``llm_bench``): this module is the one place that looks, once per row; every reader uses ``model_kind`` afterwards.

:func:`migrate` runs inside the store's ``BEGIN IMMEDIATE`` transaction that reads the schema version, so of two
processes opening a version-1 file at once the first migrates and the second finds version 2; a crash mid-way rolls
the whole migration back. A row whose stored result cannot be read (damaged, nested too deep) gets its kind and no
cells: :func:`v1_cells` says why when a reader asks for them (docs/history.md, "Migration").
"""

from __future__ import annotations

import sqlite3

from .. import jsonio
from ..errors import first_line
from ..registry import builtin_kind, get_kind
from ..registry.kind_spec import GENERATIVE, TENSOR
from .bench_runs import RESULT_MAX_BYTES
from .cells_rows import CELLS_DDL, StoredCell, StoredSeries, has_cells, write_cells
from .codec import SAMPLES_FORMAT


def v1_kind(conn: sqlite3.Connection, run_id: int) -> str:
    """The model kind of a row written before ``model_kind`` existed: generative when its stored result starts with
    the generative kind's ``result_kind`` (pydantic writes ``kind`` first, no spaces), else tensor (version 1 knew
    only these two)."""
    row = conn.execute("SELECT substr(result_json, 1, 64) FROM runs WHERE id = ?", (run_id,)).fetchone()
    head = str(row[0]) if row and row[0] is not None else ""
    mark = f'"kind":"{builtin_kind(GENERATIVE).result_kind}"'
    return GENERATIVE if head.lstrip("{ ").startswith(mark) else TENSOR


def v1_cells(conn: sqlite3.Connection, run_id: int, kind: str) -> tuple[StoredCell, ...]:
    """The cells of a row that has none in the cells tables, from its version-1 columns.

    Raises:
        ValueError: its stored result is unreadable (too large, nested too deep, not an LLM bench result); the
            message starts with ``result_json:``.
    """
    if kind == GENERATIVE:
        return _llm_cells(conn, run_id)
    return (_tensor_cell(conn, run_id),)


def _tensor_cell(conn: sqlite3.Connection, run_id: int) -> StoredCell:
    row = conn.execute("SELECT latency_ms_p50, latency_ms_p99, latency_ms_mean, throughput_ips, memory_mb_peak, "
                       "energy_mj, model_size_bytes, samples_count, samples_format, samples FROM runs WHERE id = ?",
                       (run_id,)).fetchone()
    p50, p99, mean, ips, memory, energy, size, count, fmt, blob = row
    kind = get_kind(TENSOR)

    def one(metric: str, **summary: float | None) -> StoredSeries | None:
        kept = {k: float(v) for k, v in summary.items() if v is not None}
        return StoredSeries(metric, kind.metric(metric).unit, kept, 0, None, None) if kept else None

    kept = bool(blob is not None and count)
    latency = StoredSeries("latency_ms", kind.metric("latency_ms").unit, {"p50": p50, "p99": p99, "mean": mean},
                           int(count) if kept else 0, (fmt or SAMPLES_FORMAT) if kept else None,
                           bytes(blob) if kept else None)
    rest = (one("throughput_per_s", value=ips), one("memory_mb", value=memory),
            one("size_mb", value=size / float(1 << 20) if size else None), one("energy_mj", value=energy))
    return StoredCell("", {}, (), (latency, *(s for s in rest if s is not None)))


def _llm_cells(conn: sqlite3.Connection, run_id: int) -> tuple[StoredCell, ...]:
    from ..bench.llm.result import LlmBenchResult  # the bench package (onnx) loads only for an LLM row

    text = str(conn.execute("SELECT result_json FROM runs WHERE id = ?", (run_id,)).fetchone()[0])
    try:
        result = jsonio.validate(LlmBenchResult, text, max_bytes=RESULT_MAX_BYTES)
    except ValueError as exc:  # JsonLimitError, pydantic's ValidationError
        raise ValueError(f"result_json: {first_line(exc, limit=200)}") from None
    return tuple(StoredCell.of(c) for c in get_kind(GENERATIVE).load_cells()(result))


def migrate(conn: sqlite3.Connection) -> int:
    """Bring a version-1 file to version 2 inside the caller's transaction; the number of runs given cells.

    Idempotent: the column is added only when missing, and only runs without cell rows are filled.
    """
    if "model_kind" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}:
        conn.execute("ALTER TABLE runs ADD COLUMN model_kind TEXT")
    for statement in CELLS_DDL:
        conn.execute(statement)
    filled = 0
    for (run_id,) in conn.execute("SELECT id FROM runs ORDER BY id").fetchall():
        kind = v1_kind(conn, run_id)
        conn.execute("UPDATE runs SET model_kind = ? WHERE id = ? AND model_kind IS NULL", (kind, run_id))
        if has_cells(conn, run_id):
            continue
        try:
            cells = v1_cells(conn, run_id, kind)
        except ValueError:  # a damaged row: no cells; v1_cells names the damage when a reader asks
            continue
        write_cells(conn, run_id, cells)
        filled += 1
    return filled
