"""A sweep :class:`~edgeopt.sweep.result.Level` made from a latency and a verdict, for the INT8 search's latency rules
(the hopeless-runtime skip, the cost gate): a confirmed level carries an interval of +-``spread`` around ``ms``, or
the interval of its round medians (:func:`level_in_rounds`)."""

from __future__ import annotations

from edgeopt.sweep.rank.round_stats import level_stats
from edgeopt.sweep.result import Level


def level(recipe: str, runtime: str, ms: float, *, passed: bool, spread: float = 0.05, confirmed: bool = True,
          failed_retention: float = 0.9) -> Level:
    return Level(recipe=recipe, runtime=runtime, runtime_version="1", artifact=f"/x/{recipe}-{runtime}.onnx",
                 size_bytes=1, latency_ms=ms, latency_ms_p99=ms, memory_mb_peak=None, energy_mj=None,
                 energy_source=None, metric="agreement", metric_value=1.0,
                 retention=1.0 if passed else failed_retention, meets_retention=passed, meets_budget=True,
                 passed=passed, valid=True, cached=False, latency_ms_low=ms * (1 - spread) if confirmed else None,
                 latency_ms_high=ms * (1 + spread) if confirmed else None,
                 latency_confirm_rounds=3 if confirmed else 0, single_run=not confirmed)


def level_in_rounds(recipe: str, runtime: str, medians: list[float], rounds_id: str | None, *,
                    passed: bool) -> Level:
    """A level confirmed in rounds: its round medians (ms) under ``rounds_id``, its latency and raw interval what the
    sweep's confirmation computes from them (the bootstrap interval of the median of the round medians)."""
    st = level_stats({"x": [[m] for m in medians]})["x"]
    lv = level(recipe, runtime, st.median_ms, passed=passed)
    return lv.model_copy(update={"latency_ms_low": st.low_ms, "latency_ms_high": st.high_ms,
                                 "latency_confirm_rounds": len(medians), "confirm_round_medians_ms": list(medians),
                                 "confirm_rounds_id": rounds_id})
