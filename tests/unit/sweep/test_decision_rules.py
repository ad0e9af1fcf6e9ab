"""The recommendation's decision rules on synthetic round samples (CPU-independent, issue 21 item 5): faster beyond
noise wins; a slower, less accurate level is never chosen (dominated), even when the interval calls it a tie; ties
within noise go to the higher retention, then the smaller artifact, then the simpler one; the reason names the rule.
Also which levels are ranked (each runtime's default level among them) and the INT8 search's low-precision branch
per runtime, decided by the CPU flags given (an injection point: no dependence on this machine's CPU)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from edgeopt.sweep.int8.precision import is_low_precision_mix, low_branches, low_mix_name
from edgeopt.sweep.rank.decide import RETENTION_TIE, Candidate, decide
from edgeopt.sweep.rank.recommend import DEFAULT_WITHIN, WITHIN, candidates, complexity, runtime_defaults
from edgeopt.sweep.result import Level


def rounds(medians: Sequence[float]) -> list[list[float]]:
    """One round per median, three samples around it."""
    return [[m * 0.99, m, m * 1.01] for m in medians]


def test_issue_case_faster_and_more_accurate_bf16_beats_the_smaller_int8_mix_called_a_tie() -> None:
    """bf16 16.0 ms / 0.977 vs int8-search 18.3 ms / 0.958 (issue 21), rounds too noisy to separate them: the smaller
    int8 mix won as 'the smaller artifact'; now it is dominated."""
    samples = {"bf16@openvino": rounds([16.0, 19.0, 15.0, 17.0, 16.5]),
               "int8-search@openvino": rounds([18.3, 17.0, 18.5, 16.0, 19.0])}
    cands = [Candidate("int8-search@openvino", 3_000_000, complexity=3, retention=0.958),
             Candidate("bf16@openvino", 12_000_000, complexity=1, retention=0.977)]
    d = decide(samples, cands)
    assert not d.beaten_by, d  # within noise: rule 1 does not decide
    assert d.winner == "bf16@openvino" and d.dominated_by == {"int8-search@openvino": "bf16@openvino"}
    assert d.rule == "dominated"
    assert d.reason == "bf16@openvino: int8-search@openvino is slower and less accurate (dominated)"


def test_faster_beyond_noise_wins_even_when_less_accurate() -> None:
    samples = {"int8@ort": rounds([10.0, 10.1, 9.9, 10.0, 10.2]), "fp32@ort": rounds([20.0, 20.3, 19.8, 20.1, 20.0])}
    d = decide(samples, [Candidate("fp32@ort", 4_000, retention=1.0), Candidate("int8@ort", 1_000, 2, 0.96)])
    assert d.winner == "int8@ort" and d.beaten_by == {"fp32@ort": "int8@ort"} and d.rule == "faster beyond noise"
    assert d.reason == "int8@ort: faster than fp32@ort beyond noise"


def test_tie_within_noise_goes_to_the_higher_retention_not_the_smaller() -> None:
    """The more accurate level is slower by median but within noise: not dominated, a tie, and it wins."""
    samples = {"small": rounds([10.0, 10.4, 9.8, 10.1, 10.0]), "accurate": rounds([10.1, 9.9, 10.3, 10.0, 10.2])}
    d = decide(samples, [Candidate("small", 1_000, retention=0.990), Candidate("accurate", 9_000, retention=0.995)])
    assert d.winner == "accurate" and set(d.unbeaten) == {"small", "accurate"} and not d.dominated_by
    assert d.rule == "tie: higher retention"
    assert d.reason == "accurate: tie within noise with small: higher retention"


def test_tie_then_smaller_then_simpler_and_retention_noise_is_equal() -> None:
    samples = {"a": rounds([10.0, 10.4, 9.8, 10.1, 10.0]), "b": rounds([10.1, 9.9, 10.3, 10.0, 10.2]),
               "c": rounds([10.2, 10.0, 10.1, 9.9, 10.3])}
    half = RETENTION_TIE / 2  # closer than the tie: equal
    d = decide(samples, [Candidate("a", 5_000, 0, 0.99 + half), Candidate("b", 1_000, 2, 0.99),
                         Candidate("c", 1_000, 1, 0.99)])
    assert d.winner == "c" and d.unbeaten == ("c", "b", "a") and d.rule == "tie: simpler"
    assert d.reason == "c: tie within noise with b, a: simpler"
    d = decide(samples, [Candidate("a", 5_000, 0, 0.99), Candidate("b", 1_000, 2, 0.99)])
    assert d.winner == "b" and d.rule == "tie: smaller artifact"


def test_dominated_level_is_out_even_when_its_dominator_was_beaten() -> None:
    """C beats B beyond noise; D is too noisy for C to beat, but B is faster (median) and more accurate than D.
    Without the dominance rule D (more accurate than C) would win the tie."""
    samples = {"C": rounds([5.0] * 5), "B": rounds([8.0] * 5), "D": rounds([9.0, 4.8, 9.0, 4.9, 9.0])}
    d = decide(samples, [Candidate("C", 1, retention=0.95), Candidate("B", 1, retention=0.99),
                         Candidate("D", 1, retention=0.97)])
    assert d.beaten_by == {"B": "C"} and d.dominated_by == {"D": "B"}
    assert d.winner == "C" and d.unbeaten == ("C",) and d.rule == "dominated"
    assert d.reason == "C: D is slower and less accurate (dominated); faster than B beyond noise"


def test_decision_is_deterministic() -> None:
    samples = {"a": rounds([10.0, 10.4, 9.8, 10.1, 10.0]), "b": rounds([10.1, 9.9, 10.3, 10.0, 10.2])}
    cands = [Candidate("a", 1, retention=0.97), Candidate("b", 2, retention=0.98)]
    assert decide(samples, cands, seed=3) == decide(samples, cands, seed=3)


def level(recipe: str, runtime: str, ms: float, retention: float = 1.0, passed: bool = True) -> Level:
    return Level(recipe=recipe, runtime=runtime, runtime_version="", artifact=f"/x/{recipe}-{runtime}",
                 size_bytes=1000, latency_ms=ms, latency_ms_p99=ms, memory_mb_peak=None, energy_mj=None,
                 energy_source=None, metric="agreement", metric_value=retention, retention=retention,
                 meets_retention=passed, meets_budget=True, passed=passed, valid=True, cached=False)


def test_each_runtimes_default_level_is_ranked_when_within_reach() -> None:
    """OpenVINO's default is its bf16 level (the FP32 model at its defaults), onnxruntime's its fp32: both ranked
    although outside WITHIN, so the answer is never dominated by doing nothing; one far too slow is not."""
    assert WITHIN < 2.0 < DEFAULT_WITHIN
    levels = [level("fp32", "openvino", 30.0), level("bf16", "openvino", 20.0, 0.98),
              level("fp32", "onnxruntime", 40.0), level("int8-search", "openvino", 10.0, 0.96),
              level(low_mix_name("bf16"), "openvino", 9.0, 0.955), level("int8", "openvino", 8.0, 0.9, passed=False)]
    assert [(lv.recipe, lv.runtime) for lv in runtime_defaults(levels)] == [("bf16", "openvino"),
                                                                              ("fp32", "onnxruntime")]
    names = [(lv.recipe, lv.runtime) for lv in candidates(levels)]
    assert names == [("int8-search+bf16", "openvino"), ("int8-search", "openvino"), ("bf16", "openvino")]
    assert complexity(levels[4]) == 4 > complexity(levels[3]) == 3 > complexity(levels[1]) == 1
    assert is_low_precision_mix("int8-search+bf16") and not is_low_precision_mix("int8-search")


@pytest.mark.parametrize(("flags", "bf16_retention", "branch"), [
    (["avx2", "fma"], 0.98, False),  # no BF16 on this CPU: no bf16 branch
    (["avx512f", "amx_bf16"], 0.98, True),
    (["avx512_bf16"], 0.98, True),
    (["avx512_bf16"], 0.90, False),  # bf16 alone misses the threshold: an INT8 mix in it would too
    (None, 0.98, True),  # flags unknown: the plain level's report (it ran bf16) decides
])
def test_the_int8_search_gets_a_bf16_branch_only_where_the_cpu_runs_bf16(flags, bf16_retention, branch) -> None:
    levels = [level("fp32", "openvino", 30.0), level("fp32", "onnxruntime", 30.0),
              level("bf16", "openvino", 20.0, bf16_retention, passed=bf16_retention >= 0.95)]
    got, notes = low_branches(["onnxruntime", "openvino"], flags, levels)
    assert ("openvino" in got) is branch and "onnxruntime" not in got  # onnxruntime declares no low precision
    if branch:
        b = got["openvino"]
        assert b.level == "int8-search+bf16" and b.options == {"inference_precision": None} and not notes
        assert b.ran_low({"inference_precision": "bf16"}) and not b.ran_low({"inference_precision": "f32"})
    else:
        assert len(notes) == 1 and "no bf16 branch" in notes[0]


def test_no_plain_low_precision_level_no_branch() -> None:
    """The runtime did not report running bf16 (the sweep kept no bf16 level): no branch, whatever the flags say."""
    got, notes = low_branches(["openvino"], ["amx_bf16"], [level("fp32", "openvino", 30.0)])
    assert got == {} and "no bf16 branch" in notes[0]
