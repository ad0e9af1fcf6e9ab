"""Latency rankings that survive noise: interleaved rounds, bootstrap intervals, and a conservative decision rule.

One measurement of ~1 s per level ranks levels by the load of the moment (the same config measured 68.5 and
56.2 ms in two sweeps of issue 14). Here the levels of one runtime are measured **round-robin**: every round runs
each level once for a few samples, in an order rotated each round, so slow phases of the machine hit every level.
A round's **median** is the unit of evidence (samples inside a round are autocorrelated; rounds much less so):

- a level's latency: the median of its round medians, with a percentile-bootstrap interval
  (:func:`edgeopt.history.stats.bootstrap_median`);
- a pair of levels: the per-round **paired** ratio ``b / a`` (same round, same machine state), its median and
  bootstrap interval; with fewer than :data:`MIN_PAIRED_ROUNDS` rounds the pooled samples' unpaired ratio
  (:func:`edgeopt.history.stats.bootstrap_median_ratio`).

The decision (:func:`decide`), in order (issue 21: a slower, less accurate level was once recommended):

1. a level is **beaten** when another is faster beyond the interval, i.e. the upper bound of ``faster / slower`` is
   below ``1 - tolerance``;
2. a level is **dominated** when another passing level has a lower median of round medians *and* a higher
   retention (by more than :data:`RETENTION_TIE`): slower and less accurate is never the answer, noise or not;
3. among the levels left (a **tie within noise**) the higher retention wins, then the smaller artifact, then the
   simpler one (what the caller ranks), then the name.

So two levels whose latencies and retentions are equal give the smaller one every time, a truly faster level still
wins, and a level tied on speed but less accurate never does. The decision's ``reason`` names the rule that decided
(``rule``). Everything is deterministic given the seed (round order and bootstrap).

This module takes plain inputs (names, a ``measure`` callable, sample lists): no runner, no sweep context.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..history.stats import bootstrap_median, bootstrap_median_ratio

MIN_PAIRED_ROUNDS = 3  # below this, per-round medians are too few for a paired interval
DEFAULT_TOLERANCE = 0.03  # a speed-up under 3 % never outweighs a smaller or simpler artifact
# retentions closer than this count as equal (metric noise of a finite eval set), in dominance and in ties
RETENTION_TIE = 1e-4

# samples[level] = one list of latencies (ms) per round, rounds in the order they ran
RoundSamples = Mapping[str, Sequence[Sequence[float]]]
Measure = Callable[[str, int], Sequence[float]]


@dataclass(frozen=True)
class RoundRobin:
    """Interleaved measurement plan: ``rounds`` rounds, each running every level for ``samples_per_round``.

    The first round's order is a seeded permutation of the names; each later round rotates it by one, so every
    level runs first, last and in between equally often.
    """

    rounds: int = 8
    samples_per_round: int = 20
    seed: int = 0

    def order(self, names: Sequence[str], round_index: int) -> list[str]:
        """The order of ``names`` in round ``round_index`` (deterministic given the seed)."""
        perm = [names[i] for i in np.random.default_rng(self.seed).permutation(len(names))]
        k = round_index % len(perm) if perm else 0
        return perm[k:] + perm[:k]

    def run(self, names: Sequence[str], measure: Measure) -> dict[str, list[list[float]]]:
        """Call ``measure(name, samples_per_round)`` round-robin; the latencies (ms) of each round per level.

        Raises:
            InputError: no names, a duplicate name, fewer than one round or sample, or an empty measurement.
        """
        if not names or len(set(names)) != len(names):
            raise InputError(f"levels {list(names)}: give one or more distinct names to rank")
        if self.rounds < 1 or self.samples_per_round < 1:
            raise InputError(f"rounds={self.rounds}, samples_per_round={self.samples_per_round}: use 1 or more")
        out: dict[str, list[list[float]]] = {n: [] for n in names}
        for r in range(self.rounds):
            for name in self.order(names, r):
                got = [float(v) for v in measure(name, self.samples_per_round)]
                if not got:
                    raise InputError(f"level {name}: the measurement of round {r} returned no latency")
                out[name].append(got)
        return out


@dataclass(frozen=True)
class LevelStats:
    """One level's latency: median of its round medians (ms) and the bootstrap interval of that median (below
    :data:`MIN_PAIRED_ROUNDS` rounds: of all its samples pooled, both)."""

    name: str
    median_ms: float
    low_ms: float
    high_ms: float
    rounds: int
    round_medians: tuple[float, ...]


@dataclass(frozen=True)
class PairRatio:
    """``b / a`` latency (below 1: ``b`` is faster), its interval, and whether the rounds were paired."""

    a: str
    b: str
    ratio: float
    low: float
    high: float
    paired: bool


@dataclass(frozen=True)
class Candidate:
    """A level the decision may pick: higher ``retention``, then smaller ``size_bytes``, then lower ``complexity``
    win ties on speed; a higher ``retention`` with a lower median also rules a level out (dominance)."""

    name: str
    size_bytes: int
    complexity: int = 0
    retention: float = 1.0


@dataclass(frozen=True)
class Decision:
    """The chosen level, the levels nobody beat or dominated, and why each other level lost.

    Attributes:
        unbeaten: the levels left after rules 1 and 2 (a tie within noise), in tie-break order (winner first).
        beaten_by: level -> a level faster than it beyond noise (rule 1).
        dominated_by: level -> a level with a lower median and a higher retention (rule 2; beaten ones not listed).
        rule: the rule that decided: ``faster beyond noise``, ``dominated``, ``tie: higher retention``,
            ``tie: smaller artifact``, ``tie: simpler``, ``tie: name`` or ``only candidate``.
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


