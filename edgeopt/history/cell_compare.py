"""``edgeopt compare`` of two runs of workload cells (any kind whose runs hold keyed cells: the generative kind's
bench runs, a plug-in kind's): the ``llm_compare`` JSON (its name kept from the first kind that had cells), per
shared cell each sampled metric of the runs' kind (for an LLM: TTFT, TPOT, decode tokens/s), and ``edgeopt
compare``'s kind-neutral entry, the dispatch between it and a one-pass comparison (:func:`compare_runs`).

The judging is the one-pass comparison's own path (:func:`~edgeopt.history.compare.judge_cells`: cells matched on
their keys, each metric by :func:`~edgeopt.history.compare.compare_samples` on the cells' raw readings, in "lower is
better" form, with that cell's and metric's noise floor); this module only renders it: per metric the medians and
the change in the metric's own unit (decode tokens/s: positive is faster), the verdict or why it was not judged.
B regresses when any metric of any cell does.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..registry import get_kind
from .compare import (
    DEFAULT_ALPHA,
    DEFAULT_TOLERANCE_PCT,
    KindComparison,
    MetricJudgement,
    RunComparison,
    Verdict,
    compare,
    judge_cells,
    one_cell,
)
from .identity import RunIdentity, comparability_notes
from .records import RunRecord
from .store import HistoryStore

__all__ = ["CellComparison", "CellMetricComparison", "CellRunComparison", "compare_cells", "compare_runs",
           "metric_row"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CellMetricComparison(_Frozen):
    metric: str = Field(description="A sampled metric of the runs' kind (ttft_ms, tpot_ms, decode_tokens_per_s, ...).")
    median_a: float
    median_b: float
    change_pct: float = Field(description="(median B / median A - 1) x 100 in the metric's own unit (decode "
                              "tokens/s: positive is faster).")
    p_value: float | None = None
    noise_floor_pct: float | None = None
    verdict: Verdict | None = Field(description="None: too few readings to judge (the reason in explanation).")
    regression: bool
    explanation: str


class CellComparison(_Frozen):
    cell: str = Field(description="The cell's key (an LLM's prompt/gen/depth/batch/threads: 'p128 g128 d0 b1 t0').")
    metrics: list[CellMetricComparison]


class CellRunComparison(_Frozen, KindComparison):
    shape: ClassVar[str] = "llm_compare"

    kind: str = "llm_compare"
    run_a: int
    run_b: int
    model_a: str
    model_b: str
    device_a: str
    device_b: str
    cells: list[CellComparison]
    unmatched: list[str] = Field(default_factory=list, description="Cells in one run only (not compared).")
    notes: list[str] = Field(default_factory=list)
    regression: bool


def metric_row(j: MetricJudgement) -> CellMetricComparison:
    """One metric of one cell as this JSON reports it: medians and change in the metric's own unit."""
    med_a, med_b, change = j.medians()
    if j.comparison is None:  # impossible readings: no change is reported; too few: the medians' change
        return CellMetricComparison(metric=j.spec.name, median_a=med_a, median_b=med_b,
                                   change_pct=0.0 if j.impossible else change, verdict=None, regression=False,
                                   explanation=f"not judged: {j.reason}")
    c = j.comparison
    return CellMetricComparison(metric=j.spec.name, median_a=med_a, median_b=med_b, change_pct=change,
                               p_value=c.p_value, noise_floor_pct=j.noise_floor_pct, verdict=c.verdict,
                               regression=c.regression, explanation=c.explanation)


def compare_cells(store: HistoryStore, ra: RunRecord, rb: RunRecord, *, tolerance_pct: float, alpha: float,
                  notes: list[str]) -> CellRunComparison:
    """Compare run ``rb`` (candidate) with ``ra`` (reference), cell by cell, on every sampled metric of their kind
    (:func:`~edgeopt.history.compare.judge_cells`), as this JSON reports it.

    Raises:
        HistoryError: a run's cells cannot be read. InputError: the runs share no cell.
    """
    judged_cells = judge_cells(store, ra, rb, tolerance_pct=tolerance_pct, alpha=alpha)
    kind = store.kind_of(ra)
    out = [CellComparison(cell=k, metrics=[metric_row(j) for j in metrics]) for k, metrics in judged_cells.cells]
    return CellRunComparison(run_a=ra.id, run_b=rb.id, model_a=ra.model_name, model_b=rb.model_name,
                            device_a=ra.device, device_b=rb.device, cells=out, unmatched=judged_cells.unmatched,
                            notes=[*notes, *(n for n in store.skipped if n not in notes)],  # rows left out
                            regression=any(m.regression for c in out for m in c.metrics)).of_kind(kind)


def compare_runs(store: HistoryStore, run_a: int | str, run_b: int | str, *,
                 tolerance_pct: float = DEFAULT_TOLERANCE_PCT, alpha: float = DEFAULT_ALPHA,
                 ) -> RunComparison | CellRunComparison:
    """``edgeopt compare``: two one-pass runs (one cell each) with :func:`compare`, two runs of workload cells
    (the generative kind's bench runs, a plug-in kind's keyed cells) cell by cell with :func:`compare_cells`.

    Raises:
        HistoryError / InputError: as :func:`compare`; runs of two kinds of model (an LLM run and a one-pass run,
            each named by its kind's ``run_word``).

    Runs of a plug-in kind (the generic engine) take the per-cell path too when their cells are keyed (one unkeyed
    cell: :func:`compare` on the kind's rank metric).
    """
    ra, rb = store.get(run_a), store.get(run_b)
    ka, kb = store.kind_of(ra), store.kind_of(rb)
    if ka != kb:
        raise InputError(f"runs {ra.id} and {rb.id}: one is {get_kind(ka).run_text} and the other is "
                         f"{get_kind(kb).run_text} ({ka} vs {kb} model); compare two runs of one kind")
    if one_cell(store, ra) and one_cell(store, rb):
        return compare(store, ra.id, rb.id, tolerance_pct=tolerance_pct, alpha=alpha)
    return compare_cells(store, ra, rb, tolerance_pct=tolerance_pct, alpha=alpha,
                         notes=comparability_notes(RunIdentity.of(ra), RunIdentity.of(rb)))
