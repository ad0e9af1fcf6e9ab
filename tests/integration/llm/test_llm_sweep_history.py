"""``edgeopt sweep LLM_DIR --history-db DB``: every measured level is a ``sweep`` run in the history (its LLM bench
result), listed by ``edgeopt history`` and compared cell by cell by ``edgeopt compare``; a history that cannot be
written is a warning, never the sweep's answer. The zoo's random-weight tiny-llama, only its fp32
onnxruntime-genai level (exported once per session: ``tiny_llama_fp32``), scored on a short text: a sweep takes
seconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("onnxruntime_genai", reason="the LLM sweep tests need onnxruntime-genai (edgeopt[llm])")
pytest.importorskip("torch", reason="the zoo LLM is built with torch (pip install 'edgeopt[llm,torch]')")

from edgeopt.cli.main import main  # noqa: E402
from edgeopt.history import HistoryStore  # noqa: E402

TEXT = "import json\nclass Path(object):\n    '''A path.'''\n    def name(self): return 1\n" * 40


@pytest.fixture(scope="module")
def zoo(tiny_llama_fp32: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tiny-llama, its fp32 level (built once per session) copied where the sweeps look, and a held-out text."""
    root = tmp_path_factory.mktemp("llm-history")
    shutil.copytree(tiny_llama_fp32["levels"], root / "sweep" / "levels")
    text = root / "heldout.txt"
    text.write_text(TEXT)
    return {"src": tiny_llama_fp32["src"], "text": text, "out": root / "sweep"}


def _sweep(zoo: dict[str, Path], db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["sweep", str(zoo["src"]), "--eval", str(zoo["text"]), "--levels", "fp32", "--runtimes",
                 "onnxruntime_genai", "--min-retention", "0.5", "--eval-limit", "2", "--out", str(zoo["out"]),
                 "--history-db", str(db), "--json"])
    captured = capsys.readouterr()
    return code, {**json.loads(captured.out), "stderr": captured.err}


def test_each_level_is_a_sweep_run_and_two_sweeps_compare_per_cell(zoo, tmp_path, capsys):
    db = tmp_path / "h.sqlite3"
    code, first = _sweep(zoo, db, capsys)
    assert code == 0 and first["kind"] == "llm_sweep" and len(first["history_run_ids"]) == 1, first
    assert json.loads((zoo["out"] / "sweep.json").read_text())["history_run_ids"] == first["history_run_ids"]
    code, second = _sweep(zoo, db, capsys)
    assert code == 0 and len(second["history_run_ids"]) == 1
    (a,), (b,) = first["history_run_ids"], second["history_run_ids"]
    store = HistoryStore(db)
    run = store.get(a)
    assert run.kind == "sweep" and run.verdict == "pass" and run.runtime == "onnxruntime_genai"
    assert run.label is not None and run.label.startswith("fp32@onnxruntime_genai retention=1.0000")
    assert run.group_id != store.get(b).group_id  # one group per sweep
    stored = store.llm_result(a)
    level = first["levels"][0]
    assert stored is not None and stored.cells[0].samples is not None  # raw readings, for compare
    assert run.latency_ms_p50 == stored.cells[0].tpot_ms_p50 == level["tpot_ms_p50"]
    assert stored.model_path == level["folder"] and run.model_sha256 == store.get(b).model_sha256
    assert main(["history", "--kind", "sweep", "--history-db", str(db), "--json"]) == 0
    assert {r["id"] for r in json.loads(capsys.readouterr().out)} == {a, b}
    code = main(["compare", str(a), str(b), "--history-db", str(db), "--json", "--tolerance", "1000"])
    cmp = json.loads(capsys.readouterr().out)
    assert code == 0 and cmp["kind"] == "llm_compare" and not cmp["regression"], cmp
    assert [c["cell"] for c in cmp["cells"]] == ["p32 g32 d0 b1 t0"]


def test_a_history_that_cannot_be_written_is_a_warning(zoo, tmp_path, capsys):
    not_a_db = tmp_path / "h.sqlite3"
    not_a_db.write_text("this is no SQLite file\n" * 100)
    code, doc = _sweep(zoo, not_a_db, capsys)
    assert code == 0 and doc["recommendation"] is not None and doc["history_run_ids"] == []
    (warning,) = [w for w in doc["warnings"] if "history" in w]
    assert warning.startswith("levels not recorded in the history: ") and str(not_a_db) in warning
    assert "levels not recorded in the history" in doc["stderr"]
