"""NNCF's accuracy-controlled quantization as an INT8 search candidate on OpenVINO (real digits MLP, local agent)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")
pytest.importorskip("openvino", reason="the candidate runs on OpenVINO")
pytest.importorskip("nncf", reason="accuracy control is NNCF's")

from edgeopt.sweep import sweep  # noqa: E402


def test_nncf_candidate_is_measured_on_openvino(digits: tuple[Path, Path], tmp_path: Path) -> None:
    model, data = digits  # the session's digits MLP (tests/integration/conftest.py)
    # a threshold plain INT8 misses, so the search runs and NNCF's candidate is tried
    result = sweep(model, eval=data, recipes=["int8"], metric="snr_db", min_retention=0.9999, max_trials=4,
                   runtimes=["openvino"], iterations=20, min_duration_s=0.1, out_dir=tmp_path / "sweep",
                   nncf_budget_s=1.0)
    by = {lv.recipe: lv for lv in result.levels}
    assert not by["int8"].meets_retention
    search = result.int8_search
    assert search is not None
    nncf = [t for t in search.trials if t.label == "nncf accuracy control"]
    assert len(nncf) == 1, search.trials
    trial = nncf[0]
    assert trial.runtime == "openvino" and trial.artifact.endswith(".xml") and Path(trial.artifact).is_file()
    assert 0 < trial.retention <= 1.0 + 1e-6 and trial.latency_ms > 0
    assert trial.passed == (trial.retention >= 0.9999)
    # low-precision trials (OpenVINO's bf16 branch on a CPU with BF16, issue 21) are their branch's, not `chosen`
    passing = [t for t in search.trials if t.passed and t.precision is None]
    if passing:  # the fastest passing f32 trial wins, NNCF's included
        assert search.chosen is not None and search.chosen.latency_ms == min(t.latency_ms for t in passing)
