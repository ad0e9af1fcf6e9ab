"""One benchmark result from a level's interleaved rounds: its first measurement when the sweep has a served agent.

A level's first measurement used to be one ~1 s run taken right after its artifact was built and evaluated; on a
shared 2-core VM whose speed drifts 30-50 % over seconds, that single run read up to 66 % off the median of the
rounds that later confirmed it (issue 21), and it filled the table until then. With a served agent the sweep now
measures a new level only in :data:`.confirm.FIRST_ROUNDS` interleaved rounds (:mod:`.confirm`), each run a third
of the sweep's per-level settings (iterations and minimum duration), so that the pooled samples support the same
percentiles as the single run did. This module turns those round runs into the one :class:`BenchResult` the level
row and the history record: the first round's facts (model, runtime, environment, energy), the latency statistics
of all samples pooled, ``run.samples``/``timed_s`` summed, and validity and the FPS budget judged on the pool.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..metrics.budget import check_fps
from ..metrics.latency import PERCENTILES, PercentileSupport, latency_stats, required_samples
from ..metrics.result import BenchResult


def pooled_bench(benches: Sequence[BenchResult], percentile: str) -> BenchResult:
    """``benches`` (one level's round runs, each with ``samples_ms``) as one result over all their samples;
    ``percentile``: the one the run's validity is judged on (the sweep's).

    Raises:
        ValueError: no run, or a run without samples.
    """
    if not benches or any(not b.samples_ms for b in benches):
        raise ValueError("pooled_bench needs one or more runs, each with its samples")
    first = benches[0]
    samples = [s for b in benches for s in (b.samples_ms or [])]
    stats = latency_stats([round(s * 1e6) for s in samples])
    support = {k: PercentileSupport(supported=len(samples) >= required_samples(q), samples=len(samples),
                                    required=required_samples(q)) for k, q in PERCENTILES.items()}
    pct = percentile
    invalid = [r for b in benches for r in b.invalid_reasons if "watchdog" in r]
    if not support[pct].supported:
        invalid.insert(0, f"{pct} needs at least {support[pct].required} samples, the {len(benches)} rounds have "
                          f"{len(samples)}: raise --iterations or --min-duration")
    budget = first.fps_budget
    if budget is not None:
        budget = check_fps(budget.fps, budget.percentile, getattr(stats, budget.percentile),
                           support[budget.percentile].supported)
    timed_s = sum(b.run.timed_s for b in benches)
    run = first.run.model_copy(update={"samples": len(samples), "timed_s": round(timed_s, 6),
                                       "truncated": any(b.run.truncated for b in benches)})
    settings = first.settings.model_copy(update={
        "iterations": sum(b.settings.iterations for b in benches),
        "min_duration_s": round(sum(b.settings.min_duration_s for b in benches), 6)})
    return first.model_copy(update={
        "settings": settings, "latency_ms": stats, "percentiles_supported": support, "fps_budget": budget, "run": run,
        "throughput_ips": len(samples) * first.settings.batch / timed_s if timed_s > 0 else first.throughput_ips,
        "valid": not invalid, "invalid_reasons": invalid, "samples_ms": samples,
        "environment": {**first.environment, "pooled_rounds": len(benches)}})
