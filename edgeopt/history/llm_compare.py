"""``edgeopt compare`` of two runs of workload cells (LLM bench runs): per shared cell, each sampled metric of the
runs' kind (TTFT, TPOT, decode tokens/s), noise-aware, in the same generic path as a one-pass comparison.

Cells are matched on their keys (prompt, gen, depth, batch, threads); each metric is judged by
:func:`~edgeopt.history.compare.compare_samples` on the cells' raw readings as stored in the history's cells tables
(TTFT: one per repetition; TPOT: every token latency, in run order; decode rate: each repetition's rate as time per
1000 tokens, so "slower" means the same for all three: :func:`~edgeopt.history.compare.judged`) with the same rule
as a one-pass comparison: a significant rank test on block medians AND a change beyond the tolerance and beyond the
noise floor (the spread of the same cell's metric over repeated runs of this model, device, runtime and settings in
the history: :func:`~edgeopt.history.compare.noise_floors`). B regresses when any metric of any cell does.
"""

from __future__ import annotations

from statistics import median

from pydantic import BaseModel, ConfigDict, Field

from ..bench.llm.cells import cell_key
from ..errors import InputError
from ..metrics.cells import MetricSeries, ResultCell
from ..registry import get_kind
from ..registry.kind_spec import MetricSpec
from .compare import (
    DEFAULT_ALPHA,
    DEFAULT_TOLERANCE_PCT,
    RunComparison,
    RunIdentity,
    Verdict,
    comparability_notes,
    compare,
    compare_samples,
    judged,
    noise_floors,
    one_cell,
)
from .records import RunRecord
from .store import HistoryStore

