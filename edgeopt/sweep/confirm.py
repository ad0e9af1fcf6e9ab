"""Every latency in the sweep's table measured in short interleaved rounds, or marked single-run.

With a served agent (:mod:`edgeopt.runners.served`) a level is not timed when it is built: its first measurement
is :data:`FIRST_ROUNDS` round-robin rounds over every level built since the last rounds (:class:`.rank.
decide.RoundRobin`: each round runs every level once, in a balanced order, so a slow phase of a shared VM
hits every level, not one), each run a third of the sweep's per-level settings (iterations, minimum duration), so the
pooled samples support the same percentiles a single run did (:mod:`.pooled`). Issue 21: one ~1 s first pass,
taken right after the level was built, read up to 66 % off the median of the rounds that later confirmed it, and
filled the table, the Pareto chart and the INT8 search until then. ``latency_ms`` is the median of the level's
round medians, with a bootstrap interval (:func:`.rank.round_stats.level_stats`); ``latency_ms_first_pass`` is that
same first measurement (later ranking rounds may refine ``latency_ms``).

A level that was timed once when built (an INT8 search trial adopted as a level, a low-precision level whose
precision the runtime reports only in a benchmark; every level without a served agent) keeps that run's p50 in
``latency_ms_first_pass``, marked ``single_run`` until its rounds: :data:`FIRST_ROUNDS` rounds with a served agent
(its single run not pooled); without one :data:`ROUNDS` rounds of :data:`RUN_S`, with the single run counting as
one more round (each fresh process would cost a start and a load per round). Each run's other-process CPU use
(the agent's ``cpu_during_timed``) is kept; a level whose median share reaches :data:`.measure.INTERFERENCE_PCT`
is flagged ``interference``.

A deferred level whose artifact computes the model's graph again (``no_change``) is not run: the rounds of the fp32
level on its runtime stand in for its own (:mod:`.same_graph`).

No host-side work overlaps these runs: the artifacts are built, hashed and evaluated before the first round.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..metrics.result import BenchResult
from ..settings import MeasureSettings
from .measure import Context, complete, interfered, others_cpu_pct, without_memory
from .pooled import pooled_bench
from .rank.round_stats import RoundRobin, level_stats
from .result import Level
from .same_graph import shown_as, stand_ins

FIRST_ROUNDS = 3  # a served sweep's interleaved rounds per level: three round medians, robust to one slow run
ROUNDS = 2  # without a served agent: with the level's single run, three round medians
RUN_S = 0.25  # minimum timed duration of a confirmation round's run, s
RUN_ITERATIONS = 5  # minimum timed inferences of a confirmation round's run
# Each round's run warms up as the first pass did (the sweep's warm-up count) and for at least RUN_WARMUP_S
# seconds: OpenVINO's bf16/AMX kernels read ~40 % slow after a 2-inference warm-up (quiet machine, PP-OCRv4 rec,
# docs/benchmarks.md "First-pass latencies"); a kept-loaded model is warm already, a reloaded one is not.
RUN_WARMUP_S = 0.2


def _name(lv: Level, index: int) -> str:
    return f"{lv.recipe}@{lv.runtime}#{index}"


def first_round_settings(measure: MeasureSettings, rounds: int) -> dict[str, Any]:
    """Run settings of a deferred level's round: ``1/rounds`` of the sweep's iterations and minimum duration (at
    least :data:`RUN_ITERATIONS` and :data:`RUN_S`), so its ``rounds`` runs pooled equal one first pass."""
    return {"iterations": max(RUN_ITERATIONS, math.ceil(measure.iterations / rounds)),
            "min_duration_s": max(RUN_S, measure.min_duration_s / rounds),
            "warmup_s": max(measure.warmup_s, RUN_WARMUP_S)}


@dataclass
class _Rounds:
    """The round runs of one call: per level its samples' CPU shares and (deferred levels) its benchmarks."""

    ctx: Context
    levels: Sequence[Level]
    todo: dict[str, int]
    deferred: set[str]
    rounds: int
    busy: dict[str, list[float]] = field(default_factory=dict)
    benches: dict[str, list[BenchResult]] = field(default_factory=dict)

    def measure(self, name: str, n: int) -> list[float]:
        lv = self.levels[self.todo[name]]
        settings = (first_round_settings(self.ctx.measure, self.rounds) if name in self.deferred else
                    {"iterations": n, "min_duration_s": RUN_S,
                     "warmup_s": max(self.ctx.measure.warmup_s, RUN_WARMUP_S)})
        bench = self.ctx.latency(Path(lv.artifact), lv.runtime, lv.details.get("runtime_options"), fresh=False,
                                 **settings)
        share = others_cpu_pct(bench)
        if share is not None:
            self.busy.setdefault(name, []).append(share)
        if name in self.deferred:
            self.benches.setdefault(name, []).append(bench)
        return list(bench.samples_ms or [bench.latency_ms.p50])


