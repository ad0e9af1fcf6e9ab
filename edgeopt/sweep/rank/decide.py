"""Latency rankings that survive noise: interleaved rounds, bootstrap intervals, and a conservative decision rule.

One measurement of ~1 s per level ranks levels by the load of the moment (the same config measured 68.5 and
56.2 ms in two sweeps of issue 14). Here the levels of one runtime are measured **round-robin**: every round runs
each level once for a few samples, in a balanced order, so slow phases of the machine hit every level.
A round's **median** is the unit of evidence (samples inside a round are autocorrelated; rounds much less so):

- a level's latency: the median of its round medians, with a percentile-bootstrap interval
  (:func:`edgeopt.history.stats.bootstrap_median`);
- a pair of levels: the per-round **paired** ratio ``b / a`` (same round, same machine state), its median and
  bootstrap interval; with fewer than :data:`MIN_PAIRED_ROUNDS` rounds the pooled samples' unpaired ratio
  (:func:`edgeopt.history.stats.bootstrap_median_ratio`).

The decision (:func:`decide`), in order (issue 21: a slower, less accurate level was once recommended):

1. a level is **beaten** when another is faster beyond the interval: the upper bound of the paired ratio
   ``faster / slower`` is below ``1 - tolerance`` *and* the two levels' own intervals do not overlap once the
   machine's speed of each round, common to every level in it, is divided out (:func:`machine_factors`,
   :func:`drift_out`; the rounds are blocks, the levels treatments). A "slower ... beyond noise" verdict thus
   rests on a difference outside every interval measured, and the machine's drift between rounds, which the
   interleaving exists to cancel, does not hide it: the raw intervals (:func:`level_stats`, what the table shows)
   span that drift, and requiring *them* apart (issue 32, session 13) called PP-OCRv4 det's plain INT8, 0.44-0.75x
   of FP32 in every one of 5 rounds, a tie on a 2-vCPU VM whose speed moved 2.3x between rounds (the sweep's INT8
   mix, 1.29x faster than FP32 re-measured together, had tied with it at 0.99 and 0.95). Without paired rounds
   (fewer than :data:`MIN_PAIRED_ROUNDS`, or unequal counts) the raw intervals are compared;
2. a level is **dominated** when another passing level has a lower median of round medians *and* a higher
   retention (by more than :data:`RETENTION_TIE`): slower and less accurate is never the answer, noise or not. A
   level that changes a negligible share of the model (``Candidate.negligible``) dominates nothing: its retention
   is the original model's, whatever the metric's noise says;
3. among the levels left (a **tie within noise**) :mod:`.ties` decides: a negligible change never wins, then the
   higher retention, then the artifact smaller by at least :data:`.ties.MIN_SIZE_GAIN` that is not slower at the
   tail (per-round p99, :func:`tail_ratio`), then the simpler one (what the caller ranks), then the name.

So two levels whose latencies and retentions are equal give the clearly smaller one every time, a truly faster
level still wins, and a level tied on speed but less accurate never does. The decision's ``reason`` names the rule
that decided (``rule``). Everything is deterministic given the seed (round order and bootstrap).

This module takes plain inputs (names, a ``measure`` callable, sample lists): no runner, no sweep context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...errors import InputError
from .round_stats import (
    LevelStats,
    Measure,
    PairRatio,
    RoundRobin,
    RoundSamples,
    drift_out,
    level_stats,
    machine_factors,
    pair_ratio,
    tail_ratio,
)
from .ties import MIN_SIZE_GAIN, TIE_RULES, TieFacts, tail_refusals, tie_order

DEFAULT_TOLERANCE = 0.03  # a speed-up under 3 % never outweighs a smaller or simpler artifact
# retentions closer than this count as equal (metric noise of a finite eval set), in dominance and in ties
RETENTION_TIE = 1e-4
# a tail is worse beyond noise when the paired per-round p99 ratio's lower bound exceeds 1 + this: a short round's
# p99 is nearly its maximum, one hiccup, so it needs a wider margin than the median's tolerance (at 3 %, two equal
# graphs on a loaded 2-core machine were told apart at the tail in about one ranking in fifteen)
TAIL_TOLERANCE = 0.10



@dataclass(frozen=True)
class Candidate:
    """A level the decision may pick: higher ``retention``, then a meaningfully smaller ``size_bytes``, then lower
    ``complexity`` win ties on speed; a higher ``retention`` with a lower median also rules a level out (dominance).
    A ``negligible`` level (it changes a negligible share of the model) loses every tie and dominates nothing."""

    name: str
    size_bytes: int
    complexity: int = 0
    retention: float = 1.0
    negligible: bool = False


@dataclass(frozen=True)
class Decision:
    """The chosen level, the levels nobody beat or dominated, and why each other level lost.

    Attributes:
        unbeaten: the levels left after rules 1 and 2 (a tie within noise), in tie-break order (winner first).
        beaten_by: level -> a level faster than it beyond noise (rule 1).
        dominated_by: level -> a level with a lower median and a higher retention (rule 2; beaten ones not listed).
        rule: the rule that decided: ``faster beyond noise``, ``dominated``, ``tie: negligible change``,
            ``tie: higher retention``, ``tie: smaller artifact``, ``tie: simpler``, ``tie: name`` or
            ``only candidate``.
        reason: one line naming the winner and the rule(s), e.g. ``bf16@openvino: int8-search@openvino is slower
            and less accurate (dominated)``.
    """

    winner: str
    unbeaten: tuple[str, ...]
    beaten_by: dict[str, str] = field(default_factory=dict)
    stats: dict[str, LevelStats] = field(default_factory=dict)
    dominated_by: dict[str, str] = field(default_factory=dict)
    rule: str = ""
    reason: str = ""
    tail_refused: tuple[str, ...] = ()  # tied levels meaningfully smaller than the winner but slower at the tail
    # rule 1's level intervals: the rounds with the machine's speed of each round divided out (:func:`drift_out`),
    # or the raw ones (``stats``) when the rounds are not paired; and those per-round factors (empty: not paired)
    compared: dict[str, LevelStats] = field(default_factory=dict)
    machine_factors: tuple[float, ...] = ()


@dataclass(frozen=True)
class _Boot:
    confidence: float
    resamples: int
    seed: int


def compared_stats(samples: RoundSamples, names: Sequence[str], *, confidence: float = 0.95, resamples: int = 2000,
                   seed: int = 0) -> tuple[dict[str, LevelStats], np.ndarray | None]:
    """Rule 1's level intervals of ``names`` and the rounds' machine factors: the rounds with each round's machine
    speed (:func:`machine_factors` over ``names``) divided out, or the raw rounds (factors None) when not paired."""
    mine = {n: samples[n] for n in names}
    factors = machine_factors(mine, names)
    unit = mine if factors is None else drift_out(mine, factors)
    return level_stats(unit, confidence=confidence, resamples=resamples, seed=seed), factors


def faster_beyond_noise(samples: RoundSamples, compared: Mapping[str, LevelStats], slow: str, fast: str, *,
                        tolerance: float = DEFAULT_TOLERANCE, confidence: float = 0.95, resamples: int = 2000,
                        seed: int = 0) -> bool:
    """Rule 1 for one pair: ``fast`` beats ``slow`` when their intervals in ``compared`` (:func:`compared_stats`)
    are apart and the paired ratio ``fast / slow`` is below ``1 - tolerance`` at its interval's upper bound."""
    if compared[slow].low_ms <= compared[fast].high_ms:  # the level intervals overlap: not beyond noise
        return False
    pr = pair_ratio(samples, slow, fast, confidence=confidence, resamples=resamples, seed=seed)
    return pr.high < 1 - tolerance


