"""A baseline name never silently moves to a run of another model, runtime or target, and the regression gate
does not judge a run against an unrelated baseline (issue 16, item 5)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from edgeopt.cli.main import main
from edgeopt.history import HistoryError, HistoryStore, compare_samples
from edgeopt.history.baselines import set_baseline
from edgeopt.history.identity import RunIdentity, blocking_notes, comparability_notes
from edgeopt.qualify.gate_spec import Gates
from edgeopt.qualify.gates import GateContext, evaluate
from edgeopt.qualify.result import GateStatus, RegressionInfo
from tests.synthetic_results import bench_result, samples


def _store(tmp_path) -> HistoryStore:
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.record(bench_result(samples(400, 1.0, seed=1)))  # 1: the model
    store.record(bench_result(samples(400, 1.0, seed=2)))  # 2: the same model again
    store.record(bench_result(samples(400, 2.0, seed=3), model_path="/m/other.onnx", sha256="cd" * 32))  # 3
    return store


def test_baseline_set_refuses_a_run_of_another_model_unless_forced(tmp_path):
    store = _store(tmp_path)
    set_baseline(store, "net-local", 1)
    set_baseline(store, "net-local", 2)  # the same model measured again: fine
    with pytest.raises(HistoryError, match=r"different models: net \(abab.*\) vs other") as err:
        set_baseline(store, "net-local", 3)
    assert "--force" in str(err.value)
    assert store.baseline("net-local", "local").run_id == 2  # unchanged
    assert set_baseline(store, "net-local", 3, force=True).run_id == 3


def test_baseline_set_cli_exits_2_with_the_compare_notes(tmp_path, capsys):
    _store(tmp_path)
    db = str(tmp_path / "h.sqlite3")
    assert main(["baseline", "set", "1", "--name", "b", "--history-db", db]) == 0
    capsys.readouterr()
    assert main(["baseline", "set", "3", "--name", "b", "--history-db", db]) == 2
    assert "different models" in capsys.readouterr().err
    assert main(["baseline", "set", "3", "--name", "b", "--force", "--history-db", db, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["run_id"] == 3


def test_regression_gate_fails_as_not_comparable_unless_allowed(tmp_path):
    store = _store(tmp_path)
    other = bench_result(samples(400, 1.0, seed=4), model_path="/m/other.onnx", sha256="cd" * 32)
    notes = comparability_notes(RunIdentity.of(store.get(1)), RunIdentity.of_result(other, "local"))
    assert blocking_notes(notes) == notes and "different models" in notes[0]
    comparison = compare_samples(np.asarray(store.samples_ms(1)), np.asarray(other.samples_ms))
    info = RegressionInfo(baseline="b", baseline_run=1, comparison=comparison, notes=notes,
                          not_comparable=blocking_notes(notes))
    (row,) = evaluate(Gates.model_validate({"regression": {"baseline": "b"}}),
                      GateContext(device="local", bench=other, regression=info))
    assert row.status is GateStatus.FAIL and row.detail.startswith("NOT COMPARABLE with baseline run 1")
    allowed = info.model_copy(update={"not_comparable": blocking_notes(notes, ["model"])})
    (row,) = evaluate(Gates.model_validate({"regression": {"baseline": "b", "allow_different": ["model"]}}),
                      GateContext(device="local", bench=other, regression=allowed))
    assert row.status is GateStatus.PASS and "note: different models" in row.detail
