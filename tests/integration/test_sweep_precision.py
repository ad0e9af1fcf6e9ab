"""The INT8 search on the real OpenVINO, one shared sweep of the digits MLP (module fixture ``ov_search``):

- precision-aware search (issue 21 item 4): on a CPU that runs BF16 (AVX512_BF16 or AMX), the INT8 search also
  measures its mix with the float parts at OpenVINO's default bf16, kept as level ``int8-search+bf16`` with its own
  retention (against the f32 reference) and latency, and ranked with ``int8-search`` and plain ``bf16``; the
  plain ``int8`` file is measured at bf16 too (``int8+bf16``). The mechanism on any CPU:
  tests/integration/test_plugins.py (ortplug's f16) and tests/unit/sweep/test_decision_rules.py (the CPU-flag rule);
- NNCF's accuracy-controlled quantization as an INT8 search candidate on OpenVINO (any CPU; was test_sweep_nncf.py).

One sweep serves both (was two, ~50 s each): the threshold plain INT8 misses, so the search runs and NNCF's
candidate is tried; the bf16 branch where the CPU has one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the digits model needs scikit-learn")
pytest.importorskip("openvino", reason="the bf16 branch and the NNCF candidate are OpenVINO's")

from edgeopt.evaluation import parse_output, resolve_metric  # noqa: E402
from edgeopt.runners.local import LocalRunner  # noqa: E402
from edgeopt.runners.served import agent_session  # noqa: E402
from edgeopt.sweep import sweep  # noqa: E402
from edgeopt.sweep.api import float_options, level_settings  # noqa: E402
from edgeopt.sweep.measure import Context  # noqa: E402
from edgeopt.sweep.rank.recommend import candidates, level_name, rank  # noqa: E402
from edgeopt.sweep.result import SweepResult  # noqa: E402

# snr_db here: int8 ~0.99990 (misses 0.99995, so the search runs), bf16 alone ~0.99999 (passes: a bf16 branch)
MIN_RETENTION = 0.99995


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {f for line in text.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}


BF16_CPU = bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})


def _has_nncf() -> bool:
    try:
        import nncf  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def ov_search(digits: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> SweepResult:
    """The digits INT8 search on OpenVINO (snr_db, :data:`MIN_RETENTION`, 8 trials), NNCF's candidate on when NNCF
    is installed. Readers only read."""
    model, data = digits
    return sweep(model, eval=data, recipes=["int8"], metric="snr_db", min_retention=MIN_RETENTION, max_trials=8,
                 runtimes=["openvino"], iterations=20, min_duration_s=0.1,
                 out_dir=tmp_path_factory.mktemp("ov-search") / "sweep", nncf_budget_s=1.0 if _has_nncf() else 0.0)


def test_nncf_candidate_is_measured_on_openvino(ov_search: SweepResult) -> None:
    if not _has_nncf():
        pytest.skip("accuracy control is NNCF's (pip install 'edgeopt[nncf]')")
    result = ov_search
    by = {lv.recipe: lv for lv in result.levels}
    assert not by["int8"].meets_retention
    search = result.int8_search
    assert search is not None
    nncf = [t for t in search.trials if t.label == "nncf accuracy control"]
    assert len(nncf) == 1, search.trials
    trial = nncf[0]
    assert trial.runtime == "openvino" and trial.artifact.endswith(".xml") and Path(trial.artifact).is_file()
    assert 0 < trial.retention <= 1.0 + 1e-6 and trial.latency_ms > 0
    assert trial.passed == (trial.retention >= MIN_RETENTION)
    # low-precision trials (OpenVINO's bf16 branch on a CPU with BF16, issue 21) are their branch's, not `chosen`
    passing = [t for t in search.trials if t.passed and t.precision is None]
    if passing:  # the fastest passing f32 trial wins, NNCF's included
        assert search.chosen is not None and search.chosen.latency_ms == min(t.latency_ms for t in passing)


@pytest.mark.skipif(not BF16_CPU, reason="this CPU has neither avx512_bf16 nor amx_bf16: OpenVINO runs f32 here, "
                                         "so the search has no bf16 branch (tested with ortplug's f16 instead)")
def test_openvino_int8_search_measures_and_ranks_its_mix_with_bf16_float_parts(ov_search: SweepResult) -> None:
    result = ov_search
    by = {lv.recipe: lv for lv in result.levels}
    assert by["bf16"].meets_retention and not by["int8"].meets_retention, result.levels
    search = result.int8_search
    assert search is not None and "int8-search" in by, search.trials
    mix = by["int8-search+bf16"]
    assert mix.details["inference_precision"] == "bf16" and mix.details["effective_runtime_options"] == {}
    assert by["int8-search"].details["effective_runtime_options"] == {"inference_precision": "f32"}
    assert mix.retention <= 1.0 + 1e-9 and mix.latency_ms > 0 and mix.details["float_precision"] == "bf16"
    assert any(t.precision == "bf16" for t in search.trials)
    plain = by["int8+bf16"]  # the plain INT8 file as OpenVINO loads it with no options: bf16 float parts
    assert plain.artifact == by["int8"].artifact and plain.details["inference_precision"] == "bf16"
    assert plain.details["effective_runtime_options"] == {} and by["int8"].details["inference_precision"] == "f32"
    ranking = result.ranking
    assert result.recommendation is not None and result.recommendation.reason
    # ranked like any level: a candidate whenever it passes within reach of the fastest. Under load the first
    # passes can leave a single candidate within reach, and then no ranking runs (ranking None); the trio below
    # is ranked either way
    picked = {level_name(lv) for lv in candidates(result.levels)}
    if ranking is not None:
        assert (level_name(mix) in ranking["candidates"]) == (level_name(mix) in picked)
    # the three compared in interleaved rounds, each with its own runtime options (first runs of a 0.05 ms model
    # are too noisy to say whether the sweep's own ranking took the mix in; marked passing for the ranking alone)
    trio = [by["bf16"], by["int8-search"], mix.model_copy(update={"passed": True, "meets_retention": True})]
    # the rounds in one served agent, as the sweep runs them (a fresh agent per round cost ~1 s each)
    with agent_session(LocalRunner()) as served:
        ctx = Context(target="local", runner=LocalRunner(), eval_npz=Path(result.out_dir) / "eval_inputs.npz",
                      labels=None, metric=resolve_metric("snr_db", has_labels=False), selection=parse_output(None),
                      min_retention=MIN_RETENTION, measure=level_settings(threads=result.threads), targets_dirs=(),
                      versions={"openvino": mix.runtime_version}, runtime_options=float_options(["openvino"]),
                      served=served)
        ranked, rec, facts = rank(ctx, [lv.model_copy(update={"latency_ms": 1.0}) for lv in trio])
    assert rec is not None and facts is not None and len(facts["candidates"]) == 3
    assert all(lv.latency_rounds == facts["rounds"] >= 5 for lv in ranked) and rec.reason == facts["reason"]
    print({level_name(lv): (round(lv.retention, 6), lv.latency_ms_round_median) for lv in ranked}, rec.reason)