def confirm_levels(ctx: Context, levels: Sequence[Level], *, rounds: int | None = None,
                   deferred: Collection[int] = ()) -> list[Level]:
    """``levels`` with each unconfirmed one (``latency_confirm_rounds == 0``, artifact still on disk) measured in
    interleaved rounds; the others unchanged.

    Args:
        rounds: rounds per level (None: :data:`FIRST_ROUNDS` with a served agent, else :data:`ROUNDS`; 0: none,
            every timed level stays ``single_run``; a deferred level always gets its rounds).
        deferred: indices of levels built without a benchmark (``Context.level(defer=True)``): their rounds are
            their first measurement and fill their row (:func:`.measure.complete`).

    Raises:
        RunnerError: a device failure during a round (as in any benchmark).
    """
    todo = {_name(lv, i): i for i, lv in enumerate(levels)
            if lv.latency_confirm_rounds == 0 and Path(lv.artifact).is_file()}
    served = ctx.served is not None
    rounds = (FIRST_ROUNDS if served else ROUNDS) if rounds is None else rounds
    deferred_names = {n for n, i in todo.items() if i in deferred}
    if rounds < 1:
        todo = {n: i for n, i in todo.items() if n in deferred_names}
        rounds = FIRST_ROUNDS
    if not todo:
        return list(levels)
    same = stand_ins(levels, todo, deferred_names)  # no-change levels: the fp32 level's rounds stand in (.same_graph)
    timed = {n: i for n, i in todo.items() if n not in same}
    run = _Rounds(ctx, levels, timed, deferred_names, rounds)
    for name, i in timed.items():  # a fresh single run's share counts with its round
        busy = levels[i].host_cpu_busy_pct
        if not served and busy is not None:
            run.busy.setdefault(name, []).append(float(busy))
    samples = (RoundRobin(rounds=rounds, samples_per_round=RUN_ITERATIONS).run(list(timed), run.measure)
               if timed else {})
    out = list(levels)
    # these rounds: every level in them ran once in each, so their medians pair; without a served agent each
    # level's first "round" is its own single run, taken when it was built, so nothing pairs
    rounds_id = uuid.uuid4().hex[:12] if served else None
    for name, i in timed.items():
        lv = levels[i]
        if name in deferred_names:  # the rounds are its first measurement
            bench = without_memory(pooled_bench(run.benches[name], ctx.measure.percentile))
            lv = complete(lv, bench, fresh=False, agent=ctx.agent_label, first_pass=False)
            ctx.bench_results.append((lv, bench))
        elif not served:  # a fresh single run is one more round (its p50: that round's median)
            samples[name].insert(0, [lv.latency_ms_first_pass if lv.latency_ms_first_pass is not None
                                     else lv.latency_ms])
        out[i] = _confirmed(lv, samples[name], run.busy.get(name, []), rounds_id)
    for name, src in same.items():
        out[todo[name]] = shown_as(levels[todo[name]], out[src])
    return out


def _confirmed(lv: Level, rounds: list[list[float]], busy: Sequence[float], rounds_id: str | None) -> Level:
    """``lv`` with its latency from its round samples (first measurement: the rounds', unless it had a single run),
    its round medians under ``rounds_id`` (without a served agent the first is its single run's p50) and its
    CPU-share verdict."""
    st = level_stats({"x": rounds})["x"]
    share = round(float(np.median(busy)), 1) if busy else None
    return lv.model_copy(update={
        "latency_ms": round(st.median_ms, 6), "latency_ms_low": round(st.low_ms, 6),
        "latency_ms_high": round(st.high_ms, 6), "latency_confirm_rounds": st.rounds, "single_run": False,
        "confirm_round_medians_ms": [round(v, 6) for v in st.round_medians], "confirm_rounds_id": rounds_id,
        "latency_ms_first_pass": lv.latency_ms_first_pass if lv.latency_ms_first_pass is not None
        else round(st.median_ms, 6),
        "host_cpu_busy_pct": share, "interference": interfered(share)})
