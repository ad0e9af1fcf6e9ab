"""Is run B slower than run A, or is the difference noise? A rank test plus an effect-size interval.

Rule: B is a **regression** when the Mann-Whitney U test on the runs' block medians (each run's samples split
into contiguous blocks: consecutive samples are not independent, so a shift must hold across a run's blocks) finds
the two different (``p < alpha``) AND B's median is slower than A's by more than ``tolerance_pct`` and than the
**noise floor**: the spread of the medians of repeated runs of the same model, device, runtime and settings in the
history, when it holds at least two (runs are not samples of one distribution; each starts in another state).
Significance alone is not enough: with thousands of samples a 0.5 % shift is "significant" yet irrelevant; size
alone is not enough: a short, noisy run can show a large median shift by chance. The bootstrap interval on the
median ratio says how sure the size is.

Runs are read as cells of metric series (:mod:`edgeopt.metrics.cells`) and judged per cell and metric, each with
its own noise floor (:mod:`.noise_floor`; what counts as the same setup: :mod:`.identity`), by one path:
:func:`judge_metric` (one metric of one shared cell) and :func:`judge_cells` (every sampled metric of every shared
cell). A one-pass run is one cell, judged on its kind's rank metric (latency) and reported as a
:class:`RunComparison` (:func:`compare`); runs of workload cells are reported per cell by :mod:`.llm_compare`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from statistics import median
from typing import ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..errors import InputError
from ..metrics.cells import MetricSeries, ResultCell
from ..registry import get_kind
from ..registry.kind_spec import MetricSpec
from .identity import RunIdentity, comparability_notes
from .noise_floor import judged, noise_floors
from .records import RunRecord
from .stats import block_medians, bootstrap_median_ratio, mann_whitney_u
from .store import HistoryStore

DEFAULT_TOLERANCE_PCT = 5.0
DEFAULT_ALPHA = 0.05
MIN_SAMPLES = 20


class Verdict(str, Enum):
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    WITHIN_TOLERANCE = "within_tolerance"  # significant, but smaller than the tolerance
    NO_CHANGE = "no_change"  # not significant: noise


class SampleComparison(BaseModel):
    """B (candidate) against A (reference) on raw latency samples."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_a: int
    n_b: int
    median_a_ms: float
    median_b_ms: float
    median_ratio: float = Field(description="median(B) / median(A); > 1 means B is slower.")
    ratio_ci_low: float = Field(description="Lower end of the bootstrap confidence interval of the ratio.")
    ratio_ci_high: float = Field(description="Upper end of the bootstrap confidence interval of the ratio.")
    confidence: float = Field(description="Confidence level of the interval (0.95).")
    change_pct: float = Field(description="(median_ratio - 1) x 100.")
    u_statistic: float = Field(description="Mann-Whitney U of A.")
    z: float = Field(description="Standardised U (positive when B is slower).")
    p_value: float = Field(description="Two-sided Mann-Whitney U p-value (normal approximation, tie-corrected).")
    effect_size: float = Field(description="P(B > A) + P(B = A)/2 over all sample pairs: 0.5 no shift, 1 B slower.")
    rank_biserial: float = Field(description="2 x effect_size - 1, in [-1, 1].")
    alpha: float
    tolerance_pct: float
    blocks_a: int = Field(0, description="Block medians of A the test and the interval used.")
    blocks_b: int = Field(0, description="Block medians of B the test and the interval used.")
    noise_floor_pct: float | None = Field(None, description="Spread of repeated runs' medians in the history, "
                                          "percent; a change within it is noise. None: no repeated runs.")
    noise_runs: int = Field(0, description="Repeated runs the noise floor comes from.")
    significant: bool
    regression: bool
    verdict: Verdict
    explanation: str


C = TypeVar("C", bound="KindComparison")


class KindComparison(BaseModel):
    """What every comparison of two stored runs carries besides its JSON: the runs' model kind, whose descriptor
    may name the function that prints it (``compare_render``), and its shape, whose renderer prints it otherwise
    (edgeopt/cli/history_render.py)."""

    shape: ClassVar[str]
    _model_kind: str = PrivateAttr(default="")

    @property
    def model_kind(self) -> str:
        """The registered kind of both runs ('' when built outside :func:`compare` / ``compare_runs``)."""
        return self._model_kind

    def of_kind(self: C, kind: str) -> C:
        """This comparison, marked as one of runs of ``kind`` (not part of its JSON)."""
        self._model_kind = kind
        return self


class RunComparison(SampleComparison, KindComparison):
    """A :class:`SampleComparison` of two stored runs, with what differs between them besides latency."""

    shape: ClassVar[str] = "compare"

    run_a: int
    run_b: int
    model_a: str
    model_b: str
    device_a: str
    device_b: str
    notes: list[str] = Field(description="Differences in model, device, runtime or settings worth knowing.")


