"""Rows an untrusted device left in a history before edgeopt checked its numbers (NaN or negative samples, a
damaged JSON column): ``compare`` and ``history`` skip them with a warning, and naming one gives one line. Such
rows are from older files: the fixtures damage a file's rows as schema version 1 held them, and the store
migrates it on open (tests/unit/history/v1_files.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from edgeopt.cli.main import main
from edgeopt.history import HistoryError, HistoryStore
from edgeopt.history.codec import encode_samples
from tests.synthetic_results import bench_result, samples
from tests.unit.history.v1_files import as_version_1


@pytest.fixture()
def damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs 1-3 sound; 4 holds NaN samples, 5 negative ones (and a negative p50), 6 an unreadable JSON column."""
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    for _ in range(6):
        store.record(bench_result(samples(200, 2.0)), kind="bench", device="pi-1")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET samples = ? WHERE id = 4", (encode_samples([float("nan")] * 200),))
        conn.execute("UPDATE runs SET samples = ?, latency_ms_p50 = -1 WHERE id = 5", (encode_samples([-1.0] * 200),))
        conn.execute("UPDATE runs SET settings_json = '[[[' WHERE id = 6")
    conn.close()
    as_version_1(path)
    monkeypatch.setenv("EDGEOPT_HISTORY_DB", str(path))
    return path


def test_compare_skips_damaged_rows_with_a_warning(damaged: Path, capsys):
    assert main(["compare", "1", "2", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("history run 6" in n and "skipped" in n for n in notes), notes


@pytest.mark.parametrize(("run", "needle"), [("4", "not finite positive"), ("5", "not finite positive"),
                                             ("6", "unreadable")])
def test_comparing_a_damaged_run_is_one_line(damaged: Path, capsys, run: str, needle: str):
    code = main(["compare", "1", run])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_history_lists_the_sound_rows_and_warns(damaged: Path, capsys):
    assert main(["history", "--json"]) == 0
    captured = capsys.readouterr()
    assert sorted(r["id"] for r in json.loads(captured.out)) == [1, 2, 3, 4, 5]
    assert "history run 6" in captured.err and "skipped" in captured.err


@pytest.fixture()
def deep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs 1-3 sound; 4 has a settings column nested 100,000 deep (before edgeopt/jsonio.py a RecursionError that
    broke every compare in the file, through the noise floor), 5 a stored result nested 100,000 deep."""
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    for _ in range(5):
        store.record(bench_result(samples(200, 2.0)), kind="bench", device="pi-1")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET settings_json = ? WHERE id = 4", ("[" * 100_000 + "]" * 100_000,))
        conn.execute("UPDATE runs SET result_json = ? WHERE id = 5", ('{"a":' * 100_000 + "1" + "}" * 100_000,))
    conn.close()
    as_version_1(path)
    monkeypatch.setenv("EDGEOPT_HISTORY_DB", str(path))
    return path


def test_a_deeply_nested_row_is_skipped_and_compare_still_works(deep: Path, capsys):
    assert main(["compare", "1", "2", "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("history run 4" in n and "settings_json: nested more than 64 levels deep" in n for n in notes), notes
    assert main(["history", "--json"]) == 0
    captured = capsys.readouterr()
    assert sorted(r["id"] for r in json.loads(captured.out)) == [1, 2, 3, 5]
    assert "history run 4" in captured.err and "RecursionError" not in captured.err


def test_comparing_a_deeply_nested_run_is_one_line(deep: Path, capsys):
    code = main(["compare", "1", "4"])
    err = capsys.readouterr().err
    assert code == 2 and "settings_json: nested more than 64" in err and "Recursion" not in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_deeply_nested_stored_result_is_one_line_where_it_is_read(deep: Path):
    store = HistoryStore(deep)
    assert store.get(5).id == 5 and store.samples_ms(5).size == 200  # compare reads only the samples: it works
    with pytest.raises(HistoryError, match=r"^history run 5 .* \(result_json: nested more than 64 levels deep\)"):
        store.result(5)
