"""The LLM sweep decides on interleaved ranking rounds with the one-pass sweep's rule (issue 30): a level faster in
one lucky bench cell but tied in the rounds does not win over a more accurate one, and a level faster in every
round does. Synthetic rows: no timing here."""

from __future__ import annotations

import numpy as np

from edgeopt.llm.retention import LlmRetention
from edgeopt.llm.sweep_rank import recommend_llm
from edgeopt.llm.sweep_result import LlmSweepLevel


def _retention(value: float) -> LlmRetention:
    return LlmRetention(metric="top1", retention=value, top1_agreement=value, topk_overlap=value, kl_mean=0.0,
                        kl_exact=True, ppl_reference=10.0, ppl_candidate=10.0, first_divergence=[None],
                        greedy_tokens=8, positions=100, windows=2, top_k=5, kl_top=64)


def _row(name: str, retention: float, cell_tpot: float, rounds: list[list[float]], size: int = 1000
         ) -> LlmSweepLevel:
    return LlmSweepLevel(name=name, runtime="onnxruntime_genai", folder=f"/x/{name}", settings={},
                         reference=name == "fp32", size_bytes=size, reused=True, retention=_retention(retention),
                         passed=True, decode_tokens_per_s=1000 / cell_tpot, tpot_ms_p50=cell_tpot,
                         rank_tokens_per_s=1000 / cell_tpot, ttft_ms_p50=1.0, bench_valid=True,
                         rounds_tpot_ms=rounds)


def _rounds(center: float, seed: int, n: int = 5, jitter: float = 0.02) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [list(center * (1 + jitter * rng.standard_normal(16))) for _ in range(n)]


def test_a_lucky_bench_cell_does_not_win_a_tie_in_the_rounds():
    # int8's one bench cell said 20 % faster; in the rounds both decode at 1.0 ms within noise: the tie goes to
    # the higher retention, or int8 is dominated (the old rule picked int8 on the single cell)
    fp32 = _row("fp32", 1.0, 1.0, _rounds(1.0, 1))
    int8 = _row("int8", 0.96, 0.8, _rounds(1.0, 2), size=400)
    rec, _, _ = recommend_llm([int8, fp32], 0.9, "top1")
    assert rec is not None and rec.name == "fp32", rec
    assert "interleaved rounds" in rec.reason and ("tie" in rec.reason or "dominated" in rec.reason)


def test_a_level_faster_in_every_round_wins_beyond_noise():
    fp32 = _row("fp32", 1.0, 1.0, _rounds(1.0, 3))
    int4 = _row("int4-b32-rtn", 0.95, 1.0, _rounds(0.5, 4), size=300)  # the cell was unlucky; the rounds are not
    rec, _, _ = recommend_llm([fp32, int4], 0.9, "top1")
    assert rec is not None and rec.name == "int4-b32-rtn" and "faster beyond noise" in rec.reason, rec


def test_without_rounds_the_single_cell_rule_still_answers_and_says_so():
    fp32 = _row("fp32", 1.0, 1.0, [])
    int8 = _row("int8", 0.96, 0.8, [])
    rec, _, _ = recommend_llm([fp32, int8], 0.9, "top1")
    assert rec is not None and rec.name == "int8" and "one bench cell each" in rec.reason


def test_the_frontier_reads_the_rounds_so_the_recommendation_is_on_it():
    # int4's one bench cell was unlucky (slower than fp32's), the rounds say it decodes in half the time: it is
    # recommended, and the frontier (drawn from the same round medians) holds it; from the cells alone fp32 would
    # dominate it and the printed frontier would not name the recommendation (the CI failure of session 14)
    fp32 = _row("fp32", 1.0, 1.0, _rounds(1.0, 5))
    int4 = _row("int4-b32-rtn", 0.95, 1.2, _rounds(0.5, 6), size=300)
    rec, _, front = recommend_llm([fp32, int4], 0.9, "top1")
    assert rec is not None and rec.name == "int4-b32-rtn"
    assert f"{rec.name}@{rec.runtime}" in front and len(front) == 2, front