def _beaten(samples: RoundSamples, names: Sequence[str], stats: Mapping[str, LevelStats],
            compared: Mapping[str, LevelStats], tolerance: float, boot: _Boot) -> dict[str, str]:
    """Rule 1: level -> the fastest level faster than it beyond the paired interval and the level intervals of
    ``compared`` (the rounds with the machine's drift divided out, when paired)."""
    by_speed = sorted(names, key=lambda n: (stats[n].median_ms, n))
    beaten: dict[str, str] = {}
    for slow in names:
        for fast in by_speed:
            if fast == slow or stats[fast].median_ms >= stats[slow].median_ms:
                continue
            if faster_beyond_noise(samples, compared, slow, fast, tolerance=tolerance, confidence=boot.confidence,
                                   resamples=boot.resamples, seed=boot.seed):
                beaten[slow] = fast
                break
    return beaten


def decide(samples: RoundSamples, candidates: Sequence[Candidate], *, tolerance: float = DEFAULT_TOLERANCE,
           retention_tie: float = RETENTION_TIE, confidence: float = 0.95, resamples: int = 2000,
           seed: int = 0, min_size_gain: float = MIN_SIZE_GAIN, tail_tolerance: float = TAIL_TOLERANCE) -> Decision:
    """The level to recommend (module docstring): not beaten on speed, not dominated, then the tie-break.

    Args:
        samples: per-level round samples (:meth:`RoundRobin.run`, or rounds the agent measured).
        candidates: the levels eligible (e.g. those meeting the retention threshold), with retention, size,
            complexity and whether they change a negligible share of the model.
        tolerance: a level beats another only if ``faster / slower`` is below ``1 - tolerance`` at the interval's
            upper bound.
        retention_tie: retentions closer than this are equal (dominance and tie-break).
        confidence, resamples, seed: the bootstrap's.
        min_size_gain: the share by which an artifact must be smaller to win a tie on size.
        tail_tolerance: a smaller level is slower at the tail when its paired per-round p99 ratio's lower bound is
            above ``1 + tail_tolerance`` (:func:`tail_ratio`); then it does not win the tie on size.

    Raises:
        InputError: no candidates, a candidate without samples, or a tolerance outside [0, 1).
    """
    if not candidates:
        raise InputError("no candidate level to decide between; at least one level must meet the constraints")
    if not 0 <= tolerance < 1:
        raise InputError(f"tolerance {tolerance}: use a share in [0, 1), e.g. 0.03")
    names = [c.name for c in candidates]
    missing = [n for n in names if n not in samples]
    if missing:
        raise InputError(f"levels {', '.join(missing)} have no latency samples; measure them before deciding")
    boot = _Boot(confidence, resamples, seed)
    mine = {n: samples[n] for n in names}
    stats = level_stats(mine, confidence=confidence, resamples=resamples, seed=seed)
    compared, factors = compared_stats(mine, names, confidence=confidence, resamples=resamples, seed=seed)
    beaten = _beaten(samples, names, stats, compared, tolerance, boot)
    ret = {c.name: c.retention for c in candidates}
    dominated: dict[str, str] = {}
    by_speed = sorted((c for c in candidates if not c.negligible), key=lambda c: (stats[c.name].median_ms, c.name))
    for slow in (n for n in names if n not in beaten):
        for fast in by_speed:  # the fastest level that is also more accurate
            if stats[fast.name].median_ms < stats[slow].median_ms and fast.retention > ret[slow] + retention_tie:
                dominated[slow] = fast.name
                break
    # only a level with a lower median can beat or dominate another, so the fastest median is always left
    left = [n for n in names if n not in beaten and n not in dominated]
    tails: dict[tuple[str, str], bool] = {}

    def tail_worse(a: str, b: str) -> bool:
        if (a, b) not in tails:
            pr = tail_ratio(samples, b, a, confidence=confidence, resamples=resamples, seed=seed)
            tails[(a, b)] = pr is not None and pr.low > 1 + tail_tolerance
        return tails[(a, b)]

    facts = TieFacts(retention=ret, size_bytes={c.name: c.size_bytes for c in candidates},
                     complexity={c.name: c.complexity for c in candidates},
                     negligible={c.name: c.negligible for c in candidates}, tail_worse=tail_worse,
                     retention_tie=retention_tie, min_size_gain=min_size_gain)
    unbeaten, why = tie_order(left, facts)
    winner = unbeaten[0]
    refused = tuple(tail_refusals(winner, unbeaten[1:], facts))
    rule, reason = _explain(winner, unbeaten[1:], beaten, dominated, why.__getitem__)
    if refused:
        reason += (f"; {', '.join(refused)} {'is' if len(refused) == 1 else 'are'} smaller but slower at the tail "
                   "(p99) beyond noise")
    return Decision(winner=winner, unbeaten=unbeaten, beaten_by=beaten, stats=stats, dominated_by=dominated,
                    rule=rule, reason=reason, tail_refused=refused, compared=dict(compared),
                    machine_factors=() if factors is None else tuple(float(f) for f in factors))