__all__ = ["LlmCellComparison", "LlmMetricComparison", "LlmRunComparison", "cell_key", "compare_cells",
           "compare_runs"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LlmMetricComparison(_Frozen):
    metric: str = Field(description="ttft_ms, tpot_ms or decode_tokens_per_s.")
    median_a: float
    median_b: float
    change_pct: float = Field(description="(median B / median A - 1) x 100 in the metric's own unit (decode "
                              "tokens/s: positive is faster).")
    p_value: float | None = None
    noise_floor_pct: float | None = None
    verdict: Verdict | None = Field(description="None: too few readings to judge (the reason in explanation).")
    regression: bool
    explanation: str


class LlmCellComparison(_Frozen):
    cell: str = Field(description="prompt/gen/depth/batch/threads, e.g. 'p128 g128 d0 b1 t0'.")
    metrics: list[LlmMetricComparison]


class LlmRunComparison(_Frozen):
    kind: str = "llm_compare"
    run_a: int
    run_b: int
    model_a: str
    model_b: str
    device_a: str
    device_b: str
    cells: list[LlmCellComparison]
    unmatched: list[str] = Field(default_factory=list, description="Cells in one run only (not compared).")
    notes: list[str] = Field(default_factory=list)
    regression: bool


def judge_metric(spec: MetricSpec, a: ResultCell, b: ResultCell, floor: tuple[float | None, int] | None,
                 tolerance_pct: float, alpha: float) -> LlmMetricComparison:
    """One metric of one cell of two runs: the comparison, or why it is not judged (impossible readings, too few)."""
    empty = MetricSeries(metric=spec.name, unit=spec.unit)
    sa, sb = (judged(spec, c.series_of(spec.name) or empty) for c in (a, b))
    to_unit = (lambda t: 1000.0 / t) if spec.higher_is_better else (lambda t: t)
    med_a, med_b = (to_unit(median(s)) if s else 0.0 for s in (sa, sb))
    change = (med_b / med_a - 1.0) * 100.0 if med_a and med_b else 0.0
    broken = [f"run {side}: {'; '.join(c.impossible)}" for side, c in (("A", a), ("B", b)) if c.impossible]
    if broken:  # numbers that cannot be true are no improvement and no regression
        return LlmMetricComparison(metric=spec.name, median_a=med_a, median_b=med_b, change_pct=0.0, verdict=None,
                                   regression=False, explanation=f"not judged: impossible readings ({broken[0]})")
    pct, runs = floor if floor is not None else (None, 0)
    try:
        c = compare_samples(sa, sb, tolerance_pct=tolerance_pct, alpha=alpha, noise_floor_pct=pct,
                            noise_runs=runs, min_samples=spec.min_readings)
    except InputError as exc:
        return LlmMetricComparison(metric=spec.name, median_a=med_a, median_b=med_b, change_pct=change, verdict=None,
                                   regression=False, explanation=f"not judged: {exc}")
    return LlmMetricComparison(metric=spec.name, median_a=med_a, median_b=med_b, change_pct=change,
                               p_value=c.p_value, noise_floor_pct=pct, verdict=c.verdict,
                               regression=c.regression, explanation=c.explanation)


def compare_cells(store: HistoryStore, ra: RunRecord, rb: RunRecord, *, tolerance_pct: float, alpha: float,
                  notes: list[str]) -> LlmRunComparison:
    """Compare run ``rb`` (candidate) with ``ra`` (reference), cell by cell, on every sampled metric of their kind.

    Raises:
        HistoryError: a run's cells cannot be read. InputError: the runs share no cell.
    """
    specs = get_kind(store.kind_of(ra)).sampled_metrics()
    names = tuple(m.name for m in specs)
    floors = noise_floors(store, RunIdentity.of(ra), exclude=(rb.id,))
    cells_a = {c.key: c for c in store.cells(ra.id, metrics=names)}
    cells_b = {c.key: c for c in store.cells(rb.id, metrics=names)}
    out = [LlmCellComparison(cell=k, metrics=[judge_metric(m, cells_a[k], cells_b[k], floors.get((k, m.name)),
                                                           tolerance_pct, alpha) for m in specs])
           for k in cells_a if k in cells_b]
    unmatched = sorted(set(cells_a) ^ set(cells_b))
    if not out:
        raise InputError(f"runs {ra.id} and {rb.id} share no workload cell (cells: {', '.join(cells_a)} vs "
                         f"{', '.join(cells_b)}): bench both with the same workload (--prompt-tokens/--gen-tokens/..., "
                         "or a plug-in kind's --workload)")
    return LlmRunComparison(run_a=ra.id, run_b=rb.id, model_a=ra.model_name, model_b=rb.model_name,
                            device_a=ra.device, device_b=rb.device, cells=out, unmatched=unmatched,
                            notes=[*notes, *(n for n in store.skipped if n not in notes)],  # rows left out
                            regression=any(m.regression for c in out for m in c.metrics))


def compare_runs(store: HistoryStore, run_a: int | str, run_b: int | str, *,
                 tolerance_pct: float = DEFAULT_TOLERANCE_PCT, alpha: float = DEFAULT_ALPHA,
                 ) -> RunComparison | LlmRunComparison:
    """``edgeopt compare``: two one-pass runs (one cell each) with :func:`compare`, two runs of workload cells
    (LLM bench runs) cell by cell with :func:`compare_cells`.

    Raises:
        HistoryError / InputError: as :func:`compare`; runs of two kinds of model (an LLM run and a one-pass run).

    Runs of a plug-in kind (the generic engine) take the per-cell path too when their cells are keyed (one unkeyed
    cell: :func:`compare` on the kind's rank metric).
    """
    ra, rb = store.get(run_a), store.get(run_b)
    ka, kb = store.kind_of(ra), store.kind_of(rb)
    if ka != kb:
        raise InputError(f"runs {ra.id} and {rb.id}: one is an LLM bench run and the other is not ({ka} vs {kb} "
                         "model); compare two LLM runs or two one-pass runs")
    if one_cell(store, ra) and one_cell(store, rb):
        return compare(store, ra.id, rb.id, tolerance_pct=tolerance_pct, alpha=alpha)
    return compare_cells(store, ra, rb, tolerance_pct=tolerance_pct, alpha=alpha,
                         notes=comparability_notes(RunIdentity.of(ra), RunIdentity.of(rb)))
