"""Every latency in the sweep's table confirmed in short interleaved rounds, or marked single-run.

A level's first benchmark is one ~1 s run taken right after its artifact was built and evaluated: whatever else the
machine does in that second (another process, a slow phase of a shared VM) goes into that level's number alone,
which then fills the table, the Pareto chart and the recommendation (issue 21: 66.6 ms in one sweep, 35.0 ms in the
next, for the same level). Here every kept level is measured again after all of them are built, in
:data:`ROUNDS` round-robin rounds (:class:`.ranking.RoundRobin`: each round runs every level once, the order
rotated every round, so a slow phase hits every level, not one), each run a short benchmark of :data:`RUN_S`.
The first run counts as one more round (its p50 as that round's median; with a served agent it ran in the same
process as the rounds, :mod:`.memory_probe`; a third interleaved round would cost a third more): ``latency_ms`` becomes
the median of the level's round medians, so one disturbed run of three (the first pass or a round) cannot move it,
with a bootstrap interval (:func:`.ranking.level_stats`); the first run's p50 stays in ``latency_ms_first_pass``.
Each run's other-process CPU use (the agent's ``cpu_during_timed``) is kept; a level whose median share reaches
:data:`.measure.INTERFERENCE_PCT` is flagged ``interference``.

No host-side work overlaps these runs: the artifacts are built, hashed and evaluated before the first round.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .measure import Context, interfered, others_cpu_pct
from .ranking import RoundRobin, level_stats
from .result import Level

ROUNDS = 2  # interleaved rounds; with the first pass, three round medians: robust to one disturbed run
RUN_S = 0.25  # minimum timed duration of each round's run, s
RUN_ITERATIONS = 5  # minimum timed inferences of each round's run
# Each round's run loads the model afresh, so it warms up as the first pass did (the sweep's warm-up count) and for
# at least RUN_WARMUP_S seconds: OpenVINO's bf16/AMX kernels read ~40 % slow after a 2-inference warm-up (quiet
# machine, PP-OCRv4 rec, docs/benchmarks.md "First-pass latencies").
RUN_WARMUP_S = 0.2


def _name(lv: Level, index: int) -> str:
    return f"{lv.recipe}@{lv.runtime}#{index}"


def confirm_levels(ctx: Context, levels: Sequence[Level], *, rounds: int | None = None) -> list[Level]:
    """``levels`` with each unconfirmed one (``latency_confirm_rounds == 0``, artifact still on disk) re-measured in
    ``rounds`` interleaved rounds (None: :data:`ROUNDS`; 0: none, every level stays ``single_run``); the others
    unchanged.

    Raises:
        RunnerError: a device failure during a round (as in any benchmark).
    """
    todo = {_name(lv, i): i for i, lv in enumerate(levels)
            if lv.latency_confirm_rounds == 0 and Path(lv.artifact).is_file()}
    rounds = ROUNDS if rounds is None else rounds
    if not todo or rounds < 1:
        return list(levels)
    busy: dict[str, list[float]] = {n: [] for n in todo}
    for name, i in todo.items():  # the first pass's share counts with its round
        first_share = levels[i].host_cpu_busy_pct
        if first_share is not None:
            busy[name].append(float(first_share))

    def measure(name: str, n: int) -> list[float]:
        lv = levels[todo[name]]
        bench = ctx.latency(Path(lv.artifact), lv.runtime, lv.details.get("runtime_options"), iterations=n, fresh=False,
                            min_duration_s=RUN_S, warmup_s=max(ctx.measure.warmup_s, RUN_WARMUP_S))
        share = others_cpu_pct(bench)
        if share is not None:
            busy[name].append(share)
        return list(bench.samples_ms or [bench.latency_ms.p50])

    samples = RoundRobin(rounds=rounds, samples_per_round=RUN_ITERATIONS).run(list(todo), measure)
    for name, i in todo.items():  # the first pass is one more round (its p50: that round's median)
        first = levels[i].latency_ms_first_pass
        samples[name].insert(0, [first if first is not None else levels[i].latency_ms])
    stats = level_stats(samples)
    out = list(levels)
    for name, i in todo.items():
        st, lv = stats[name], levels[i]
        share = round(float(np.median(busy[name])), 1) if busy[name] else None
        out[i] = lv.model_copy(update={
            "latency_ms": round(st.median_ms, 6), "latency_ms_low": round(st.low_ms, 6),
            "latency_ms_high": round(st.high_ms, 6), "latency_confirm_rounds": st.rounds, "single_run": False,
            "latency_ms_first_pass": lv.latency_ms_first_pass if lv.latency_ms_first_pass is not None
            else lv.latency_ms,
            "host_cpu_busy_pct": share, "interference": interfered(share)})
    return out
