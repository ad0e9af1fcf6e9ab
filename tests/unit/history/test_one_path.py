"""One history path for every kind (issue 30, items 2 and 4): recording goes through the kind's hooks (its row
facts and its cells), whatever the result; a one-pass comparison is the per-cell, per-metric judgement that an
LLM comparison renders, on its one cell and rank metric."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from edgeopt.history import HistoryStore
from edgeopt.history.compare import compare, judge_cells
from edgeopt.history.llm_compare import compare_cells
from tests.synthetic_results import NO_SENSOR, bench_result, samples
from tests.unit.history.test_migration import _llm_copy
from tests.unit.history.v1_files import v1_copy


def _row(store: HistoryStore, run_id: int) -> tuple:
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        return conn.execute("SELECT latency_ms_p50, latency_ms_p99, latency_ms_mean, throughput_ips, memory_mb_peak, "
                            "model_kind, settings_json, result_json FROM runs WHERE id = ?", (run_id,)).fetchone()


def test_record_takes_an_llm_result_as_the_deprecated_record_llm_does(tmp_path):
    store = HistoryStore(v1_copy(tmp_path / "h.sqlite"))
    llm = _llm_copy(store, 4, tmp_path / "llm", 1.0)
    with pytest.warns(DeprecationWarning, match=r"HistoryStore\.record_llm is deprecated: call HistoryStore\.record"):
        named = store.record_llm(llm, label="x")
    plain = store.record(llm, label="x")
    assert store.kind_of(plain) == store.kind_of(named) == "generative"
    assert _row(store, plain.id) == _row(store, named.id)
    first = next(c for c in llm.cells if c.tpot_ms_p50 is not None)  # the version-1 columns: the first TPOT cell
    assert (plain.latency_ms_p50, plain.throughput_ips) == (first.tpot_ms_p50, first.decode_tokens_per_s)
    assert store.cells(plain.id) == store.cells(named.id) and store.llm_result(plain.id) == llm


def test_a_one_pass_comparison_is_the_shared_judgement_of_its_one_cell(tmp_path):
    store = HistoryStore(tmp_path / "h.sqlite")
    a = store.record(bench_result(samples(400, 2.0, seed=1), power=NO_SENSOR))
    b = store.record(bench_result(samples(400, 2.4, seed=2), power=NO_SENSOR))
    shared = judge_cells(store, a, b, tolerance_pct=5.0, alpha=0.05)
    (key, (latency,)), = shared.cells  # one unkeyed cell, judged on its one sampled metric
    assert (key, latency.spec.name, shared.unmatched) == ("", "latency_ms", [])
    one_pass = compare(store, a.id, b.id)
    assert one_pass.verdict == latency.comparison.verdict and one_pass.regression
    assert one_pass.p_value == latency.comparison.p_value and one_pass.change_pct == latency.comparison.change_pct
    per_cell = compare_cells(store, a, b, tolerance_pct=5.0, alpha=0.05, notes=[])  # the same, rendered per cell
    (metric,) = per_cell.cells[0].metrics
    assert (metric.verdict, metric.p_value) == (one_pass.verdict, one_pass.p_value)
    assert metric.change_pct == pytest.approx(one_pass.change_pct, abs=1e-9)
