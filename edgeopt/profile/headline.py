"""The headline of ``profile A --vs B``: A and B timed in interleaved rounds, not once each.

Each side's unprofiled p50 comes from its own profile call, minutes apart on a machine whose speed drifts: two
identical runs gave B 1.30x and 3.59x faster. Here A and B are benchmarked round-robin
(:class:`edgeopt.sweep.rank.round_stats.RoundRobin`: every round runs both, the order alternated), and the speedup is
the median of the per-round paired ratios with its bootstrap interval
(:func:`edgeopt.sweep.rank.round_stats.pair_ratio`), each side's latency the median of its round medians
(:func:`edgeopt.sweep.rank.round_stats.level_stats`). An interval that covers 1 is "within noise".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..bench.api import run_benchmark
from ..runners import Runner
from ..settings import MeasureSettings
from .schema import Headline, ProfileResult

ROUNDS = 5
ITERATIONS = 10
RUN_S = 0.3  # each side's short benchmark per round lasts at least this (a few ms models get more inferences)
WARMUP = 2


def measure_headline(a: ProfileResult, b: ProfileResult, *, runner: Runner, target: str | None,
                     targets_dirs: Sequence[Path] = (), inputs: str | Path | None = None,
                     rounds: int = ROUNDS) -> Headline:
    """Benchmark A's and B's models (as profiled: runtime, options, threads, batch, shapes) in interleaved rounds.

    Raises:
        InputError: bad settings. RunnerError: the agent or device failed.
    """
    # here, not at the top: importing edgeopt.sweep runs its package, whose INT8 search imports edgeopt.profile
    from ..sweep.rank.round_stats import RoundRobin, level_stats, pair_ratio

    def settings(p: ProfileResult) -> MeasureSettings:
        return MeasureSettings(
            runtime=str(p.runtime.get("name")), runtime_options=dict(p.settings.runtime_options),
            threads=p.settings.threads, batch=p.settings.batch, seed=p.settings.seed, shapes=p.settings.shapes,
            inputs=Path(inputs) if inputs else None, warmup=WARMUP, iterations=ITERATIONS, min_duration_s=RUN_S,
            keep_samples=True, use_target_fps=False)

    plans = {"A": (Path(a.model.path), settings(a)), "B": (Path(b.model.path), settings(b))}

    def measure(side: str, n: int) -> list[float]:
        path, measure_settings = plans[side]
        bench = run_benchmark(path, measure_settings.model_copy(update={"iterations": n}), target=target,
                              runner=runner, targets_dirs=targets_dirs)
        return list(bench.samples_ms or [bench.latency_ms.p50])

    samples = RoundRobin(rounds=rounds, samples_per_round=ITERATIONS).run(["A", "B"], measure)
    stats = level_stats(samples)
    ratio = pair_ratio(samples, "A", "B")  # B / A: below 1, B is faster
    speedup, low, high = 1 / ratio.ratio, 1 / ratio.high, 1 / ratio.low
    return Headline(rounds=rounds, iterations_per_round=ITERATIONS, a_p50_ms=stats["A"].median_ms,
                    a_low_ms=stats["A"].low_ms, a_high_ms=stats["A"].high_ms, b_p50_ms=stats["B"].median_ms,
                    b_low_ms=stats["B"].low_ms, b_high_ms=stats["B"].high_ms, speedup=speedup, speedup_low=low,
                    speedup_high=high, paired=ratio.paired, within_noise=low <= 1.0 <= high)
