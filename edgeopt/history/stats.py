"""Two-sample statistics for latency comparisons, in numpy alone (no scipy needed).

- :func:`mann_whitney_u`: the rank-sum test, normal approximation with tie correction and continuity correction
  (the same numbers as ``scipy.stats.mannwhitneyu(..., method="asymptotic")``). Latency distributions are skewed
  and long-tailed, so a rank test suits them better than a t-test.
- :func:`bootstrap_median_ratio`: a percentile bootstrap confidence interval on ``median(b) / median(a)``, the
  effect a reader cares about ("B is 7 % slower, 95 % CI 5-9 %").
- :func:`bootstrap_median`: the same interval on one sample's median (e.g. per-round medians, or per-round paired
  ratios of two interleaved configs).

Both treat their inputs as independent draws. Consecutive latencies are not: they drift together with the
thermal state, the clock and background load, so thousands of raw samples make any two runs "significantly"
different (two back-to-back runs of one model gave p=1e-163). :func:`block_medians` therefore reduces each run to
the medians of contiguous blocks of its samples first, and ``edgeopt.history.compare`` tests those: a shift must
hold across the blocks of a run, not only across its samples. Run-to-run variance (the next run starts in another
state) is taken from the history where it holds repeated runs (``noise_floor.noise_floors``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Bootstrap draws at most this many samples per side per resample; larger runs are subsampled first (without
# replacement), which widens the interval a little: conservative, and bounded in time and memory.
BOOTSTRAP_MAX_SAMPLES = 20_000
_CHUNK = 100


# Blocks per run for block medians: enough for the rank test to resolve p < 1e-6 (30 vs 30), few enough that each
# block spans a stretch of the run (its drift), not a handful of neighbouring samples.
MAX_BLOCKS = 30
MIN_BLOCKS = 10


def block_medians(samples: np.ndarray, blocks: int | None = None) -> np.ndarray:
    """Medians of ``blocks`` contiguous, nearly equal blocks of ``samples`` (in run order).

    Default: ``n // 10`` blocks, between 10 and 30 (never more than ``n``).
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    k = blocks or min(MAX_BLOCKS, max(MIN_BLOCKS, x.size // 10))
    k = max(1, min(k, x.size))
    return np.asarray([np.median(chunk) for chunk in np.array_split(x, k)], dtype=np.float64)


@dataclass(frozen=True)
class MannWhitney:
    """Result of :func:`mann_whitney_u`.

    Attributes:
        u: U statistic of the first sample (number of pairs where a > b, ties counting one half).
        z: standardised statistic (with tie and continuity corrections).
        p_value: two-sided p-value.
        prob_superiority: P(b > a) + P(b == a) / 2 over all pairs: 0.5 means no shift, 1.0 means every b is slower.
        rank_biserial: 2 x prob_superiority - 1, in [-1, 1]; positive when b tends to be larger (slower).
    """

    u: float
    z: float
    p_value: float
    prob_superiority: float
    rank_biserial: float


def rankdata(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``values`` and the sizes of its tie groups."""
    order = np.argsort(values, kind="mergesort")
    sorted_vals = values[order]
    # Boundaries of runs of equal values.
    starts = np.concatenate(([True], sorted_vals[1:] != sorted_vals[:-1]))
    group_start = np.flatnonzero(starts)
    group_size = np.diff(np.append(group_start, sorted_vals.size))
    avg_rank = group_start + (group_size + 1) / 2.0  # 1-based mean rank of each group
    ranks = np.empty(values.size, dtype=np.float64)
    ranks[order] = np.repeat(avg_rank, group_size)
    return ranks, group_size


def mann_whitney_u(a: np.ndarray, b: np.ndarray) -> MannWhitney:
    """Two-sided Mann-Whitney U test of ``a`` against ``b`` (normal approximation).

    Raises:
        ValueError: a sample is empty.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    n1, n2 = a.size, b.size
    if n1 == 0 or n2 == 0:
        raise ValueError("Mann-Whitney U needs two non-empty samples")
    ranks, ties = rankdata(np.concatenate((a, b)))
    n = n1 + n2
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    mu = n1 * n2 / 2.0
    tie_term = float(((ties.astype(np.float64) ** 3) - ties).sum())
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))) if n > 1 else 0.0
    prob_b_greater = 1.0 - u1 / (n1 * n2)
    if var <= 0:  # every value identical: no evidence of any shift
        return MannWhitney(u=u1, z=0.0, p_value=1.0, prob_superiority=prob_b_greater,
                           rank_biserial=2 * prob_b_greater - 1)
    u_big = max(u1, n1 * n2 - u1)
    z = (u_big - mu - 0.5) / math.sqrt(var)
    p = min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0)))
    signed_z = z if u1 < mu else -z  # positive when b is larger
    return MannWhitney(u=u1, z=signed_z, p_value=p, prob_superiority=prob_b_greater,
                       rank_biserial=2 * prob_b_greater - 1)


def _medians(rng: np.random.Generator, data: np.ndarray, count: int) -> np.ndarray:
    out = np.empty(count, dtype=np.float64)
    for start in range(0, count, _CHUNK):
        k = min(_CHUNK, count - start)
        idx = rng.integers(0, data.size, size=(k, data.size), dtype=np.int32)
        out[start:start + k] = np.median(data[idx], axis=1)
    return out


def bootstrap_median_ratio(
    a: np.ndarray, b: np.ndarray, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(ratio, low, high)``: ``median(b) / median(a)`` and its percentile-bootstrap confidence interval.

    Raises:
        ValueError: an empty sample, a non-positive median of ``a``, or ``confidence`` outside (0, 1).
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError("the bootstrap needs two non-empty samples")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    base = float(np.median(a))
    if base <= 0:
        raise ValueError(f"median of the first sample is {base}: a ratio needs a positive baseline")
    ratio = float(np.median(b)) / base
    rng = np.random.default_rng(seed)
    if a.size > BOOTSTRAP_MAX_SAMPLES:
        a = rng.choice(a, BOOTSTRAP_MAX_SAMPLES, replace=False)
    if b.size > BOOTSTRAP_MAX_SAMPLES:
        b = rng.choice(b, BOOTSTRAP_MAX_SAMPLES, replace=False)
    med_a = _medians(rng, a, resamples)
    med_b = _medians(rng, b, resamples)
    ratios = med_b / np.where(med_a > 0, med_a, np.nan)
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(ratios, [tail, 100 - tail])
    return ratio, float(low), float(high)


def bootstrap_median(
    values: np.ndarray, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(median, low, high)``: the median of ``values`` and its percentile-bootstrap confidence interval.

    Raises:
        ValueError: an empty sample or ``confidence`` outside (0, 1).
    """
    data = np.asarray(values, dtype=np.float64).ravel()
    if data.size == 0:
        raise ValueError("the bootstrap needs a non-empty sample")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    if data.size > BOOTSTRAP_MAX_SAMPLES:
        data = rng.choice(data, BOOTSTRAP_MAX_SAMPLES, replace=False)
    meds = _medians(rng, data, resamples)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(meds, [tail, 100 - tail])
    return float(np.median(np.asarray(values, dtype=np.float64))), float(low), float(high)
