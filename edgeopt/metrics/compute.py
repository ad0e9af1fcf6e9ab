"""Turn raw measurements into a :class:`BenchResult`: statistics, validity, budget and roofline share."""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

from edgeopt_agent.protocol import RawRun

from ..enums import Precision
from ..targets.schema import Target
from .budget import check_fps
from .deadline import deadline_from_frames
from .energy import energy_from_run
from .latency import PERCENTILES, PercentileSupport, latency_stats, required_samples
from .physics import check_numbers, reached_ceiling
from .result import (
    BenchResult,
    ColdStart,
    Compute,
    MemoryMb,
    ModelInfo,
    RunInfo,
    RuntimeInfo,
    Settings,
)
from .target_match import mismatch_note, target_mismatch


@dataclass(frozen=True)
class MetricInputs:
    """What the metrics stage needs besides the raw run."""

    model: ModelInfo
    target: Target
    runner: str
    edgeopt_version: str
    flops_per_inference: int | None
    precision: Precision
    fps: float | None
    percentile: str
    started_at: _dt.datetime
    keep_samples: bool = False


def _mb(kb: int | None) -> float | None:
    return None if kb is None or not math.isfinite(kb) else kb / 1024.0


def _finite_or_zero(value: float | None) -> float:
    """A device number for display: NaN, infinities and None read 0 (the run is invalid then, with the reason)."""
    return float(value) if value is not None and math.isfinite(value) else 0.0


def build_result(raw: RawRun, ctx: MetricInputs) -> BenchResult:
    """Compute statistics and verdicts from a successful raw run."""
    if not raw.ok or raw.request is None:
        raise ValueError("build_result needs a successful run; turn error runs into RunnerError first")
    req = raw.request
    numbers = check_numbers(raw)  # a device is untrusted: impossible numbers make the run invalid
    n = len(numbers.samples_ns)
    stats = latency_stats(numbers.samples_ns or [0])
    support = {
        key: PercentileSupport(supported=n >= required_samples(q), samples=n, required=required_samples(q))
        for key, q in PERCENTILES.items()
    }
    invalid, warnings = _validity(raw, ctx.percentile, support)
    invalid[:0] = numbers.reasons
    chosen = support[ctx.percentile]
    wall_s = _finite_or_zero(raw.timed_wall_s)
    inferences_per_s = n / wall_s if wall_s > 0 and not numbers.reasons else 0.0
    budget = None
    if ctx.fps is not None:
        budget = check_fps(ctx.fps, ctx.percentile, getattr(stats, ctx.percentile), chosen.supported)
        if numbers.reasons:  # never "passed" on numbers that cannot be true
            budget = budget.model_copy(update={"passed": False, "reason": numbers.reasons[0]})
    power = raw.power if not numbers.reasons else {}  # no energy figures from numbers that cannot be true
    energy, energy_warnings = energy_from_run(power, target=ctx.target, inferences=n,
                                              timed_s=wall_s, flops_per_inference=ctx.flops_per_inference)
    warnings.extend(energy_warnings)
    mismatch = target_mismatch(ctx.target, raw.environment)
    if mismatch:
        warnings.insert(0, mismatch_note(mismatch, ctx.target.name))
    load, first = _finite_or_zero(raw.load_ms), _finite_or_zero(raw.first_inference_ms)
    return BenchResult(
        edgeopt_version=ctx.edgeopt_version,
        model=ctx.model,
        target=ctx.target.name,
        runner=ctx.runner,
        runtime=RuntimeInfo(**raw.runtime),
        settings=Settings(**{k: req[k] for k in Settings.model_fields if k in req}),
        latency_ms=stats,
        percentiles_supported=support,
        throughput_ips=inferences_per_s * int(req["batch"]),
        cold_start_ms=ColdStart(load=load, first_inference=first, total=load + first),
        memory_mb=_memory(raw),
        fps_budget=budget,
        compute=_compute(ctx, inferences_per_s),
        energy=energy,
        deadline=deadline_from_frames(raw.frames),
        run=_run_info(raw, ctx),
        inputs=raw.inputs,
        outputs=raw.outputs,
        valid=not invalid,
        invalid_reasons=invalid,
        warnings=warnings,
        environment=raw.environment,
        target_mismatch=mismatch,
        samples_ms=[s / 1e6 for s in numbers.samples_ns] if ctx.keep_samples else None,
    )


def _validity(raw: RawRun, percentile: str, support: dict[str, PercentileSupport]) -> tuple[list[str], list[str]]:
    """Why the run is invalid (too few samples for the chosen percentile, the watchdog) and what to warn about."""
    req = raw.request or {}
    n = support[percentile].samples  # the usable ones (edgeopt.metrics.physics)
    invalid: list[str] = []
    warnings: list[str] = []
    chosen = support[percentile]
    if not chosen.supported:
        invalid.append(
            f"{percentile} needs at least {chosen.required} samples, the run has {n}: "
            f"raise --iterations or --min-duration"
        )
    if raw.truncated:
        invalid.append(
            f"the watchdog stopped the timed phase at max_duration_s={req['max_duration_s']} s before "
            f"{req['iterations']} iterations and {req['min_duration_s']} s were both reached"
        )
    streams = int(req.get("streams", 1) or 1)
    if reached_ceiling(len(raw.samples_ns), streams) and req.get("pacing_fps") is None:
        warnings.append(f"the timed phase ended at {len(raw.samples_ns):,} samples, the most the agent keeps, after "
                        f"{_finite_or_zero(raw.timed_wall_s):.3g} s: --iterations and --min-duration beyond that "
                        "add no samples (docs/reliability.md, \"Untrusted device: transport\")")
    for key, s in support.items():
        if key != percentile and not s.supported:
            warnings.append(f"{key} is reported from {n} samples but needs {s.required}: treat it as indicative")
    return invalid, warnings


def _compute(ctx: MetricInputs, inferences_per_s: float) -> Compute | None:
    """Achieved vs peak GFLOP/s, when the model's FLOPs are known."""
    if not ctx.flops_per_inference:
        return None
    achieved = ctx.flops_per_inference * inferences_per_s / 1e9
    peak = ctx.target.peak_ops_per_s(ctx.precision)
    peak_gflops = peak[0] / 1e9 if peak else None
    return Compute(
        flops_per_inference=ctx.flops_per_inference,
        achieved_gflops=achieved,
        peak_gflops=peak_gflops,
        peak_source=peak[1] if peak else None,
        pct_of_peak=(achieved / peak_gflops * 100.0) if peak_gflops else None,
    )


def _memory(raw: RawRun) -> MemoryMb:
    baseline, peak = _mb(raw.memory_kb.get("baseline")), _mb(raw.memory_kb.get("peak"))
    return MemoryMb(
        baseline=baseline,
        peak=peak,
        delta=(peak - baseline) if baseline is not None and peak is not None else None,
    )


def _run_info(raw: RawRun, ctx: MetricInputs) -> RunInfo:
    return RunInfo(
        samples=len(raw.samples_ns),
        timed_s=_finite_or_zero(raw.timed_wall_s),
        warmup_iterations=int(raw.warmup_done.get("iterations", 0)),
        warmup_s=_finite_or_zero(raw.warmup_done.get("duration_s", 0.0)),
        truncated=raw.truncated,
        started_at=ctx.started_at.astimezone(_dt.timezone.utc).isoformat(timespec="seconds"),
    )