def test_a_round_times_enough_decode_to_have_a_median():
    """16 tokens of the zoo LLM were ~6 ms of decode: a round times at least MIN_ROUND_MS of it, in whole
    generations, and a level too slow for more times one (issue 33: two sweeps named different winners)."""
    from edgeopt.llm.sweep_rounds import MAX_GENERATIONS, MIN_ROUND_MS, TOKENS_PER_ROUND, generations

    assert generations(0.35) == MAX_GENERATIONS  # would need 36: capped
    assert generations(5.0) == 3 and 3 * TOKENS_PER_ROUND * 5.0 >= MIN_ROUND_MS > 2 * TOKENS_PER_ROUND * 5.0
    assert generations(50.0) == 1 and generations(None) == 1 and generations(0.0) == 1


def _leaning_measure(factors: dict[str, list[float]]):
    """TPOT samples per call: level ``key``'s k-th call (its k-th round) decodes at ``factors[key][k]`` ms."""
    calls: dict[str, int] = {}

    def measure(key: str, n: int) -> list[float]:
        k = calls.get(key, 0)
        calls[key] = k + 1
        seq = factors[key]
        return [seq[min(k, len(seq) - 1)]] * n
    return measure


def test_the_llm_ranking_adds_the_image_rankings_rounds_while_a_tie_break_overrules_a_faster_level():
    """q8_0 looks ~10 % faster than fp32 by the median of five noisy rounds, but its interval holds 1, so the tie
    goes to fp32's higher retention: the one-pass sweep's ranking adds rounds in that case, and so does the LLM
    sweep's now (issue 33: two sweeps named f16@llama_cpp and q8_0@llama_cpp on ties). The extra rounds settle it."""
    from edgeopt.llm.sweep_rounds import ranking_rounds
    from edgeopt.sweep.rank.decide import MAX_EXTRA_ROUNDS

    fp32 = _row("fp32", 1.0, 1.0, [])
    q8 = _row("q8_0", 0.998, 1.0, [], size=500)
    steady = [1.0] * (5 + MAX_EXTRA_ROUNDS)
    noisy = [0.6, 1.3, 0.9, 1.2, 0.88] + [0.9] * MAX_EXTRA_ROUNDS  # median 0.9: leaning, interval holds 1
    samples = ranking_rounds([fp32, q8], _leaning_measure({"fp32@onnxruntime_genai": steady,
                                                           "q8_0@onnxruntime_genai": noisy}), 5)
    assert len(samples["fp32@onnxruntime_genai"]) > 5 and len(samples["q8_0@onnxruntime_genai"]) > 5
    ranked = [fp32.model_copy(update={"rounds_tpot_ms": samples["fp32@onnxruntime_genai"]}),
              q8.model_copy(update={"rounds_tpot_ms": samples["q8_0@onnxruntime_genai"]})]
    rec, _, _ = recommend_llm(ranked, 0.95, "top1")
    assert rec is not None and rec.name == "q8_0" and "faster" in rec.reason and "beyond noise" in rec.reason, rec
    first_five = [r.model_copy(update={"rounds_tpot_ms": r.rounds_tpot_ms[:5]}) for r in ranked]
    five, _, _ = recommend_llm(first_five, 0.95, "top1")
    assert five is not None and five.name == "fp32" and "tie" in five.reason, five  # what five rounds decided


def test_levels_that_do_not_lean_get_no_extra_rounds():
    from edgeopt.llm.sweep_rounds import ranking_rounds

    fp32 = _row("fp32", 1.0, 1.0, [])
    int4 = _row("int4", 0.96, 1.0, [], size=300)
    samples = ranking_rounds([fp32, int4], _leaning_measure({"fp32@onnxruntime_genai": [1.0] * 5,
                                                             "int4@onnxruntime_genai": [0.5] * 5}), 5)
    assert [len(v) for v in samples.values()] == [5, 5]