def _explain(winner: str, tied: Sequence[str], beaten: Mapping[str, str], dominated: Mapping[str, str],
             tie_rule: Callable[[str], str]) -> tuple[str, str]:
    """(the deciding rule, one line naming it and every other level's fate)."""
    parts: list[str] = []
    rule = "only candidate"
    if tied:  # the closest contest decided: the weakest tie-break used against any tied level
        rule = max((tie_rule(o) for o in tied), key=TIE_RULES.index)
        parts.append(f"tie within noise with {', '.join(tied)}: {rule.removeprefix('tie: ')}")
    if dominated:
        rule = rule if tied else "dominated"
        parts.append(f"{', '.join(dominated)} {'is' if len(dominated) == 1 else 'are'} slower and less accurate "
                     "(dominated)")
    if beaten:
        rule = rule if (tied or dominated) else "faster beyond noise"
        mine = [s for s, f in beaten.items() if f == winner]
        if mine:
            parts.append(f"faster than {', '.join(mine)} beyond noise")
        parts.extend(f"{s} slower than {f} beyond noise" for s, f in beaten.items() if f != winner)
    return rule, f"{winner}: " + ("; ".join(parts) if parts else "the only candidate")


def compare_to(samples: RoundSamples, baseline: str, *, confidence: float = 0.95, resamples: int = 2000,
               seed: int = 0) -> dict[str, PairRatio]:
    """Every level's latency ratio to ``baseline`` (``level / baseline``; below 1: faster), with intervals."""
    return {n: pair_ratio(samples, baseline, n, confidence=confidence, resamples=resamples, seed=seed)
            for n in samples}


