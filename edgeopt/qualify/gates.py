"""The verdict engine: each gate of a spec against one device's measurements.

Rules that hold for every gate:
- a value that was not measured fails its gate (qualification must be proven, never assumed);
- a run the watchdog truncated cannot pass a gate that depends on it;
- a latency gate on a percentile the run's sample count does not support fails (the run is invalid for it),
  whatever the number; likewise a deadline-miss rate that the number of frames cannot resolve;
- an energy gate on an ESTIMATE says so in its verdict (and fails when ``require_measured``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..metrics.deadline import frames_required
from ..metrics.result import BenchResult
from .gate_rows import MIB, retention_row, row
from .gate_spec import (
    ColdStartGate,
    DeadlineMissGate,
    EnergyGate,
    FpsGate,
    Gates,
    LatencyGate,
    MemoryGate,
    ModelSizeGate,
    RegressionGate,
    RetentionGate,
    ThroughputGate,
)
from .result import GateResult, GateStatus, RegressionInfo, RetentionResult


@dataclass(frozen=True)
class GateContext:
    """What one device produced, as the gates see it."""

    device: str
    bench: BenchResult
    paced: BenchResult | None = None
    retention: RetentionResult | None = None
    regression: RegressionInfo | None = None


def _invalid_for(bench: BenchResult, percentile: str | None = None) -> str | None:
    """Why ``bench`` cannot back a gate (on ``percentile``), or None."""
    if bench.run.truncated:
        return "the run was stopped by the watchdog (max_duration_s) and is invalid; raise measure.max_duration_s"
    if percentile is not None:
        support = bench.percentiles_supported[percentile]
        if not support.supported:
            return (f"INVALID: {percentile} needs at least {support.required} samples and the run has "
                    f"{support.samples}, so it cannot pass a gate on {percentile}; raise measure.iterations or "
                    "measure.min_duration_s")
    return None


def _upper(gate: str, ctx: GateContext, value: float | None, limit: float, unit: str, metric: str,
           problem: str | None = None, what: str = "", estimate: bool = False) -> GateResult:
    """A ``value <= limit`` gate."""
    if problem is None and value is None:
        problem = f"{metric} was not measured"
    if problem is not None:
        return row(gate, ctx.device, ok=False, measured=value, threshold=limit, comparison="<=", unit=unit,
                   metric=metric, detail=problem, estimate=estimate)
    assert value is not None
    ok = value <= limit
    detail = f"{what}{metric} {value:.4g} {unit} {'<=' if ok else '>'} {limit:g} {unit}"
    return row(gate, ctx.device, ok=ok, measured=value, threshold=limit, comparison="<=", unit=unit, metric=metric,
               detail=detail, estimate=estimate)


def latency(g: LatencyGate, ctx: GateContext) -> GateResult:
    value = float(getattr(ctx.bench.latency_ms, g.percentile))
    return _upper("latency", ctx, value, g.max_ms, "ms", f"latency {g.percentile}",
                  _invalid_for(ctx.bench, g.percentile))


def fps(g: FpsGate, ctx: GateContext) -> GateResult:
    budget = 1000.0 / g.fps
    value = float(getattr(ctx.bench.latency_ms, g.percentile))
    out = _upper("fps", ctx, value, budget, "ms", f"latency {g.percentile}", _invalid_for(ctx.bench, g.percentile),
                 what=f"{g.fps:g} FPS budget: ")
    if out.status is GateStatus.PASS:
        headroom = (budget - value) / budget * 100
        out = out.model_copy(update={"detail": f"{out.detail} ({headroom:.0f} % headroom)"})
    return out


def deadline_miss(g: DeadlineMissGate, ctx: GateContext) -> GateResult:
    stats = ctx.paced.deadline if ctx.paced is not None else None
    metric = f"deadline misses at {g.fps:g} FPS"
    if ctx.paced is None or stats is None:
        return _upper("deadline_miss", ctx, None, g.max_pct, "%", metric, "no frame-paced run was made")
    needed = frames_required(g.max_pct)
    problem = _invalid_for(ctx.paced)
    if problem is None and stats.frames < needed:
        problem = (f"INVALID: {stats.frames} frames cannot resolve a {g.max_pct:g} % miss rate (needs >= {needed}); "
                   "raise gates.deadline_miss.frames")
    out = _upper("deadline_miss", ctx, stats.miss_pct, g.max_pct, "%", metric, problem)
    facts = (f"; {stats.misses}/{stats.frames} frames late, {stats.late_starts} started late, "
             f"response p99 {stats.response_ms_p99 or 0:.3g} ms vs {stats.budget_ms:.3g} ms budget")
    return out.model_copy(update={"detail": out.detail + facts})


def memory(g: MemoryGate, ctx: GateContext) -> GateResult:
    mem = ctx.bench.memory_mb
    value, metric = (mem.delta, "model memory (peak - baseline)") if g.basis == "model" else \
        (mem.peak, "process peak memory")
    return _upper("memory", ctx, value, g.max_mb, "MiB", metric, _invalid_for(ctx.bench))


def model_size(g: ModelSizeGate, ctx: GateContext) -> GateResult:
    return _upper("model_size", ctx, ctx.bench.model.size_bytes / MIB, g.max_mb, "MiB", "model size")


def retention(g: RetentionGate, ctx: GateContext) -> GateResult:
    return retention_row(g, ctx.device, ctx.retention, _retention_tail)


def _retention_tail(r: RetentionResult) -> str:
    caveat = " (random inputs: indicative only)" if r.data == "random" else ""
    tail = f"{caveat}, computed on the host ({r.evaluated_on})"
    if r.cannot_tell:  # a ratio of 1.0 on data where every model decides alike tested nothing: say so
        tail += f"; UNTESTED: {r.cannot_tell}"
    return tail


def energy(g: EnergyGate, ctx: GateContext) -> GateResult:
    e = ctx.bench.energy
    value = e.energy_per_inference_mj if e is not None else None
    estimate = e is not None and e.source == "estimate"
    problem = None
    if e is None:
        problem = "energy was not measured and the target states no TDP to estimate it from"
    elif estimate and g.require_measured:
        problem = f"energy is an ESTIMATE ({value:.4g} mJ from the target's TDP) and the gate requires a measurement"
    what = "ESTIMATE (target TDP, no power sensor): " if estimate else "measured: "
    return _upper("energy", ctx, value, g.max_mj, "mJ", "energy per inference", problem or _invalid_for(ctx.bench),
                  what=what, estimate=estimate)


def cold_start(g: ColdStartGate, ctx: GateContext) -> GateResult:
    return _upper("cold_start", ctx, ctx.bench.cold_start_ms.total, g.max_ms, "ms", "cold start (load + first)")


def throughput(g: ThroughputGate, ctx: GateContext) -> GateResult:
    value = ctx.bench.throughput_ips
    problem = _invalid_for(ctx.bench)
    if problem:
        return row("throughput", ctx.device, ok=False, measured=value, threshold=g.min_ips, comparison=">=",
                   unit="ips", metric="throughput", detail=problem)
    ok = value >= g.min_ips
    return row("throughput", ctx.device, ok=ok, measured=value, threshold=g.min_ips, comparison=">=", unit="ips",
               metric="throughput", detail=f"throughput {value:.4g} ips {'>=' if ok else '<'} {g.min_ips:g} ips")


def regression(g: RegressionGate, ctx: GateContext) -> GateResult:
    info = ctx.regression
    metric = f"median slowdown vs baseline '{g.baseline}'"
    if info is None or info.comparison is None:
        missing = f"no baseline '{g.baseline}' for device {ctx.device} in the history"
        ok = g.if_missing == "pass"
        detail = (f"{missing}: passed because if_missing is 'pass'" if ok else
                  f"{missing}; set one with: edgeopt baseline set RUN --name {g.baseline}")
        return row("regression", ctx.device, ok=ok, measured=None, threshold=g.tolerance_pct, comparison="<=",
                   unit="%", metric=metric, detail=detail)
    c = info.comparison
    problem = _invalid_for(ctx.bench)
    if problem is None and info.not_comparable:
        problem = (f"NOT COMPARABLE with baseline run {info.baseline_run}: {'; '.join(info.not_comparable)}; point "
                   f"'{g.baseline}' at a run of this model, runtime and target, or list the difference in "
                   "gates.regression.allow_different")
    ok = problem is None and not c.regression
    detail = problem or (f"{'no regression' if ok else 'REGRESSION'} vs run {info.baseline_run}: {c.explanation}"
                         + "".join(f"; note: {n}" for n in info.notes))
    return row("regression", ctx.device, ok=ok, measured=c.change_pct, threshold=g.tolerance_pct, comparison="<=",
               unit="%", metric=metric, detail=detail)


_EVALUATORS: dict[str, Callable[[Any, GateContext], GateResult]] = {
    "latency": latency, "fps": fps, "deadline_miss": deadline_miss, "memory": memory, "model_size": model_size,
    "retention": retention, "energy": energy, "cold_start": cold_start, "throughput": throughput,
    "regression": regression,
}


def evaluate(gates: Gates, ctx: GateContext) -> list[GateResult]:
    """Every active gate of ``gates`` on one device, in the spec's fixed gate order."""
    return [_EVALUATORS[name](getattr(gates, name), ctx) for name in gates.active()]


