"""History schema version 2 (issue 30, item 2): a file written by version 1 (tests/data/history_v1.sqlite, real
one-pass and LLM bench runs recorded by the code of commit 35102fb) opens, lists and compares exactly as that code
did; the migration runs once, also when two processes open the file at once; new records write the old columns
and the cells."""

from __future__ import annotations

import contextlib
import io
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from edgeopt.cli.main import main
from edgeopt.history import HistoryStore
from edgeopt.history.codec import decode_samples
from edgeopt.history.migrate import migrate
from edgeopt.history.store import SCHEMA_VERSION
from tests.synthetic_results import NO_SENSOR, bench_result, samples
from tests.unit.history.test_store import child
from tests.unit.history.v1_files import V1_EXPECTED, v1_copy

ONE_PASS, LLM = (1, 2, 3), (4, 5, 6)


def _cli(argv: list[str]) -> tuple[int, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return int(code or 0), json.loads(out.getvalue())


def _counts(path: Path) -> tuple[int, int, int, str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return (conn.execute("SELECT count(*) FROM runs").fetchone()[0],
                conn.execute("SELECT count(*) FROM run_cells").fetchone()[0],
                conn.execute("SELECT count(*) FROM run_metrics").fetchone()[0],
                conn.execute("SELECT value FROM meta WHERE key = 'migrated_from_1'").fetchone()[0])


def test_the_v1_file_is_version_1_and_as_committed(tmp_path):
    path = v1_copy(tmp_path / "h.sqlite")
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"
        assert "model_kind" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'run_metrics'").fetchone()[0] == 0


@pytest.mark.parametrize("name", ["history", "compare_tensor", "compare_tensor_baseline", "compare_llm"])
def test_a_v1_file_reads_and_compares_as_version_1_did(tmp_path, name):
    expected = json.loads(V1_EXPECTED.read_text())[name]
    path = v1_copy(tmp_path / "h.sqlite")
    code, out = _cli([*expected["argv"], "--history-db", str(path)])
    assert (code, out) == (expected["exit_code"], expected["output"])  # exact: every float as version 1 printed it


def test_the_migration_fills_kinds_and_cells_and_is_idempotent(tmp_path):
    path = v1_copy(tmp_path / "h.sqlite")
    with contextlib.closing(sqlite3.connect(path)) as conn:
        blob, count = conn.execute("SELECT samples, samples_count FROM runs WHERE id = 1").fetchone()
    store = HistoryStore(path)
    assert [store.kind_of(store.get(i)) for i in (*ONE_PASS, *LLM)] == ["tensor"] * 3 + ["generative"] * 3
    first = _counts(path)
    assert first[:2] == (6, 3 + 3 * 2)  # a cell per one-pass run, two workload cells per LLM run
    # the one-pass cell: the samples as recorded (the blob copied as is), the columns as its summary
    (cell,) = store.cells(1)
    latency = cell.series_of("latency_ms")
    assert cell.key == "" and np.array_equal(np.asarray(latency.readings), decode_samples(blob, count))
    assert latency.summary["p50"] == store.get(1).latency_ms_p50 and cell.series_of("throughput_per_s") is not None
    # an LLM cell: every reading of the stored result
    stored = store.llm_result(4)
    cells = store.cells(4)
    assert [c.key for c in cells] == ["p8 g12 d0 b1 t0", "p16 g12 d0 b1 t0"]
    assert cells[0].axes == {"prompt_tokens": 8, "gen_tokens": 12, "context_depth": 0, "batch": 1, "threads": 0}
    assert list(cells[1].series_of("tpot_ms").readings) == stored.cells[1].samples.tpot_ms
    assert cells[0].series_of("decode_tokens_per_s").summary == {"value": stored.cells[0].decode_tokens_per_s}
    # opened again, and migrated again by hand: nothing changes
    HistoryStore(path)
    assert _counts(path) == first
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert migrate(conn) == 0
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert _counts(path) == first


def test_two_processes_opening_a_v1_file_at_once_migrate_it_once(tmp_path):
    path = v1_copy(tmp_path / "h.sqlite")
    go = tmp_path / "go"
    code = f"""
        import time
        from pathlib import Path
        from edgeopt.history import HistoryStore
        while not Path({str(go)!r}).exists():
            time.sleep(0.001)
        store = HistoryStore({str(path)!r})
        print(len(store.cells(4)), store.count())
    """
    kids = [child(code) for _ in range(2)]
    go.touch()
    outs = [k.communicate(timeout=120) for k in kids]
    assert [k.returncode for k in kids] == [0, 0], [err for _, err in outs]
    assert [out.split() for out, _ in outs] == [["2", "6"], ["2", "6"]]
    runs, cells, metrics, note = _counts(path)
    assert (runs, cells) == (6, 9) and note.endswith("(6 runs given cells)")  # one migration: the other saw v2
    with contextlib.closing(sqlite3.connect(path)) as conn:
        per_run = conn.execute("SELECT run_id, count(*) FROM run_cells GROUP BY run_id").fetchall()
    assert dict(per_run) == {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2}


def test_a_new_record_writes_the_old_columns_and_its_cells(tmp_path):
    store = HistoryStore(v1_copy(tmp_path / "h.sqlite"))
    result = bench_result(samples(300, 2.0), power=NO_SENSOR)  # energy: an estimate from the TDP
    run = store.record(result)
    assert run.id == 7 and run.latency_ms_p50 == result.latency_ms.p50 and run.samples_count == 300
    with contextlib.closing(sqlite3.connect(store.path)) as conn:
        kind, blob = conn.execute("SELECT model_kind, samples FROM runs WHERE id = 7").fetchone()
        metrics = [r[0] for r in conn.execute("SELECT metric FROM run_metrics WHERE run_id = 7 ORDER BY position")]
    assert kind == "tensor" and np.allclose(decode_samples(blob, 300), result.samples_ms, rtol=0, atol=1e-9)
    assert metrics == ["latency_ms", "throughput_per_s", "memory_mb", "size_mb", "energy_mj"]
    (cell,) = store.cells(7)
    latency = cell.series_of("latency_ms")
    assert list(latency.readings) == result.samples_ms  # exact: kept as float64 when ns would round them
    assert latency.summary == {k: getattr(result.latency_ms, k) for k in ("p50", "p90", "p95", "p99", "p999", "mean")}
    assert store.samples_ms(7).tolist() == result.samples_ms


def _llm_copy(store: HistoryStore, run: int, folder: Path, scale: float):
    """The stored LLM result of ``run`` with every token ``scale`` times slower, its model a folder here."""
    folder.mkdir(exist_ok=True)
    (folder / "genai_config.json").write_text("{}")
    (folder / "model.onnx").write_bytes(b"tiny")
    r = store.llm_result(run)
    cells = [c.model_copy(update={"samples": c.samples.model_copy(update={
        "tpot_ms": [t * scale for t in c.samples.tpot_ms],
        "decode_tokens_per_s": [v / scale for v in c.samples.decode_tokens_per_s]})}) for c in r.cells]
    return r.model_copy(update={"cells": cells, "model_path": str(folder)})


def test_llm_runs_are_compared_per_cell_and_metric_through_the_cells(tmp_path):
    store = HistoryStore(v1_copy(tmp_path / "h.sqlite"))
    base = store.record(_llm_copy(store, 4, tmp_path / "llm", 1.0))
    slow = store.record(_llm_copy(store, 4, tmp_path / "llm", 10.0))
    assert [c.key for c in store.cells(slow.id)] == ["p8 g12 d0 b1 t0", "p16 g12 d0 b1 t0"]
    code, cmp = _cli(["compare", str(base.id), str(slow.id), "--history-db", str(store.path), "--json"])
    assert code == 1 and cmp["kind"] == "llm_compare" and cmp["regression"]
    for cell in cmp["cells"]:
        verdicts = {m["metric"]: m["verdict"] for m in cell["metrics"]}
        assert verdicts["tpot_ms"] == "regression" and verdicts["decode_tokens_per_s"] == "regression", cmp
        assert verdicts["ttft_ms"] == "no_change"  # the first token was not slowed
        decode = next(m for m in cell["metrics"] if m["metric"] == "decode_tokens_per_s")
        assert decode["change_pct"] == pytest.approx(-90.0, abs=0.01)  # in tokens/s: ten times fewer
    # a one-pass run against an LLM run: refused, naming both
    assert main(["compare", "1", str(base.id), "--history-db", str(store.path)]) == 2


def test_the_version_1_mark_is_the_llm_results_own_kind() -> None:
    """migrate.py tells a version-1 LLM row by the generative descriptor's ``result_kind``: it must be what
    ``LlmBenchResult`` writes first, or every old LLM row would migrate as a one-pass run."""
    from edgeopt.bench.llm.result import LlmBenchResult
    from edgeopt.registry import builtin_kind
    from edgeopt.registry.kind_spec import GENERATIVE

    assert LlmBenchResult.model_fields["kind"].default == builtin_kind(GENERATIVE).result_kind
    assert next(iter(LlmBenchResult.model_fields)) == "kind", "pydantic writes fields in declaration order"