def _round_medians(rounds: Sequence[Sequence[float]]) -> np.ndarray:
    return np.array([float(np.median(np.asarray(r, dtype=np.float64))) for r in rounds if len(r)])


def level_stats(samples: RoundSamples, *, confidence: float = 0.95, resamples: int = 2000,
                seed: int = 0) -> dict[str, LevelStats]:
    """Per level: the median of round medians and its bootstrap interval (pooled samples below 3 rounds).

    Raises:
        InputError: a level without any sample.
    """
    out: dict[str, LevelStats] = {}
    for name, rounds in samples.items():
        meds = _round_medians(rounds)
        if meds.size == 0:
            raise InputError(f"level {name}: no latency samples to rank")
        # below MIN_PAIRED_ROUNDS the interval is the pooled samples' and so is the median: the median of two
        # round medians (their mean) can lie outside the pooled median's interval when the rounds differ
        unit = meds if meds.size >= MIN_PAIRED_ROUNDS else np.concatenate([np.asarray(r, float) for r in rounds])
        _, low, high = bootstrap_median(unit, resamples=resamples, confidence=confidence, seed=seed)
        out[name] = LevelStats(name=name, median_ms=float(np.median(unit)), low_ms=low, high_ms=high,
                               rounds=int(meds.size), round_medians=tuple(float(v) for v in meds))
    return out


def pair_ratio(samples: RoundSamples, a: str, b: str, *, confidence: float = 0.95, resamples: int = 2000,
               seed: int = 0) -> PairRatio:
    """``b / a``: the median of per-round paired ratios and its interval (unpaired when rounds are too few).

    Raises:
        InputError: ``a`` or ``b`` has no samples.
    """
    for name in (a, b):
        if name not in samples or _round_medians(samples[name]).size == 0:
            raise InputError(f"level {name}: no latency samples to compare")
    ma, mb = _round_medians(samples[a]), _round_medians(samples[b])
    if ma.size == mb.size and ma.size >= MIN_PAIRED_ROUNDS and np.all(ma > 0):
        ratio, low, high = bootstrap_median(mb / ma, resamples=resamples, confidence=confidence, seed=seed)
        return PairRatio(a=a, b=b, ratio=ratio, low=low, high=high, paired=True)
    pa = np.concatenate([np.asarray(r, float) for r in samples[a]])
    pb = np.concatenate([np.asarray(r, float) for r in samples[b]])
    ratio, low, high = bootstrap_median_ratio(pa, pb, resamples=resamples, confidence=confidence, seed=seed)
    return PairRatio(a=a, b=b, ratio=ratio, low=low, high=high, paired=False)


