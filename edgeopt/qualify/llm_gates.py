"""The gates of an LLM spec, judged on one device's :class:`~edgeopt.bench.llm.LlmBenchResult`.

Each gate holds in **every** workload cell (the worst cell decides, and the verdict names it). The rules of the
one-pass gates carry over: a value that was not measured fails; a run the watchdog cut cannot pass; a percentile
the readings cannot support (p99 of TTFT needs 100 repetitions, p99 of TPOT 100 token latencies in the cell) fails
as INVALID whatever the number; an energy gate on an ESTIMATE says so (and fails with ``require_measured``).
Percentiles are computed from the cells' raw readings, so a gate may ask for any of p50..p999.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..bench.llm.cells import cell_key, llm_cells
from ..bench.llm.result import LlmBenchResult
from ..metrics.latency import PERCENTILES, required_samples
from .gate_rows import retention_row, worst_row
from .gate_spec import (
    DecodeRateGate,
    EnergyPerTokenGate,
    Gates,
    KvCacheGate,
    MemoryGate,
    RetentionGate,
    TpotGate,
    TtftGate,
)
from .result import GateResult, RetentionResult


@dataclass(frozen=True)
class LlmGateContext:
    device: str
    bench: LlmBenchResult
    retention: RetentionResult | None = None


def _worst(gate: str, ctx: LlmGateContext, values: dict[str, float | None], limit: float,
           comparison: Literal["<=", ">="], unit: str, metric: str, problem: str | None = None,
           estimate: bool = False, prefix: str = "") -> GateResult:
    return worst_row(gate, ctx.device, values, limit, comparison, unit, metric, problem, estimate, prefix)


def _values(ctx: LlmGateContext, metric: str) -> dict[str, float | None]:
    """Each cell's single value of ``metric``, read from the result's cells (the generative kind's cells)."""
    out: dict[str, float | None] = {}
    for cell in llm_cells(ctx.bench):
        s = cell.series_of(metric)
        out[cell.key] = s.summary.get("value") if s is not None else None
    return out


def _cut(ctx: LlmGateContext) -> str | None:
    if ctx.bench.truncated:
        return "the run was stopped by the watchdog (measure.max_duration_s) and is invalid; raise it"
    return None


def _percentile_gate(gate: str, g: TtftGate | TpotGate, ctx: LlmGateContext, what: str) -> GateResult:
    """A percentile of ``gate``'s metric (``ttft_ms``/``tpot_ms``) from each cell's raw readings."""
    q = PERCENTILES[g.percentile]
    need = required_samples(q)
    values: dict[str, float | None] = {}
    short: list[str] = []
    for cell in llm_cells(ctx.bench):
        s = cell.series_of(gate)
        xs = s.readings if s is not None else ()
        values[cell.key] = float(np.percentile(np.asarray(xs, dtype=np.float64), q * 100.0)) if xs else None
        if xs and len(xs) < need:
            short.append(f"{cell.key} has {len(xs)}")
    problem = _cut(ctx)
    if problem is None and short:
        problem = (f"INVALID: {g.percentile} needs at least {need} {what} per cell and {'; '.join(short)}, so it "
                   "cannot pass a gate on it; raise llm.repetitions (or llm.gen_tokens for TPOT)")
    return _worst(gate, ctx, values, g.max_ms, "<=", "ms", f"{gate.split('_')[0].upper()} {g.percentile}", problem)


def ttft(g: TtftGate, ctx: LlmGateContext) -> GateResult:
    return _percentile_gate("ttft_ms", g, ctx, "repetitions")


def tpot(g: TpotGate, ctx: LlmGateContext) -> GateResult:
    return _percentile_gate("tpot_ms", g, ctx, "token latencies")


def decode_rate(g: DecodeRateGate, ctx: LlmGateContext) -> GateResult:
    return _worst("decode_tokens_per_s", ctx, _values(ctx, "decode_tokens_per_s"), g.min_tokens_per_s, ">=",
                  "tokens/s", "decode rate", _cut(ctx))


def kv_cache(g: KvCacheGate, ctx: LlmGateContext) -> GateResult:
    return _worst("kv_cache_mb", ctx, _values(ctx, "kv_cache_mb"), g.max_mb, "<=", "MiB", "KV cache (from the config)")


def energy_per_token(g: EnergyPerTokenGate, ctx: LlmGateContext) -> GateResult:
    field = f"energy_{g.phase}_mj_per_token"
    values = {cell_key(c): getattr(c, field) for c in ctx.bench.cells}
    estimate = any(c.energy_source == "estimate" for c in ctx.bench.cells)
    problem = _cut(ctx)
    if problem is None and all(v is None for v in values.values()):
        problem = "energy was not measured and the target states no TDP to estimate it from (or energy is off)"
    elif problem is None and estimate and g.require_measured:
        problem = "energy per token is an ESTIMATE (target TDP x phase time) and the gate requires a measurement"
    prefix = "ESTIMATE (target TDP, no power sensor): " if estimate else "measured: "
    return _worst("energy_per_token", ctx, values, g.max_mj, "<=", "mJ", f"{g.phase} energy per token", problem,
                  estimate=estimate, prefix=prefix)


def memory(g: MemoryGate, ctx: LlmGateContext) -> GateResult:
    if g.basis == "process":
        return _worst("memory", ctx, _values(ctx, "memory_mb"), g.max_mb, "<=", "MiB", "process peak RSS", _cut(ctx))
    values = {f"load t{ld.threads}": ld.rss_growth_mb for ld in ctx.bench.loads}
    return _worst("memory", ctx, values, g.max_mb, "<=", "MiB", "model memory (RSS the load added)", _cut(ctx))


def retention(g: RetentionGate, ctx: LlmGateContext) -> GateResult:
    return retention_row(g, ctx.device, ctx.retention, lambda r: f" ({r.data})")


_EVALUATORS: dict[str, Callable[[Any, LlmGateContext], GateResult]] = {
    "ttft_ms": ttft, "tpot_ms": tpot, "decode_tokens_per_s": decode_rate, "kv_cache_mb": kv_cache,
    "energy_per_token": energy_per_token, "memory": memory, "retention": retention,
}


def evaluate_llm(gates: Gates, ctx: LlmGateContext) -> list[GateResult]:
    """Every active gate of an LLM spec on one device, in the spec's fixed gate order."""
    return [_EVALUATORS[name](getattr(gates, name), ctx) for name in gates.active()]

