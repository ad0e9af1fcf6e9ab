"""``edgeopt compare`` of two LLM bench runs: per workload cell, TTFT, TPOT and decode tokens/s, noise-aware.

Cells are matched on their axes (prompt, gen, depth, batch, threads); each metric is judged by
:func:`~edgeopt.history.compare.compare_samples` on the cells' raw readings (TTFT: one per repetition; TPOT:
every token latency, in run order; decode rate: each repetition's time per output token, so "slower" means the
same for all three) with the same rule as a one-pass comparison: a significant rank test on block medians AND a
change beyond the tolerance and beyond the noise floor (the spread of the same cell's medians over repeated runs
of this model folder, device, runtime and workload in the history). B regresses when any metric of any cell does.
"""

from __future__ import annotations

from statistics import median

from pydantic import BaseModel, ConfigDict, Field

from ..bench.llm.raw_check import DEVICE_REPORTED
from ..bench.llm.result import LlmBenchResult, LlmCell
from ..errors import InputError, first_line
from .compare import (
    DEFAULT_ALPHA,
    DEFAULT_TOLERANCE_PCT,
    RunComparison,
    RunIdentity,
    Verdict,
    comparability_notes,
    compare,
    compare_samples,
)
from .records import RunRecord
from .store import HistoryError, HistoryStore

LLM_MIN_SAMPLES = 5  # per side; TTFT has one reading per repetition
METRICS = ("ttft_ms", "tpot_ms", "decode_tokens_per_s")


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


def cell_key(c: LlmCell) -> str:
    return f"p{c.prompt_tokens} g{c.gen_tokens} d{c.context_depth} b{c.batch} t{c.threads}"


def _series(c: LlmCell, metric: str) -> list[float]:
    """The readings a metric is judged on, as times (lower is better)."""
    if c.samples is None:
        return []
    if metric == "ttft_ms":
        return list(c.samples.ttft_ms)
    if metric == "tpot_ms":
        return list(c.samples.tpot_ms)
    return [1000.0 / v for v in c.samples.decode_tokens_per_s if v > 0]


def _metric(metric: str, a: LlmCell, b: LlmCell, floor: float | None, tolerance_pct: float,
            alpha: float) -> LlmMetricComparison:
    sa, sb = _series(a, metric), _series(b, metric)
    to_unit = (lambda ms: 1000.0 / ms) if metric == "decode_tokens_per_s" else (lambda ms: ms)
    med_a, med_b = (to_unit(median(s)) if s else 0.0 for s in (sa, sb))
    change = (med_b / med_a - 1.0) * 100.0 if med_a and med_b else 0.0
    broken = [f"run {side}: {'; '.join(c.invalid_reasons)}" for side, c in (("A", a), ("B", b))
              if any(r.startswith(DEVICE_REPORTED) for r in c.invalid_reasons)]
    if broken:  # numbers that cannot be true are no improvement and no regression
        return LlmMetricComparison(metric=metric, median_a=med_a, median_b=med_b, change_pct=0.0, verdict=None,
                                   regression=False, explanation=f"not judged: impossible readings ({broken[0]})")
    try:
        c = compare_samples(sa, sb, tolerance_pct=tolerance_pct, alpha=alpha, noise_floor_pct=floor,
                            noise_runs=2 if floor is not None else 0, min_samples=LLM_MIN_SAMPLES)
    except InputError as exc:
        return LlmMetricComparison(metric=metric, median_a=med_a, median_b=med_b, change_pct=change, verdict=None,
                                   regression=False, explanation=f"not judged: {exc}")
    return LlmMetricComparison(metric=metric, median_a=med_a, median_b=med_b, change_pct=change,
                               p_value=c.p_value, noise_floor_pct=floor, verdict=c.verdict,
                               regression=c.regression, explanation=c.explanation)


def _noise(store: HistoryStore, ref: RunRecord, exclude: tuple[int, ...]) -> dict[tuple[str, str], float]:
    """Per (cell, metric): the spread (max/min - 1, %) of the medians of repeated valid runs of ``ref``'s folder,
    device, runtime and workload in the history; only where at least two such runs exist."""
    medians: dict[tuple[str, str], list[float]] = {}
    for r in store.runs(model=ref.model_sha256, target=ref.device, limit=200):
        if r.id in exclude or not r.valid or r.runtime != ref.runtime or r.settings != ref.settings:
            continue
        try:
            other = store.llm_result(r.id)
        except (HistoryError, ValueError) as exc:  # a damaged row: left out of the floor, noted like _rows does
            note = first_line(exc, limit=300)
            if note not in store.skipped:
                store.skipped.append(note)
            continue
        for cell in other.cells if other is not None else []:
            for metric in METRICS:
                series = _series(cell, metric)
                if series:
                    medians.setdefault((cell_key(cell), metric), []).append(median(series))
    return {k: (max(v) / min(v) - 1.0) * 100.0 for k, v in medians.items() if len(v) >= 2 and min(v) > 0}


def compare_llm(store: HistoryStore, ra: RunRecord, a: LlmBenchResult, rb: RunRecord, b: LlmBenchResult, *,
                tolerance_pct: float, alpha: float, notes: list[str]) -> LlmRunComparison:
    """Compare LLM run ``rb`` (candidate) with ``ra`` (reference), cell by cell."""
    floors = _noise(store, ra, (rb.id,))
    cells_a, cells_b = {cell_key(c): c for c in a.cells}, {cell_key(c): c for c in b.cells}
    out = [LlmCellComparison(cell=k, metrics=[_metric(m, cells_a[k], cells_b[k], floors.get((k, m)), tolerance_pct,
                                                      alpha) for m in METRICS])
           for k in cells_a if k in cells_b]
    unmatched = sorted(set(cells_a) ^ set(cells_b))
    if not out:
        raise InputError(f"runs {ra.id} and {rb.id} share no workload cell (cells: {', '.join(cells_a)} vs "
                         f"{', '.join(cells_b)}): bench both with the same --prompt-tokens/--gen-tokens/...")
    return LlmRunComparison(run_a=ra.id, run_b=rb.id, model_a=ra.model_name, model_b=rb.model_name,
                            device_a=ra.device, device_b=rb.device, cells=out, unmatched=unmatched,
                            notes=[*notes, *(n for n in store.skipped if n not in notes)],  # rows left out
                            regression=any(m.regression for c in out for m in c.metrics))


def compare_runs(store: HistoryStore, run_a: int | str, run_b: int | str, *,
                 tolerance_pct: float = DEFAULT_TOLERANCE_PCT, alpha: float = DEFAULT_ALPHA,
                 ) -> RunComparison | LlmRunComparison:
    """``edgeopt compare``: two LLM bench runs cell by cell, any other two runs with :func:`compare`.

    Raises:
        HistoryError / InputError: as :func:`compare`; one LLM run against a one-pass run.
    """
    ra, rb = store.get(run_a), store.get(run_b)
    a, b = store.llm_result(ra.id), store.llm_result(rb.id)
    if a is None and b is None:
        return compare(store, ra.id, rb.id, tolerance_pct=tolerance_pct, alpha=alpha)
    if a is None or b is None:
        raise InputError(f"runs {ra.id} and {rb.id}: one is an LLM bench run and the other is not; compare two LLM "
                         "runs or two one-pass runs")
    return compare_llm(store, ra, a, rb, b, tolerance_pct=tolerance_pct, alpha=alpha,
                       notes=comparability_notes(RunIdentity.of(ra), RunIdentity.of(rb)))
