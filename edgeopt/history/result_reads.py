"""Reading a stored run back: its cells of metric series, raw readings (checked against the kind's physical
bounds) and its typed result, for every model kind. :class:`ResultReads` is mixed into
:class:`~edgeopt.history.store.HistoryStore`, which owns the file, its connections and :meth:`get`."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .. import jsonio
from ..errors import first_line
from ..metrics.cells import ResultCell
from ..metrics.kind_result import KindBenchResult
from ..metrics.result import BenchResult
from ..registry import get_kind
from .bench_runs import RESULT_MAX_BYTES
from .cells_rows import read_cells
from .migrate import v1_cells, v1_kind
from .records import HistoryError, RunRecord

if TYPE_CHECKING:  # bench.llm pulls in the bench package (onnx): loaded by the generative kind's hook
    from ..bench.llm.result import LlmBenchResult


class StoredResult(Protocol):
    """What every kind's typed result has: the name of the kind that measured it (a class attribute of the
    built-ins' results, a field of :class:`KindBenchResult`)."""

    @property
    def model_kind(self) -> str: ...


class ResultReads:
    """The read side of a history file for stored runs (mixed into HistoryStore)."""

    path: Path

    if TYPE_CHECKING:  # HistoryStore's
        def _connect(self) -> AbstractContextManager[sqlite3.Connection]: ...

        def get(self, ref: int | str) -> RunRecord: ...

    def kind_of(self, record: RunRecord) -> str:
        """The model kind of a stored run (``model_kind``; a row written without it: read as the migration does)."""
        if record.model_kind:
            return record.model_kind
        with self._connect() as conn:
            return v1_kind(conn, record.id)

    def cells(self, ref: int | str, *, metrics: tuple[str, ...] | None = None,
              summaries_only: tuple[str, ...] = ()) -> tuple[ResultCell, ...]:
        """The cells of a run with their metric series (only ``metrics`` when given; ``summaries_only`` without
        their raw readings), in recorded order.

        Raises:
            HistoryError: the run does not exist, or its cells cannot be read (damaged rows).
        """
        record = self.get(ref)
        try:
            with self._connect() as conn:
                cells = read_cells(conn, record.id, metrics, summaries_only)
                if cells is None:  # a row written without cells (by hand, or damaged when the file migrated)
                    stored = v1_cells(conn, record.id, self.kind_of(record))
                    cells = tuple(c.decoded(metrics, summaries_only) for c in stored)
        except ValueError as exc:  # JSON limits, blobs that do not decode, a damaged stored result
            raise HistoryError(f"history run {record.id} in {self.path} is unreadable ({first_line(exc, limit=200)}): "
                               "it cannot be used; delete it or record the run again") from None
        return cells

    def readings(self, ref: int | str, metric: str, cell: str = "") -> np.ndarray:
        """The raw readings of ``metric`` in ``cell`` of a run, checked against the metric's physical bounds.

        Raises:
            HistoryError: the run kept no readings of it, or they are damaged or impossible.
        """
        record = self.get(ref)
        found = next((c for c in self.cells(record.id, metrics=(metric,)) if c.key == cell), None)
        series = found.series_of(metric) if found is not None else None
        if series is None or not series.readings:
            raise HistoryError(f"run {record.id} was recorded without raw samples: re-run it to compare it")
        spec = get_kind(self.kind_of(record)).metric(metric)
        admits = spec.admits  # no message built per reading: a run keeps up to 2,000,000 of them
        wrong = [v for v in series.readings if not admits(v)][:1]
        if wrong:
            bad = spec.problem(wrong[0])
            what = "not finite positive numbers" if spec.min_exclusive and spec.min_value == 0 else "impossible"
            raise HistoryError(f"run {record.id} in {self.path} holds {metric} readings that are {what} ({bad}; "
                               "recorded from a device before edgeopt checked them): it cannot be compared; record "
                               "the run again")
        return np.asarray(series.readings, dtype=np.float64)

    def samples_ms(self, ref: int | str) -> np.ndarray:
        """The raw latency samples (ms) of a one-pass run: the readings of its kind's rank metric.

        Raises:
            HistoryError: the run kept no samples, or its blob is damaged.
        """
        record = self.get(ref)
        return self.readings(record.id, get_kind(self.kind_of(record)).rank_metric)

    def stored_result(self, ref: int | str) -> StoredResult:
        """The stored result of a run of any kind, as its kind's typed result (read by the kind's ``history_result``
        hook: a :class:`BenchResult` without raw samples, an LLM bench result with its cells' raw readings, a
        :class:`KindBenchResult` without readings, or a plug-in kind's own type).

        Raises:
            HistoryError: the run does not exist, or its stored result is over
                :data:`.bench_runs.RESULT_MAX_BYTES` or nested too deep.
        """
        record, text = self._result_json(ref)
        typed: StoredResult = get_kind(self.kind_of(record)).load_history("history_result")(self._checked(record, text))
        return typed

    def result(self, ref: int | str) -> BenchResult:
        """The full stored result of a one-pass run (without its raw samples).

        Raises:
            HistoryError: the run is of another kind, e.g. an LLM bench run (read it with :meth:`stored_result`
                or :meth:`llm_result`), or its stored result is over :data:`.bench_runs.RESULT_MAX_BYTES` or nested
                too deep.
        """
        stored = self.stored_result(ref)
        if not isinstance(stored, BenchResult):
            kind = get_kind(stored.model_kind)
            raise HistoryError(f"run {ref} is {kind.run_text} ({kind.name} model), not a one-pass run: read it with "
                               "stored_result, llm_result or kind_result (edgeopt compare handles it)")
        return stored

    def llm_result(self, ref: int | str) -> LlmBenchResult | None:
        """The stored LLM bench result of a run (with its cells' raw readings), or None for another kind of run."""
        from ..bench.llm.result import LlmBenchResult  # the bench package (onnx): only when asked for

        stored = self.stored_result(ref)
        return stored if isinstance(stored, LlmBenchResult) else None

    def kind_result(self, ref: int | str) -> KindBenchResult | None:
        """The stored result of a generic-engine run (cells without raw readings: :meth:`cells` has them), or None
        for a run of a built-in kind."""
        stored = self.stored_result(ref)
        return stored if isinstance(stored, KindBenchResult) else None

    def _result_json(self, ref: int | str) -> tuple[RunRecord, str]:
        record = self.get(ref)
        with self._connect() as conn:
            row = conn.execute("SELECT result_json FROM runs WHERE id = ?", (record.id,)).fetchone()
        return record, str(row[0])

    def _checked(self, record: RunRecord, text: str) -> str:
        """``text`` once checked against the limits of :mod:`edgeopt.jsonio`, before a parser sees it (pydantic's
        own recursion limit would be a ValidationError, not one line naming the run)."""
        try:
            jsonio.check(text, max_bytes=RESULT_MAX_BYTES)
        except jsonio.JsonLimitError as exc:
            raise HistoryError(f"history run {record.id} in {self.path} is unreadable (result_json: {exc}): it "
                               "cannot be used; delete it or record the run again") from None
        return text