def compare_samples(
    a_ms: np.ndarray | Sequence[float],
    b_ms: np.ndarray | Sequence[float],
    *,
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
    alpha: float = DEFAULT_ALPHA,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
    noise_floor_pct: float | None = None,
    noise_runs: int = 0,
    min_samples: int = MIN_SAMPLES,
) -> SampleComparison:
    """Compare latency samples ``b_ms`` (candidate) with ``a_ms`` (reference), each in run order.

    The test and the interval use per-block medians (:func:`~edgeopt.history.stats.block_medians`); a change must
    exceed both ``tolerance_pct`` and ``noise_floor_pct`` (run-to-run spread, :func:`~.noise_floor.noise_floor`) to
    count.

    Raises:
        InputError: fewer than ``MIN_SAMPLES`` samples on a side, or an out-of-range tolerance / alpha.
    """
    a = np.asarray(a_ms, dtype=np.float64).ravel()
    b = np.asarray(b_ms, dtype=np.float64).ravel()
    if a.size < min_samples or b.size < min_samples:
        raise InputError(f"compare needs at least {min_samples} raw samples per run (got {a.size} and {b.size}): "
                         "record longer runs")
    if tolerance_pct < 0:
        raise InputError(f"tolerance {tolerance_pct:g} %: use 0 or more, e.g. 5")
    if not 0 < alpha < 1:
        raise InputError(f"alpha {alpha:g}: use a significance level in (0, 1), e.g. 0.05")
    ba, bb = block_medians(a), block_medians(b)
    test = mann_whitney_u(ba, bb)
    ratio = float(np.median(b)) / float(np.median(a))
    _, low, high = bootstrap_median_ratio(ba, bb, resamples=resamples, confidence=confidence, seed=seed)
    low, high = min(low, ratio), max(high, ratio)
    change = (ratio - 1.0) * 100.0
    floor = max(tolerance_pct, noise_floor_pct or 0.0)
    significant = test.p_value < alpha
    if significant and abs(change) <= floor and noise_floor_pct is not None and noise_floor_pct > tolerance_pct:
        verdict = Verdict.NO_CHANGE
        why = (f"the median moved {change:+.1f} %, within the {noise_floor_pct:.1f} % spread of {noise_runs} "
               f"repeated runs of this model and settings in the history: run-to-run noise (p={test.p_value:.2g})")
    elif significant and change > tolerance_pct:
        verdict = Verdict.REGRESSION
        why = (f"B is {change:.1f} % slower at the median (CI {(low - 1) * 100:.1f}..{(high - 1) * 100:.1f} %), "
               f"beyond the {tolerance_pct:g} % tolerance, and the difference is significant (p={test.p_value:.2g})")
    elif significant and change < -tolerance_pct:
        verdict = Verdict.IMPROVEMENT
        why = f"B is {-change:.1f} % faster at the median and the difference is significant (p={test.p_value:.2g})"
    elif significant:
        verdict = Verdict.WITHIN_TOLERANCE
        why = (f"the distributions differ (p={test.p_value:.2g}) but the median moved {change:+.1f} %, within the "
               f"{tolerance_pct:g} % tolerance")
    else:
        verdict = Verdict.NO_CHANGE
        why = f"no significant difference (p={test.p_value:.2g} >= {alpha:g}); the median moved {change:+.1f} %"
    return SampleComparison(
        n_a=int(a.size), n_b=int(b.size),
        median_a_ms=float(np.median(a)), median_b_ms=float(np.median(b)),
        median_ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, confidence=confidence, change_pct=change,
        u_statistic=test.u, z=test.z, p_value=test.p_value, effect_size=test.prob_superiority,
        rank_biserial=test.rank_biserial, alpha=alpha, tolerance_pct=tolerance_pct, blocks_a=int(ba.size),
        blocks_b=int(bb.size), noise_floor_pct=noise_floor_pct, noise_runs=noise_runs, significant=significant,
        regression=verdict is Verdict.REGRESSION, verdict=verdict, explanation=why,
    )


def compare(
    store: HistoryStore,
    run_a: int | str,
    run_b: int | str,
    *,
    tolerance_pct: float = DEFAULT_TOLERANCE_PCT,
    alpha: float = DEFAULT_ALPHA,
) -> RunComparison:
    """Compare stored run ``run_b`` (candidate) with ``run_a`` (reference): ids, ``latest`` or baseline names.

    Raises:
        HistoryError: a run does not exist or kept no raw samples.
        InputError: too few samples, bad tolerance or alpha, a run of workload cells such as an LLM bench run
            (use ``compare_runs``).
    """
    ra, rb = store.get(run_a), store.get(run_b)
    if not (one_cell(store, ra) and one_cell(store, rb)):
        raise InputError(f"run {ra.id} or {rb.id} is an LLM bench run (workload cells): compare it with "
                         "edgeopt.history.compare_runs (per workload cell), as `edgeopt compare` does")
    kind = get_kind(store.kind_of(ra))
    spec = kind.metric(kind.rank_metric)
    floors = noise_floors(store, RunIdentity.of(ra, kind.name), exclude=(rb.id,))
    cell_a, cell_b = (ResultCell(key="", series=(MetricSeries(metric=spec.name, unit=spec.unit, readings=tuple(
        store.readings(r.id, spec.name).tolist())),)) for r in (ra, rb))  # readings checked against the bounds
    judgement = judge_metric(spec, cell_a, cell_b, floors.get(("", spec.name)), tolerance_pct=tolerance_pct,
                             alpha=alpha)
    if judgement.comparison is None:
        raise judgement.error or InputError(f"runs {ra.id} and {rb.id}: {judgement.reason}")
    result = judgement.comparison
    notes = comparability_notes(RunIdentity.of(ra), RunIdentity.of(rb))
    if not (ra.valid and rb.valid):
        notes.append("at least one run is marked invalid (too few samples for its percentile or truncated)")
    notes += store.skipped  # damaged rows left out of the noise floor
    return RunComparison(
        **result.model_dump(), run_a=ra.id, run_b=rb.id, model_a=ra.model_name, model_b=rb.model_name,
        device_a=ra.device, device_b=rb.device, notes=notes,
    ).of_kind(kind.name)


