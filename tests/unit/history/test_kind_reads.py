"""Issue 30, item 4 for the history: a stored result is read back by its kind's ``history_result`` hook
(``HistoryStore.stored_result``), the typed accessors narrow it by type, and ``edgeopt compare`` prints through the
runs' kind or the comparison's shape, never by asking "is this an LLM run?". Real runs of both built-in kinds from
tests/data/history_v1.sqlite (runs 1-3 one-pass, 4-6 LLM bench runs)."""

from __future__ import annotations

import pytest

from edgeopt.bench.llm.result import LlmBenchResult
from edgeopt.cli.main import main
from edgeopt.history import HistoryError, HistoryStore
from edgeopt.history.llm_compare import compare_runs
from edgeopt.metrics.result import BenchResult
from tests.unit.history.v1_files import v1_copy


def test_stored_result_is_each_kinds_typed_result_and_the_accessors_narrow_it(tmp_path):
    store = HistoryStore(v1_copy(tmp_path / "h.sqlite"))
    one_pass, llm = store.stored_result(1), store.stored_result(4)
    assert isinstance(one_pass, BenchResult) and one_pass.model_kind == "tensor"
    assert isinstance(llm, LlmBenchResult) and llm.model_kind == "generative" and len(llm.cells) == 2
    assert store.result(1) == one_pass and store.llm_result(4) == llm
    assert store.llm_result(1) is None and store.kind_result(1) is None and store.kind_result(4) is None
    with pytest.raises(HistoryError, match=r"^run 4 is an LLM bench run \(generative model\), not a one-pass run: "
                                           r"read it with stored_result"):
        store.result(4)


def test_runs_of_two_kinds_are_refused_naming_each_kinds_run(tmp_path, capsys):
    db = str(v1_copy(tmp_path / "h.sqlite"))
    assert main(["compare", "1", "4", "--history-db", db]) == 2
    assert ("runs 1 and 4: one is a one-pass run and the other is an LLM bench run (tensor vs generative model); "
            "compare two runs of one kind") in capsys.readouterr().err


def test_compare_prints_each_comparison_by_its_shape_when_its_kind_names_no_renderer(tmp_path, capsys):
    db = v1_copy(tmp_path / "h.sqlite")
    store = HistoryStore(db)
    one, cells = compare_runs(store, 1, 2), compare_runs(store, 4, 5)
    assert (one.model_kind, one.shape, cells.model_kind, cells.shape) == ("tensor", "compare", "generative",
                                                                         "llm_compare")
    assert "model_kind" not in one.model_dump() and "model_kind" not in cells.model_dump()  # not in the JSON
    main(["compare", "1", "2", "--history-db", str(db)])
    table = capsys.readouterr().out
    assert "median ratio B/A" in table and "Mann-Whitney U" in table  # the one-pass table
    main(["compare", "4", "5", "--history-db", str(db)])
    table = capsys.readouterr().out
    assert "noise floor" in table and "p8 g12 d0 b1 t0" in table and "tpot_ms" in table  # per cell and metric