# Extra interleaved rounds a ranking may add, in batches, while a tie-break decides against a level its rounds say is
# faster (:func:`leaning`): on a VM whose speed drifts between seconds, five rounds sometimes leave a 1.4x difference
# inside the interval, and the answer then flips between sweeps (issue 21: fp16 vs int8-search on PP-OCRv4 det).
MAX_EXTRA_ROUNDS = 6
EXTRA_BATCH = 2


def leaning(samples: RoundSamples, decision: Decision, *, tolerance: float = DEFAULT_TOLERANCE) -> list[str]:
    """The tied levels the winner beat only by a tie-break although their paired rounds put them faster than it
    beyond ``tolerance`` (point estimate, not the interval): what more rounds can settle."""
    if not decision.rule.startswith("tie"):
        return []
    win = decision.winner
    return [o for o in decision.unbeaten[1:] if pair_ratio(samples, win, o).ratio < 1 - tolerance]


def decide_in_rounds(names: Sequence[str], measure: Measure, candidates: Sequence[Candidate], *, rounds: int,
                     samples_per_round: int, max_extra_rounds: int = MAX_EXTRA_ROUNDS,
                     tolerance: float = DEFAULT_TOLERANCE) -> tuple[dict[str, list[list[float]]], Decision]:
    """``rounds`` interleaved rounds and :func:`decide`; then, while the decision :func:`leaning` says a tie-break
    overruled a faster-looking level, :data:`EXTRA_BATCH` more rounds of every level (up to ``max_extra_rounds``)
    and decide again. The samples (all rounds) and the final decision."""
    samples = RoundRobin(rounds=rounds, samples_per_round=samples_per_round).run(names, measure)
    decision = decide(samples, candidates, tolerance=tolerance)
    added = 0
    while added < max_extra_rounds and leaning(samples, decision, tolerance=tolerance):
        batch = min(EXTRA_BATCH, max_extra_rounds - added)
        more = RoundRobin(rounds=batch, samples_per_round=samples_per_round, seed=1 + added).run(names, measure)
        for name in names:
            samples[name].extend(more[name])
        added += batch
        decision = decide(samples, candidates, tolerance=tolerance)
    return samples, decision