def gate_limit(name: str, gate: Any) -> tuple[float, Literal["<=", ">="], str]:
    """``(threshold, comparison, unit)`` of an active gate, as its result rows state them."""
    limits: dict[str, tuple[float, Literal["<=", ">="], str]] = {
        "latency": (getattr(gate, "max_ms", 0.0), "<=", "ms"),
        "fps": (1000.0 / getattr(gate, "fps", 1.0), "<=", "ms"),
        "deadline_miss": (getattr(gate, "max_pct", 0.0), "<=", "%"),
        "memory": (getattr(gate, "max_mb", 0.0), "<=", "MiB"),
        "model_size": (getattr(gate, "max_mb", 0.0), "<=", "MiB"),
        "retention": (getattr(gate, "min_ratio", 0.0), ">=", ""),
        "energy": (getattr(gate, "max_mj", 0.0), "<=", "mJ"),
        "cold_start": (getattr(gate, "max_ms", 0.0), "<=", "ms"),
        "throughput": (getattr(gate, "min_ips", 0.0), ">=", "ips"),
        "regression": (getattr(gate, "tolerance_pct", 0.0), "<=", "%"),
        "ttft_ms": (getattr(gate, "max_ms", 0.0), "<=", "ms"),
        "tpot_ms": (getattr(gate, "max_ms", 0.0), "<=", "ms"),
        "decode_tokens_per_s": (getattr(gate, "min_tokens_per_s", 0.0), ">=", "tokens/s"),
        "kv_cache_mb": (getattr(gate, "max_mb", 0.0), "<=", "MiB"),
        "energy_per_token": (getattr(gate, "max_mj", 0.0), "<=", "mJ"),
    }
    return limits[name]


def error_results(gates: Gates, device: str, message: str) -> list[GateResult]:
    """Gate rows for a device whose run failed: each gate is an error (JUnit <error>), none passes."""
    rows = []
    for name in gates.active():
        threshold, comparison, unit = gate_limit(name, getattr(gates, name))
        rows.append(GateResult(gate=name, device=device, status=GateStatus.ERROR, measured=None, threshold=threshold,
                               comparison=comparison, unit=unit, metric=name, detail=f"device error: {message}"))
    return rows
