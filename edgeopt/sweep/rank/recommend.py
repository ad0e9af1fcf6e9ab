"""The sweep's latency recommendation, decided on interleaved rounds instead of one ~1 s run per level.

After every level is measured, the passing levels that could win (the :data:`MAX_CANDIDATES` fastest by their
single benchmark, within :data:`WITHIN` of the fastest) are measured again round-robin (:class:`.decide.RoundRobin`:
:data:`ROUNDS` rounds, each level one short benchmark of :data:`RUN_S` per round, in a balanced order),
on every runtime together so one slow phase of the machine hits them all. A run warms up for 2 inferences, and
for at least :data:`.confirm.RUN_WARMUP_S` when its model is not kept loaded in the served agent any more (the
agent keeps 16; a sweep's levels and INT8 trials are more): a reloaded model then warms up as in the confirmation
rounds instead of being timed after 2 inferences (a kept one skips the time and runs 1 warm-up inference after its
untimed first one, edgeopt_agent/loaded.py ``REUSED_WARMUP``). Each
runtime's default level (the FP32 model at the runtime's defaults: its low-precision level such as OpenVINO's bf16,
else its fp32) is a candidate too when it passes within :data:`DEFAULT_WITHIN` of the fastest, so the answer is
never slower and less accurate than doing nothing. :func:`.decide.decide` picks: a level wins on speed only when
it is faster beyond the bootstrap interval of the paired per-round ratio (and by more than the tolerance) and
beyond the level intervals with each round's machine factor divided out; a level slower (median of rounds) and less
accurate than another is out (dominated); among the rest (a tie within noise, :mod:`.ties`) a level that changes a
negligible share of the model (:mod:`.negligible`) never wins, then the higher retention wins, then the artifact
smaller by at least :data:`.ties.MIN_SIZE_GAIN` and not slower at the tail, then the simpler one (fp32 < a
runtime's default low precision such as bf16 < a recipe < the INT8 search's mix < that mix with low-precision float
parts). Each ranked level keeps its median of round medians and its interval; the recommendation's ``reason``
names the rule that decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...registry import find_runtime
from ..confirm import RUN_WARMUP_S
from ..int8.precision import is_low_precision_mix
from ..measure import Context
from ..result import Level, Recommendation
from .decide import (
    DEFAULT_TOLERANCE,
    RETENTION_TIE,
    TAIL_TOLERANCE,
    Candidate,
    Decision,
    decide_in_rounds,
)
from .negligible import NEGLIGIBLE_SHARE
from .round_stats import TAIL_PERCENTILE
from .ties import MIN_SIZE_GAIN

ROUNDS = 5
RUN_S = 0.3
RUN_ITERATIONS = 10
MAX_CANDIDATES = 4
WITHIN = 1.5
# a runtime's default level is ranked when its single run is within this of the fastest (first runs can be 2x off)
DEFAULT_WITHIN = 2.5
_COMPLEXITY = {"fp32": 0, "int8-search": 3}
# a runtime's default low precision (its descriptor's ``low_precision_default``: OpenVINO's bf16)
_LOW_PRECISION = 1
_RECIPE = 2
_INT8_LOW = 4  # the INT8 search's mix with low-precision float parts (int8-search+bf16)


def complexity(lv: Level) -> int:
    """How simple the level is, for ties: fp32 0, its runtime's default low precision 1, a recipe 2, the INT8
    search 3, the INT8 search's mix with low-precision float parts 4."""
    if lv.recipe in _COMPLEXITY:
        return _COMPLEXITY[lv.recipe]
    if is_low_precision_mix(lv.recipe):
        return _INT8_LOW
    desc = find_runtime(lv.runtime)
    low = desc.low_precision_default if desc is not None else None
    return _LOW_PRECISION if low is not None and low.level == lv.recipe else _RECIPE


def level_name(lv: Level) -> str:
    """The level's name in the ranking: ``recipe@runtime``."""
    return f"{lv.recipe}@{lv.runtime}"


def runtime_defaults(levels: Sequence[Level]) -> list[Level]:
    """Per runtime, the FP32 model at the runtime's default settings: its low-precision level (OpenVINO's bf16 on
    CPUs with BF16) when the table has one, else its fp32 level."""
    out = []
    for rt in dict.fromkeys(lv.runtime for lv in levels):
        desc = find_runtime(rt)
        low = desc.low_precision_default if desc is not None else None
        mine = {lv.recipe: lv for lv in levels if lv.runtime == rt}
        pick = mine.get(low.level) if low is not None else None
        pick = pick or mine.get("fp32")
        if pick is not None:
            out.append(pick)
    return out


