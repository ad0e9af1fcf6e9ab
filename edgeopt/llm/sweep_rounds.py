"""The LLM sweep's ranking in interleaved rounds (issue 30: what the LLM side lost by being apart).

Every level is first benched on one cell of a few repetitions (:mod:`.sweep`), which ranks levels by the load of
the moment. Here the levels that keep the threshold are then measured **round-robin**, each round an untimed
generation then timed ones (:func:`generations`: at least :data:`MIN_ROUND_MS` of decode) per level in a balanced
order (:class:`edgeopt.sweep.rank.round_stats.RoundRobin`), and decided by the
one-pass sweep's rule (:func:`edgeopt.sweep.rank.decide.decide`: paired per-round TPOT ratios with bootstrap
intervals, "faster" only beyond them, dominance, the tie rules), so an LLM recommendation rests on a difference
outside the measured noise, as an image model's does. The rounds are the image ranking's too
(:func:`edgeopt.sweep.rank.decide.decide_in_rounds`): while a tie-break overrules a level its rounds put faster,
more rounds of every level (at most :data:`edgeopt.sweep.rank.decide.MAX_EXTRA_ROUNDS`). Before session 19 the LLM
side ran five fixed rounds, and two sweeps of the zoo LLM on a Sapphire Rapids VM named f16@llama_cpp ("tie:
smaller artifact") and q8_0@llama_cpp ("tie: higher retention") at ~0.4 ms a token. A level's rounds are kept in
``sweep.json`` (``rounds_tpot_ms``) and the recommendation is decided from them (:func:`.sweep_rank.recommend_llm`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from ..bench.llm import bench_llm
from ..bench.llm.workload import LlmWorkload
from ..errors import EdgeoptError, first_line
from ..runners import Runner
from ..sweep.rank.decide import decide_in_rounds
from .sweep_rank import llm_candidates
from .sweep_result import LlmSweepLevel

ROUNDS = 5  # interleaved rounds per level: five round medians, robust to one slow round
PROMPT_TOKENS = 16
TOKENS_PER_ROUND = 16  # token latencies per generation (one generation of TOKENS_PER_ROUND + 1 tokens)
# A round times at least this much decode: 16 tokens of the zoo LLM (~0.35 ms each) were 6 ms, so one descheduled
# token moved a round's median, and two sweeps of the same levels named different winners "beyond noise" (issue 33).
MIN_ROUND_MS = 200.0
MAX_GENERATIONS = 16  # generations per level per round at most (the fastest levels)
WARMUP = 1  # untimed generations per round first: each round loads the level afresh (llama.cpp maps its weights)


def generations(tpot_ms: float | None) -> int:
    """Timed generations per round for a level whose bench cell decoded at ``tpot_ms`` per token: enough for
    :data:`MIN_ROUND_MS` of decode, from 1 (a level that slow times enough in one) to :data:`MAX_GENERATIONS`."""
    if not tpot_ms or tpot_ms <= 0:
        return 1
    return max(1, min(MAX_GENERATIONS, math.ceil(MIN_ROUND_MS / (TOKENS_PER_ROUND * tpot_ms))))


def rankable(rows: Sequence[LlmSweepLevel]) -> list[LlmSweepLevel]:
    """The levels the rounds rank: those that keep the threshold and were timed."""
    return [r for r in rows if r.passed and r.tpot_ms_p50]


def _measure(folders: dict[str, Path], reps: dict[str, int], threads: int, runner: Runner
             ) -> Callable[[str, int], list[float]]:
    def measure(key: str, n: int) -> list[float]:
        workload = LlmWorkload(prompt_tokens=(PROMPT_TOKENS,), gen_tokens=(n + 1,), threads=(threads,),
                               repetitions=reps[key], warmup=WARMUP, kv_probe=False)
        cell = bench_llm(folders[key], workload, runner=runner).cells[0]
        return list(cell.samples.tpot_ms) if cell.samples is not None else []
    return measure


def rank_in_rounds(rows: list[LlmSweepLevel], runner: Runner, *, threads: int, rounds: int = ROUNDS,
                   say: Callable[[str], None], warnings: list[str]) -> list[LlmSweepLevel]:
    """``rows`` with ``rounds_tpot_ms`` set on every rankable level after ``rounds`` interleaved rounds (nothing
    changes with fewer than two rankable levels: there is nothing to rank). A round that fails leaves every row
    as it was, with a line in ``warnings`` (the recommendation then rests on the single bench cells, as it says)."""
    ranked = rankable(rows)
    if len(ranked) < 2 or rounds < 1:
        return rows
    folders = {f"{r.name}@{r.runtime}": Path(r.folder) for r in ranked}
    reps = {f"{r.name}@{r.runtime}": generations(r.tpot_ms_p50) for r in ranked}
    say(f"ranking {len(ranked)} levels in {rounds} interleaved rounds (per level and round: {WARMUP} untimed "
        f"generation, then {min(reps.values())}-{max(reps.values())} of {TOKENS_PER_ROUND} timed tokens)")
    try:
        samples = ranking_rounds(ranked, _measure(folders, reps, threads, runner), rounds)
    except EdgeoptError as exc:
        warnings.append(f"ranking rounds not run ({first_line(exc)}): the recommendation rests on one bench cell "
                        "per level")
        return rows
    extra = min(len(v) for v in samples.values()) - rounds
    if extra > 0:
        say(f"{extra} more rounds: a tie-break overruled a level the rounds put faster")
    return [r.model_copy(update={"rounds_tpot_ms": samples[f"{r.name}@{r.runtime}"]})
            if f"{r.name}@{r.runtime}" in samples else r for r in rows]


def ranking_rounds(ranked: Sequence[LlmSweepLevel], measure: Callable[[str, int], list[float]], rounds: int
                   ) -> dict[str, list[list[float]]]:
    """Per ``name@runtime``: its TPOT samples per round, ``rounds`` interleaved rounds and the extra ones the
    one-pass sweep's ranking adds while the evidence leans (:func:`edgeopt.sweep.rank.decide.decide_in_rounds`)."""
    names = [f"{r.name}@{r.runtime}" for r in ranked]
    samples, _ = decide_in_rounds(names, measure, llm_candidates(ranked), rounds=rounds,
                                  samples_per_round=TOKENS_PER_ROUND)
    return samples
