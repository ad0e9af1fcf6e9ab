"""``edgeopt bench --batch 1,2,4,8 --threads 1,2``: one benchmark per (threads, batch) value, through one runner,
and the latency/throughput trade-off between them.

The decision it serves: batch 1 (and few threads) for real time, where each frame's latency counts; a larger batch
for throughput, where items per second count. Each point is a full :class:`~edgeopt.metrics.result.BenchResult`
(same validity rules); the trade-off names the point with the lowest p99 per call and the one with the highest
throughput, and the HTML report plots throughput against latency (``edgeopt.reports.tradeoff_html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from ..metrics.result import BenchResult
from ..runners import ProgressSink, Runner
from ..runners.select import use_runner
from ..settings import MeasureSettings, RemoteSpec
from .api import run_benchmark

MAX_POINTS = 32


class TradeoffPoint(BaseModel):
    """One (threads, batch) value's headline numbers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    batch: int
    threads: int = Field(description="Runtime intra-op threads (0: the runtime's default).")
    latency_ms_p50: float = Field(description="Median latency of one call (one batch), ms.")
    latency_ms_p99: float = Field(description="p99 latency of one call, ms.")
    latency_ms_per_item: float = Field(description="p50 latency / batch: the amortised cost of one item, ms.")
    throughput_ips: float = Field(description="Items per second (calls x batch / s).")
    valid: bool
    passed: bool = Field(description="Valid and within the FPS budget (if any) at this point.")


class TradeoffResult(BaseModel):
    """Every point's result and what they say together."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    target: str
    runner: str
    points: list[TradeoffPoint]
    best_latency: int = Field(description="Index of the point with the lowest p99 per call (real time).")
    best_throughput: int = Field(description="Index of the point with the highest throughput.")
    summary: str
    results: list[BenchResult]


def benchmark_tradeoff(
    model: str | Path, settings: MeasureSettings, *, batches: Sequence[int], threads: Sequence[int],
    target: str | None = None, runner: Runner | None = None, remote: RemoteSpec | None = None,
    progress: ProgressSink | None = None, targets_dirs: Sequence[Path] = (),
) -> TradeoffResult:
    """Benchmark ``model`` at every (threads, batch) pair, all through one runner (one SSH connection).

    Raises:
        InputError: no values, a value < 1 for batch (< 0 for threads), too many points; as :func:`run_benchmark`.
        RunnerError: the agent or device failed.
    """
    pairs = _pairs(batches, threads)
    results: list[BenchResult] = []
    with use_runner(runner, remote, target) as placed:
        for t, b in pairs:
            results.append(run_benchmark(model, settings.replace(batch=b, threads=t), target=placed.target,
                                         runner=placed.runner, progress=progress, targets_dirs=targets_dirs))
    return tradeoff_of(results)


def _pairs(batches: Sequence[int], threads: Sequence[int]) -> list[tuple[int, int]]:
    if not batches or not threads:
        raise InputError("--batch/--threads: give at least one value each, e.g. --batch 1,8 --threads 0")
    if any(b < 1 for b in batches) or any(t < 0 for t in threads):
        raise InputError(f"--batch {list(batches)} / --threads {list(threads)}: batch >= 1 and threads >= 0 "
                         "(0: the runtime's default)")
    pairs = [(t, b) for t in dict.fromkeys(threads) for b in dict.fromkeys(batches)]
    if len(pairs) > MAX_POINTS:
        raise InputError(f"{len(pairs)} (threads, batch) points: at most {MAX_POINTS}; give fewer values")
    return pairs


def tradeoff_of(results: Sequence[BenchResult]) -> TradeoffResult:
    """The trade-off of finished runs (one per (threads, batch) value)."""
    points = [TradeoffPoint(batch=r.settings.batch, threads=r.settings.threads, latency_ms_p50=r.latency_ms.p50,
                            latency_ms_p99=r.latency_ms.p99, latency_ms_per_item=r.latency_ms.p50 / r.settings.batch,
                            throughput_ips=r.throughput_ips, valid=r.valid, passed=r.passed) for r in results]
    usable = [i for i, p in enumerate(points) if p.valid] or list(range(len(points)))
    fast = min(usable, key=lambda i: points[i].latency_ms_p99)
    wide = max(usable, key=lambda i: points[i].throughput_ips)
    f, w = points[fast], points[wide]
    summary = (f"real time: batch {f.batch}, threads {f.threads or 'default'} (p99 {f.latency_ms_p99:.3g} ms per "
               f"call, {f.throughput_ips:,.0f} items/s); throughput: batch {w.batch}, threads "
               f"{w.threads or 'default'} ({w.throughput_ips:,.0f} items/s, p99 {w.latency_ms_p99:.3g} ms per call)")
    first = results[0]
    return TradeoffResult(model=first.model.path, target=first.target, runner=first.runner, points=points,
                          best_latency=fast, best_throughput=wide, summary=summary, results=list(results))
