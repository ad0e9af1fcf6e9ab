"""The LLM sweep's recommendation and its Pareto chart (decode speed against retention).

Speed is the median per-output-token time: for a level ranked in the interleaved rounds, the median of its round
medians (what the decision compares), else its single bench cell's TPOT p50 (``rank_tokens_per_s`` = 1000 / it), whose
mean-based decode rate moves with every descheduled token on a busy machine. The frontier is drawn on the same
numbers the decision reads, so a recommendation is never off its own frontier.
Rule: among the passing levels (retention >= the threshold; each runtime's FP32 export is a level too, as the
ONNX sweep's ``fp32``: when no compressed level decodes faster, it is the honest answer), those on the frontier of
(decode time per token, retention); of those, the fastest decode. So the recommendation is never both slower and
less accurate than another passing level (the ONNX sweep's dominance rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..reports.charts.pareto import ParetoContext, ParetoPoint
from ..sweep.rank.decide import Candidate, decide
from ..sweep.rank.pareto import pareto_indices
from ..sweep.report import write_pareto
from .sweep_result import LlmRecommendation, LlmSweepLevel


def _timed(rows: Sequence[LlmSweepLevel]) -> list[LlmSweepLevel]:
    return [r for r in rows if r.tpot_ms_p50]


def _tpot_ms(row: LlmSweepLevel) -> float:
    """The median of the level's ranking-round medians when it was ranked in rounds, else its bench cell's p50."""
    rounds = [float(np.median(r)) for r in row.rounds_tpot_ms if len(r)]
    return float(np.median(rounds)) if rounds else float(row.tpot_ms_p50 or 0.0)


def _points(rows: Sequence[LlmSweepLevel]) -> list[tuple[float, float]]:
    return [(_tpot_ms(r), r.retention.retention) for r in rows]


def recommend_llm(rows: Sequence[LlmSweepLevel], min_retention: float, metric: str
                  ) -> tuple[LlmRecommendation | None, str | None, list[str]]:
    """(recommendation or None, the binding constraint when None, the frontier's ``name@runtime`` keys)."""
    timed = _timed(rows)
    front = [f"{timed[i].name}@{timed[i].runtime}" for i in pareto_indices(_points(timed))]
    passing = [r for r in timed if r.passed]
    if not passing:
        if not rows:
            return None, "no level was measured", front
        top = max(rows, key=lambda r: r.retention.retention)
        return None, (f"retention: the best level ({top.name}@{top.runtime}) keeps {top.retention.retention:.4f} "
                      f"({metric}) < --min-retention {min_retention}"), front
    decided = _decided_in_rounds(passing)
    if decided is not None:
        best, reason = decided
    else:
        on_front = [passing[i] for i in pareto_indices(_points(passing))]
        best = max(on_front, key=lambda r: (float(r.rank_tokens_per_s or 0.0), r.retention.retention))
        reason = (f"{best.name}@{best.runtime}: fastest decode (TPOT p50 {best.tpot_ms_p50:.3f} ms, "
                  f"{best.rank_tokens_per_s:.1f} tok/s) of the levels keeping {metric} retention >= "
                  f"{min_retention} (one bench cell each)")
    return LlmRecommendation(name=best.name, runtime=best.runtime, folder=best.folder,
                             retention=best.retention.retention,
                             decode_tokens_per_s=float(best.rank_tokens_per_s or 0.0), reason=reason), None, front


def llm_candidates(rows: Iterable[LlmSweepLevel]) -> list[Candidate]:
    """The levels as the one-pass sweep's decision sees them (``name@runtime``, size, retention): the same for the
    rounds that decide how many rounds to run (:mod:`.sweep_rounds`) and for the decision on them."""
    return [Candidate(name=f"{r.name}@{r.runtime}", size_bytes=r.size_bytes, retention=r.retention.retention)
            for r in rows]


def _decided_in_rounds(passing: Sequence[LlmSweepLevel]) -> tuple[LlmSweepLevel, str] | None:
    """The one-pass sweep's decision (:func:`edgeopt.sweep.rank.decide.decide`) on the levels' interleaved
    ranking rounds (``rounds_tpot_ms``), or None when fewer than two passing levels have rounds."""
    ranked = {f"{r.name}@{r.runtime}": r for r in passing if r.rounds_tpot_ms}
    if len(ranked) < 2:
        return None
    samples = {key: r.rounds_tpot_ms for key, r in ranked.items()}
    decision = decide(samples, llm_candidates(ranked.values()))
    rounds = min(len(r.rounds_tpot_ms) for r in ranked.values())
    stats = decision.stats.get(decision.winner)
    speed = f"TPOT {stats.median_ms:.3f} ms [{stats.low_ms:.3f}, {stats.high_ms:.3f}]; " if stats else ""
    return ranked[decision.winner], f"{decision.reason} ({speed}{rounds} interleaved rounds, rule: {decision.rule})"


def write_llm_plot(rows: Sequence[LlmSweepLevel], path: Path, min_retention: float,
                   rec: LlmRecommendation | None) -> Path:
    """Decode ms per token (the ranking rounds' median where the level was ranked, else TPOT p50: lower is faster)
    against retention, frontier and threshold."""
    timed = _timed(rows)
    points = [ParetoPoint(f"{r.name}@{r.runtime}", x, y, status="pass" if r.passed else "fail")
              for r, (x, y) in zip(timed, _points(timed), strict=True)]
    index = next((i for i, r in enumerate(timed) if rec and (r.name, r.runtime) == (rec.name, rec.runtime)), None)
    ctx = ParetoContext(x_label="decode ms/token (median of the ranking rounds, else TPOT p50)", x_unit="ms/token",
                        min_retention=min_retention, recommended=index)
    return write_pareto(points, ctx, "Pareto: decode speed vs retention", path)
