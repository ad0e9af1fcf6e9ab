"""A sweep :class:`~edgeopt.sweep.result.Level` made from a latency and a verdict, for the INT8 search's latency rules
(the hopeless-runtime skip, the cost gate): a confirmed level carries an interval of +-``spread`` around ``ms``."""

from __future__ import annotations

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
