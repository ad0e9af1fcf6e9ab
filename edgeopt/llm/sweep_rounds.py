"""The LLM sweep's ranking in interleaved rounds (issue 30: what the LLM side lost by being apart).

Every level is first benched on one cell of a few repetitions (:mod:`.sweep`), which ranks levels by the load of
the moment. Here the levels that keep the threshold are then measured **round-robin**, each round one short
generation per level in a balanced order (:class:`edgeopt.sweep.rank.round_stats.RoundRobin`), and decided by the
one-pass sweep's rule (:func:`edgeopt.sweep.rank.decide.decide`: paired per-round TPOT ratios with bootstrap
intervals, "faster" only beyond them, dominance, the tie rules), so an LLM recommendation rests on a difference
outside the measured noise, as an image model's does. A level's rounds are kept in ``sweep.json``
(``rounds_tpot_ms``) and the recommendation is decided from them (:func:`.sweep_rank.recommend_llm`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..bench.llm import bench_llm
from ..bench.llm.workload import LlmWorkload
from ..errors import EdgeoptError, first_line
from ..runners import Runner
from ..sweep.rank.round_stats import RoundRobin
from .sweep_result import LlmSweepLevel

ROUNDS = 5  # interleaved rounds per level: five round medians, robust to one slow round
PROMPT_TOKENS = 16
TOKENS_PER_ROUND = 16  # token latencies per level per round (one generation of TOKENS_PER_ROUND + 1 tokens)


def rankable(rows: Sequence[LlmSweepLevel]) -> list[LlmSweepLevel]:
    """The levels the rounds rank: those that keep the threshold and were timed."""
    return [r for r in rows if r.passed and r.tpot_ms_p50]


def _measure(folders: dict[str, Path], threads: int, runner: Runner) -> Callable[[str, int], list[float]]:
    def measure(key: str, n: int) -> list[float]:
        workload = LlmWorkload(prompt_tokens=(PROMPT_TOKENS,), gen_tokens=(n + 1,), threads=(threads,),
                               repetitions=1, warmup=0, kv_probe=False)
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
    say(f"ranking {len(ranked)} levels in {rounds} interleaved rounds ({TOKENS_PER_ROUND} tokens each)")
    try:
        samples = RoundRobin(rounds=rounds, samples_per_round=TOKENS_PER_ROUND).run(
            list(folders), _measure(folders, threads, runner))
    except EdgeoptError as exc:
        warnings.append(f"ranking rounds not run ({first_line(exc)}): the recommendation rests on one bench cell "
                        "per level")
        return rows
    return [r.model_copy(update={"rounds_tpot_ms": samples[f"{r.name}@{r.runtime}"]})
            if f"{r.name}@{r.runtime}" in samples else r for r in rows]
