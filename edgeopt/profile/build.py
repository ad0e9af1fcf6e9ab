"""Turn the agent's raw profile into a :class:`ProfileResult`: statistics, the graph join, notes."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from edgeopt_agent.protocol import RawRun

from .._version import __version__
from ..analysis.roofline import roofline
from ..enums import Bound
from ..metrics.latency import latency_stats
from ..targets.schema import Target
from .graph import GraphIndex
from .join import join_layers, per_op_type, roof_peaks_note
from .physics import check_profile
from .schema import LayerRecord, ModelRef, ProfileResult, ProfileSettings, TraceEvent

_OVERHEAD_NOTE = 1.5  # above this profiled/unprofiled ratio, say that layer times are inflated
_SHOWN = 8


@dataclass(frozen=True)
class ProfileContext:
    """What the host knows besides the agent's answer."""

    model: ModelRef
    graph: GraphIndex | None
    target: Target
    runner: str
    started_at: str


def _notes(raw: RawRun, ctx: ProfileContext, layers: list[LayerRecord], unmapped: list[str],
           overhead: float) -> list[str]:
    notes = [str(n) for n in raw.profile.get("notes", [])]
    if ctx.graph is None:
        notes.append("no ONNX graph joined (the artifact is not ONNX): pass --graph SOURCE.onnx to map layers to "
                     "ONNX nodes and get MACs, GOP/s and roofline per layer")
    if unmapped:
        shown = ", ".join(unmapped[:_SHOWN]) + (f" and {len(unmapped) - _SHOWN} more" if len(unmapped) > _SHOWN else "")
        notes.append(f"{len(unmapped)} ONNX nodes are covered by no runtime layer (folded or removed at load): {shown}")
    if overhead > _OVERHEAD_NOTE:
        notes.append(f"the profiled inference takes {overhead:.2f}x the unprofiled p50: per-layer times carry the "
                     "profiler's overhead; read their ranking and shares rather than their absolute values")
    peaks = roof_peaks_note(layers, ctx.target)
    if peaks:
        notes.append(peaks)
    above = [x for x in layers if x.bound is not None and x.roof_fraction is not None and x.roof_fraction > 1]
    memory = [x.kernel for x in above if x.bound is Bound.MEMORY]
    compute = [x.kernel for x in above if x.bound is Bound.COMPUTE]
    if memory:
        notes.append(f"{len(memory)} layers run faster than the target's memory roof allows (e.g. {memory[0]}): "
                     "their tensors stay in cache, and the roof assumes every byte comes from DRAM once")
    if compute:
        notes.append(f"{len(compute)} layers run faster than the compute peak of their precision (e.g. {compute[0]}):"
                     " that peak is an estimate below this machine's (state it in a targets YAML)")
    if raw.truncated:
        notes.append("max_duration_s cut a phase short: fewer iterations than asked (see settings)")
    return notes


def build_profile(raw: RawRun, ctx: ProfileContext) -> ProfileResult:
    """The typed result of one agent ``profile`` run."""
    prof = raw.profile
    checked = check_profile(raw)  # impossible records are left out and named in invalid_reasons
    layers, unmapped = join_layers(checked.layers, ctx.graph, ctx.target)
    walls = checked.inference_ns
    profiled_ms = statistics.median(walls) / 1e6 if walls else 0.0
    p50 = latency_stats(checked.samples_ns).p50 if checked.samples_ns else 0.0
    overhead = profiled_ms / p50 if p50 > 0 else 0.0
    request = raw.request or {}
    graph = ctx.graph
    roof = roofline(graph.flops, graph.bytes_moved, ctx.target, graph.precision) if graph and graph.flops else None
    trace = [TraceEvent(kernel=str(e.get("name", "")), op_type=str(e.get("op_type", "")),
                        start_us=float(e.get("start_us") or 0.0), duration_us=float(e.get("duration_us", 0.0)))
             for e in checked.trace]
    return ProfileResult(
        model=ctx.model, graph=str(graph.path) if graph else None, target=ctx.target.name, runner=ctx.runner,
        runtime=dict(raw.runtime),
        settings=ProfileSettings(
            warmup=int(request.get("warmup", 0)), iterations=int(request.get("iterations", 0)),
            profiled_iterations=int(prof.get("iterations", len(walls))), threads=int(request.get("threads", 0)),
            batch=int(request.get("batch", 1)), seed=int(request.get("seed", 0)),
            shapes={k: list(v) for k, v in (request.get("shapes") or {}).items()},
            runtime_options=dict(request.get("runtime_options") or {})),
        profiled_ms=profiled_ms, layers_ms=sum(layer.median_ms for layer in layers), unprofiled_p50_ms=p50,
        overhead=overhead, layers=layers, per_op_type=per_op_type(layers), unmapped_onnx_nodes=unmapped,
        roofline=roof, trace=trace, trace_source=str(prof.get("trace_source", "runtime")),
        notes=_notes(raw, ctx, layers, unmapped, overhead), environment=dict(raw.environment),
        agent_version=raw.agent_version, edgeopt_version=__version__, started_at=ctx.started_at,
        valid=not checked.reasons, invalid_reasons=checked.reasons,
    )