def one_cell(store: HistoryStore, record: RunRecord) -> bool:
    """Whether a run is one unkeyed cell (a one-pass benchmark), not workload cells (an LLM bench run)."""
    return [c.key for c in store.cells(record.id, metrics=())] == [""]


@dataclass(frozen=True)
class MetricJudgement:
    """One metric of one cell two runs share: its judged readings ("lower is better", :func:`judged`), and their
    comparison, or why they were not judged (``reason``; ``error`` when too few readings or a bad option)."""

    spec: MetricSpec
    a: list[float]
    b: list[float]
    noise_floor_pct: float | None
    comparison: SampleComparison | None = None
    reason: str | None = None
    error: InputError | None = None
    impossible: bool = False

    def medians(self) -> tuple[float, float, float]:
        """Median of A, of B, and the change in percent, in the metric's own unit (a rate: positive is faster)."""
        to_unit = (lambda t: 1000.0 / t) if self.spec.higher_is_better else (lambda t: t)
        med_a, med_b = (to_unit(median(v)) if v else 0.0 for v in (self.a, self.b))
        return med_a, med_b, (med_b / med_a - 1.0) * 100.0 if med_a and med_b else 0.0


def judge_metric(spec: MetricSpec, a: ResultCell, b: ResultCell, floor: tuple[float | None, int] | None, *,
                 tolerance_pct: float, alpha: float) -> MetricJudgement:
    """One metric of one cell of two runs, by :func:`compare_samples` on the judged readings with that cell's and
    metric's noise floor (``floor``: :func:`~.noise_floor.noise_floors`' entry); not judged when a cell holds
    impossible readings (no improvement and no regression) or too few."""
    empty = MetricSeries(metric=spec.name, unit=spec.unit)
    sa, sb = (judged(spec, c.series_of(spec.name) or empty) for c in (a, b))
    pct, runs = floor if floor is not None else (None, 0)
    broken = [f"run {side}: {'; '.join(c.impossible)}" for side, c in (("A", a), ("B", b)) if c.impossible]
    if broken:
        return MetricJudgement(spec, sa, sb, pct, reason=f"impossible readings ({broken[0]})", impossible=True)
    try:
        c = compare_samples(sa, sb, tolerance_pct=tolerance_pct, alpha=alpha, noise_floor_pct=pct, noise_runs=runs,
                            min_samples=spec.min_readings)
    except InputError as exc:
        return MetricJudgement(spec, sa, sb, pct, reason=str(exc), error=exc)
    return MetricJudgement(spec, sa, sb, pct, comparison=c)


@dataclass(frozen=True)
class CellsJudgement:
    """Every sampled metric of every cell two runs share, judged; the cells only one run has."""

    cells: list[tuple[str, list[MetricJudgement]]]
    unmatched: list[str]


def judge_cells(store: HistoryStore, ra: RunRecord, rb: RunRecord, *, tolerance_pct: float,
                alpha: float) -> CellsJudgement:
    """Run ``rb`` (candidate) against ``ra`` (reference), cell by cell (matched on their keys), on every sampled
    metric of their kind, each with its own noise floor.

    Raises:
        HistoryError: a run's cells cannot be read. InputError: the runs share no cell.
    """
    kind = store.kind_of(ra)
    specs = get_kind(kind).sampled_metrics()
    names = tuple(m.name for m in specs)
    floors = noise_floors(store, RunIdentity.of(ra, kind), exclude=(rb.id,))
    cells_a = {c.key: c for c in store.cells(ra.id, metrics=names)}
    cells_b = {c.key: c for c in store.cells(rb.id, metrics=names)}
    out = [(k, [judge_metric(m, cells_a[k], cells_b[k], floors.get((k, m.name)), tolerance_pct=tolerance_pct,
                             alpha=alpha) for m in specs]) for k in cells_a if k in cells_b]
    if not out:
        raise InputError(f"runs {ra.id} and {rb.id} share no workload cell (cells: {', '.join(cells_a)} vs "
                         f"{', '.join(cells_b)}): bench both with the same workload (--prompt-tokens/--gen-tokens/..., "
                         "or a plug-in kind's --workload)")
    return CellsJudgement(out, sorted(set(cells_a) ^ set(cells_b)))