def candidates(levels: Sequence[Level]) -> list[Level]:
    """Passing levels that changed something (or are fp32 or a default low precision) and might win: the fastest few
    by their p50, plus each runtime's default level (:func:`runtime_defaults`) within :data:`DEFAULT_WITHIN`."""
    passing = sorted((lv for lv in levels if lv.passed and not lv.no_change), key=lambda lv: lv.latency_ms)
    if not passing:
        return []
    fastest = passing[0].latency_ms
    picked = [lv for lv in passing if lv.latency_ms <= fastest * WITHIN][:MAX_CANDIDATES]
    extra = [lv for lv in runtime_defaults(passing) if lv not in picked and lv.latency_ms <= fastest * DEFAULT_WITHIN]
    return sorted(picked + extra, key=lambda lv: lv.latency_ms)


def rank(ctx: Context, levels: list[Level]) -> tuple[list[Level], Recommendation | None, dict[str, Any] | None]:
    """Re-measure the candidates in interleaved rounds and decide; the levels with their intervals filled in.

    Returns:
        (levels, recommendation, ranking facts for ``sweep.json``); the recommendation is None (and the facts
        None) when fewer than two candidates pass (the caller's plain rule applies).
    """
    cands = candidates(levels)
    if len(cands) < 2:
        return levels, None, None
    by_name = {level_name(lv): lv for lv in cands}

    def measure(name: str, n: int) -> list[float]:
        lv = by_name[name]
        bench = ctx.latency(Path(lv.artifact), lv.runtime, lv.details.get("runtime_options"), iterations=n, fresh=False,
                            min_duration_s=RUN_S, warmup=2, warmup_s=max(ctx.measure.warmup_s, RUN_WARMUP_S))
        return list(bench.samples_ms or [bench.latency_ms.p50])

    pool = [Candidate(name=n, size_bytes=lv.size_bytes, complexity=complexity(lv), retention=lv.retention,
                      negligible=lv.negligible_change) for n, lv in by_name.items()]
    samples, decision = decide_in_rounds(list(by_name), measure, pool, rounds=ROUNDS,
                                         samples_per_round=RUN_ITERATIONS)
    out = []
    for lv in levels:
        st = decision.stats.get(level_name(lv)) if lv in cands else None
        out.append(lv if st is None else lv.model_copy(update={
            "latency_ms_round_median": round(st.median_ms, 6), "latency_ms_low": round(st.low_ms, 6),
            "latency_ms_high": round(st.high_ms, 6), "latency_rounds": st.rounds}))
    win = by_name[decision.winner]
    rec = Recommendation(recipe=win.recipe, runtime=win.runtime, artifact=win.artifact, retention=win.retention,
                         latency_ms=win.latency_ms, size_bytes=win.size_bytes, reason=decision.reason)
    done = len(samples[decision.winner])
    facts = {"rounds": done, "extra_rounds": done - ROUNDS, "run_s": RUN_S, "iterations_per_run": RUN_ITERATIONS,
             "tolerance": DEFAULT_TOLERANCE,
             "retention_tie": RETENTION_TIE, "confidence": 0.95, "candidates": list(by_name),
             "unbeaten": list(decision.unbeaten), "beaten_by": dict(decision.beaten_by),
             "dominated_by": dict(decision.dominated_by), "rule": decision.rule, "reason": decision.reason,
             "min_size_gain": MIN_SIZE_GAIN, "tail_percentile": TAIL_PERCENTILE, "tail_tolerance": TAIL_TOLERANCE,
             "negligible_share": NEGLIGIBLE_SHARE, "tail_refused": list(decision.tail_refused),
             "negligible": [n for n, lv in by_name.items() if lv.negligible_change],
             "machine_factors": [round(f, 4) for f in decision.machine_factors],
             "rounds_by_level": rounds_by_level(decision)}
    return out, rec, facts


def rounds_by_level(decision: Decision) -> list[dict[str, Any]]:
    """Per ranked level: its round medians (ms, in the order the rounds ran), its interval (what the table shows)
    and the interval rule 1 compared (``drift_out_*``: with each round's machine factor divided out; the same as the
    raw one when the rounds were not paired), so a tie or a verdict can be read back from ``sweep.json``."""
    out = []
    for name, st in decision.stats.items():
        cmp = decision.compared.get(name, st)
        out.append({"level": name, "round_medians_ms": [round(v, 4) for v in st.round_medians],
                    "low_ms": round(st.low_ms, 4), "high_ms": round(st.high_ms, 4),
                    "drift_out_low_ms": round(cmp.low_ms, 4), "drift_out_high_ms": round(cmp.high_ms, 4)})
    return out