def decide(samples: RoundSamples, candidates: Sequence[Candidate], *, tolerance: float = DEFAULT_TOLERANCE,
           retention_tie: float = RETENTION_TIE, confidence: float = 0.95, resamples: int = 2000,
           seed: int = 0) -> Decision:
    """The level to recommend (module docstring): not beaten on speed, not dominated, then the tie-break.

    Args:
        samples: per-level round samples (:meth:`RoundRobin.run`, or rounds the agent measured).
        candidates: the levels eligible (e.g. those meeting the retention threshold), with retention, size and
            complexity.
        tolerance: a level beats another only if ``faster / slower`` is below ``1 - tolerance`` at the interval's
            upper bound.
        retention_tie: retentions closer than this are equal (dominance and tie-break).
        confidence, resamples, seed: the bootstrap's.

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
    stats = level_stats({n: samples[n] for n in names}, confidence=confidence, resamples=resamples, seed=seed)
    by_speed = sorted(names, key=lambda n: (stats[n].median_ms, n))
    beaten: dict[str, str] = {}
    for slow in names:
        for fast in by_speed:
            if fast == slow or stats[fast].median_ms >= stats[slow].median_ms:
                continue
            pr = pair_ratio(samples, slow, fast, confidence=confidence, resamples=resamples, seed=seed)
            if pr.high < 1 - tolerance:
                beaten[slow] = fast
                break
    ret = {c.name: c.retention for c in candidates}
    dominated: dict[str, str] = {}
    for slow in (n for n in names if n not in beaten):
        for fast in by_speed:  # the fastest level that is also more accurate
            if stats[fast].median_ms < stats[slow].median_ms and ret[fast] > ret[slow] + retention_tie:
                dominated[slow] = fast
                break
    # only a level with a lower median can beat or dominate another, so the fastest median is always left
    left = [n for n in names if n not in beaten and n not in dominated]
    top = max(ret[n] for n in left)
    size = {c.name: c.size_bytes for c in candidates}
    simple = {c.name: c.complexity for c in candidates}
    unbeaten = tuple(sorted(left, key=lambda n: (ret[n] < top - retention_tie, size[n], simple[n], n)))
    winner = unbeaten[0]
    rule, reason = _explain(winner, unbeaten[1:], beaten, dominated,
                            lambda o: _tie_rule(winner, o, ret, size, simple, retention_tie))
    return Decision(winner=winner, unbeaten=unbeaten, beaten_by=beaten, stats=stats, dominated_by=dominated,
                    rule=rule, reason=reason)


_TIE_RULES = ("tie: higher retention", "tie: smaller artifact", "tie: simpler", "tie: name")


def _tie_rule(winner: str, other: str, ret: Mapping[str, float], size: Mapping[str, int],
              simple: Mapping[str, int], retention_tie: float) -> str:
    """Which tie-break put ``winner`` before ``other``."""
    if ret[winner] > ret[other] + retention_tie:
        return _TIE_RULES[0]
    if size[winner] != size[other]:
        return _TIE_RULES[1]
    return _TIE_RULES[2] if simple[winner] != simple[other] else _TIE_RULES[3]


def _explain(winner: str, tied: Sequence[str], beaten: Mapping[str, str], dominated: Mapping[str, str],
             tie_rule: Callable[[str], str]) -> tuple[str, str]:
    """(the deciding rule, one line naming it and every other level's fate)."""
    parts: list[str] = []
    rule = "only candidate"
    if tied:  # the closest contest decided: the weakest tie-break used against any tied level
        rule = max((tie_rule(o) for o in tied), key=_TIE_RULES.index)
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
