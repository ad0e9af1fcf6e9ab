"""The ONNX sweep's levels in the history: ``sweep.json`` lists their run ids (as the LLM sweep and the fleet rows
do), ``edgeopt compare`` reads two sweeps' runs of a level, and a history that cannot be written is a warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")

from edgeopt.cli.main import main  # noqa: E402
from edgeopt.history import HistoryStore  # noqa: E402

FAST = ["--recipes", "fp16", "--runtimes", "onnxruntime", "--no-int8-search", "--objective", "size",
        "--iterations", "20", "--min-duration", "0.1", "--no-cache", "--json"]


def _sweep(model: Path, data: Path, out: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["sweep", str(model), "--eval", str(data), "--out", str(out), "--history-db", str(db), *FAST])
    return code, json.loads(capsys.readouterr().out)


def test_sweep_levels_are_recorded_and_listed_in_sweep_json(digits: tuple[Path, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    model, data = digits
    db = tmp_path / "h.sqlite3"
    code, first = _sweep(model, data, tmp_path / "a", db, capsys)
    assert code == 0 and len(first["history_run_ids"]) == len(first["levels"]) == 2, first
    assert json.loads((tmp_path / "a" / "sweep.json").read_text())["history_run_ids"] == first["history_run_ids"]
    _, second = _sweep(model, data, tmp_path / "b", db, capsys)
    runs = {r.id: r for r in HistoryStore(db).runs(kind="sweep")}
    assert set(runs) == set(first["history_run_ids"]) | set(second["history_run_ids"])
    assert len({runs[i].group_id for i in first["history_run_ids"]}) == 1  # one group per sweep
    assert runs[first["history_run_ids"][0]].group_id != runs[second["history_run_ids"][0]].group_id
    fp16 = [i for i in (*first["history_run_ids"], *second["history_run_ids"]) if runs[i].label.startswith("fp16/")]
    assert len(fp16) == 2 and all("retention=" in runs[i].label for i in fp16)
    assert main(["compare", str(fp16[0]), str(fp16[1]), "--history-db", str(db), "--json", "--tolerance", "1000"]) == 0
    assert json.loads(capsys.readouterr().out)["regression"] is False


def test_a_history_that_cannot_be_written_is_a_warning(digits: tuple[Path, Path], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    model, data = digits
    db = tmp_path / "not-a-db.sqlite3"
    db.write_text("this is not SQLite\n")
    code, out = _sweep(model, data, tmp_path / "a", db, capsys)
    assert code == 0 and out["recommendation"] is not None and out["history_run_ids"] == []
    assert any("not recorded in the history" in w for w in out["warnings"]), out["warnings"]
    assert db.read_text() == "this is not SQLite\n"  # the user's file is left as it was
