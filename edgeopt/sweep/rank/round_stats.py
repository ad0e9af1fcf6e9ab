"""The statistics of interleaved rounds, on plain sample lists: the round-robin plan, a level's latency (the
median of its round medians with a bootstrap interval), a pair's paired per-round ratio, the per-round tail ratio,
and each round's machine factor (the machine's speed in that round as every level saw it) with the rounds divided
by it. :mod:`.decide` turns them into a decision; the sweep's confirmation rounds, the LLM sweep's ranking rounds
and ``edgeopt profile``'s headline read them too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import InputError
from ...history.stats import bootstrap_median, bootstrap_median_ratio

MIN_PAIRED_ROUNDS = 3  # below this, per-round medians are too few for a paired interval
TAIL_PERCENTILE = 99.0  # the tail a smaller artifact must not be slower at to win a speed tie (per round)

# samples[level] = one list of latencies (ms) per round, rounds in the order they ran
RoundSamples = Mapping[str, Sequence[Sequence[float]]]
Measure = Callable[[str, int], Sequence[float]]


def williams_row(n: int) -> list[int]:
    """The first row of a Williams Latin square of ``n`` treatments: 0, 1, n-1, 2, n-2, ... Row ``r`` adds ``r``
    (mod ``n``) to every entry; for an even ``n`` the ``n`` rows put every treatment right after every other exactly
    once, for an odd ``n`` the rows and their reversals (``2n``) do so twice."""
    row, low, high = [0], 1, n - 1
    while len(row) < n:
        row.append(low)
        low += 1
        if len(row) < n:
            row.append(high)
            high -= 1
    return row


@dataclass(frozen=True)
class RoundRobin:
    """Interleaved measurement plan: ``rounds`` rounds, each running every level for ``samples_per_round``.

    Round ``r`` runs the levels in row ``r`` of a Williams Latin square (:func:`williams_row`) over a seeded
    permutation of the names: every level runs first, last and in between equally often, and every level runs right
    after every other equally often (even count: every ``n`` rounds; odd: every ``2n``, the rows then reversed). A
    level carries something over to the next one (ONNX Runtime's workers spin ~55 ms after a session's last
    inference, edgeopt_agent/quiet.py; caches; the scheduler): a plain rotation kept each level's predecessor the
    same in every round, so one level took that carry-over every time and the rounds' interleaving could not
    cancel it (issue 32: FP32 on ORT ran right after another ORT level in every ranking round and read as slow as
    FP16, 1.3x slower in fresh processes).
    """

    rounds: int = 8
    samples_per_round: int = 20
    seed: int = 0

    def order(self, names: Sequence[str], round_index: int) -> list[str]:
        """The order of ``names`` in round ``round_index`` (deterministic given the seed)."""
        perm = [names[i] for i in np.random.default_rng(self.seed).permutation(len(names))]
        n = len(perm)
        if n == 0:
            return []
        r = round_index % (n if n % 2 == 0 else 2 * n)
        row = [perm[(b + r) % n] for b in williams_row(n)]
        return row[::-1] if r >= n else row

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


def _round_tails(rounds: Sequence[Sequence[float]]) -> np.ndarray:
    return np.array([float(np.percentile(np.asarray(r, dtype=np.float64), TAIL_PERCENTILE)) for r in rounds
                     if len(r)])


def tail_ratio(samples: RoundSamples, a: str, b: str, *, confidence: float = 0.95, resamples: int = 2000,
               seed: int = 0) -> PairRatio | None:
    """``b / a`` at the tail: the median of the per-round paired ratios of each round's p99
    (:data:`TAIL_PERCENTILE`) and its bootstrap interval; None below :data:`MIN_PAIRED_ROUNDS` paired rounds (too
    few rounds to tell a tail from one hiccup)."""
    ta, tb = _round_tails(samples[a]), _round_tails(samples[b])
    if ta.size != tb.size or ta.size < MIN_PAIRED_ROUNDS or not np.all(ta > 0):
        return None
    ratio, low, high = bootstrap_median(tb / ta, resamples=resamples, confidence=confidence, seed=seed)
    return PairRatio(a=a, b=b, ratio=ratio, low=low, high=high, paired=True)


def machine_factors(samples: RoundSamples, names: Sequence[str]) -> np.ndarray | None:
    """Per round, the machine's speed in it relative to the other rounds, as every level measured in it saw it: the
    median over ``names`` of ``round median / the level's median of round medians`` (1: a typical round; 1.5: every
    level ran 1.5x slower). None when the rounds are not paired: fewer than two levels or
    :data:`MIN_PAIRED_ROUNDS` rounds, unequal round counts, an empty round or a non-positive latency."""
    if len(names) < 2 or any(not len(r) for n in names for r in samples[n]):
        return None
    meds = [_round_medians(samples[n]) for n in names]
    if len({m.size for m in meds}) != 1 or meds[0].size < MIN_PAIRED_ROUNDS or any(np.any(m <= 0) for m in meds):
        return None
    return np.median(np.array([m / np.median(m) for m in meds]), axis=0)


def drift_out(samples: RoundSamples, factors: np.ndarray) -> dict[str, list[list[float]]]:
    """``samples`` with each round's latencies divided by that round's machine factor (:func:`machine_factors`)."""
    return {n: [[float(v) / float(f) for v in r] for r, f in zip(rounds, factors, strict=True)]
            for n, rounds in samples.items()}
