"""Per-layer profiling on the device: ``python -m edgeopt_agent profile --request FILE --result FILE``.

Two phases in one call, so the profiler's overhead is visible next to the number it distorts:

1. unprofiled: load, first inference, warm-up, then ``iterations`` timed inferences (``samples_ns``);
2. profiled: load again with the runtime's own profiler on (:meth:`Runtime.profile`), warm-up, then
   ``iterations`` inferences, each followed (outside its timing) by ``LayerProfiler.record``.

``RawRun.profile`` holds ``layers`` (one record per runtime layer: the event keys of ``runtimes/layer_events.py``
plus ``order``, ``executed``, ``calls``, ``runs``, ``median_us``, ``p90_us``, ``mean_us``, ``min_us``,
``max_us``, ``share``), ``inference_ns`` (wall time of each profiled inference), ``trace`` (the layers of the
median profiled inference with start offsets), ``trace_source``, ``warmup``, ``iterations`` and ``notes``.
The timed benchmark loop (harness.py) is not involved. Python 3.8, standard library plus numpy and the runtime.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import __version__, environment, inputs, layer_stats, loaded, quiet, runtimes, static_shapes
from .harness import first_line
from .protocol import (
    ERROR_INPUT,
    ERROR_RUNTIME,
    ERROR_RUNTIME_MISSING,
    STATUS_ERROR,
    STATUS_OK,
    RawRun,
    Request,
)
from .runtimes.base import LayerProfiler, ProfileUnsupported

Progress = Callable[[Dict[str, Any]], None]
_NS = 1_000_000_000


class _Failed(Exception):
    """A phase failed; carries the error kind and the one-line message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def unsupported_reason(name: str) -> Optional[str]:
    """None when runtime ``name`` can profile per layer here; else why not (read from its class, not loaded)."""
    try:
        cls = runtimes.runtime_class(name)  # each runtime says for itself (``profile_unsupported == ""``)
    except KeyError:
        return "it is not a registered runtime (known: %s)" % ", ".join(runtimes.names())
    reason = getattr(cls, "profile_unsupported", None)
    if reason == "":
        return None
    return str(reason or "no per-layer profiler is implemented for it")


def cannot_profile_message(name: str, reason: str) -> str:
    return "runtime %s cannot profile per layer: %s; runtimes that can: %s" % (
        name, reason, ", ".join(runtimes.profiling()))


def _validate(request: Request) -> Optional[str]:
    if request.iterations < 1:
        return "iterations must be >= 1 (got %d)" % request.iterations
    if request.warmup < 0:
        return "warmup must be >= 0 (got %d)" % request.warmup
    if request.batch < 1:
        return "batch must be >= 1 (got %d)" % request.batch
    if request.streams != 1 or request.pacing_fps is not None:
        return "profiling runs one stream back to back: drop streams and pacing_fps from the request"
    reason = unsupported_reason(request.runtime)
    return cannot_profile_message(request.runtime, reason) if reason else None


def _load(rt: runtimes.Runtime, request: Request, profiled: bool) -> Tuple[Optional[LayerProfiler], int]:
    # Both phases compile for the shapes the run feeds, as the benchmark does (static_shapes.py).
    rt.expect_inputs(dict(request.shapes, **static_shapes.npz_shapes(request.inputs_npz)), request.batch)
    t0 = time.perf_counter_ns()
    try:
        if profiled:
            return rt.profile(request.model_path, dict(request.runtime_options), request.threads), \
                time.perf_counter_ns() - t0
        rt.load(request.model_path, dict(request.runtime_options), request.threads)
    except ProfileUnsupported as exc:
        raise _Failed(ERROR_INPUT, cannot_profile_message(request.runtime, str(exc))) from None
    except ValueError as exc:
        raise _Failed(ERROR_INPUT, "%s: %s" % (request.runtime, exc)) from None
    except Exception as exc:  # runtime-specific load failures (bad graph, unsupported op)
        raise _Failed(ERROR_RUNTIME, "%s could not load %s: %s" % (request.runtime, request.model_path,
                                                                  first_line(exc))) from None
    return None, time.perf_counter_ns() - t0


def _loop(infer: Callable[[], Any], count: int, deadline_ns: int, after: Optional[Callable[[], None]] = None
          ) -> Tuple[List[int], bool]:
    """Run ``infer`` ``count`` times (or until the deadline); return each wall time and whether it was cut short."""
    clock = time.perf_counter_ns
    walls = []  # type: List[int]
    for _ in range(count):
        t0 = clock()
        infer()
        t1 = clock()
        walls.append(t1 - t0)
        if after is not None:
            after()
        if t1 >= deadline_ns:
            return walls, len(walls) < count
    return walls, False


def _warm(infer: Callable[[], Any], request: Request, deadline_ns: int) -> int:
    end = time.perf_counter_ns() + int(request.warmup_s * _NS)
    done = 0
    while (done < request.warmup or time.perf_counter_ns() < end) and time.perf_counter_ns() < deadline_ns:
        infer()
        done += 1
    return done


def _unprofiled(request: Request, emit: Progress, deadline_ns: int) -> Dict[str, Any]:
    """Phase 1: the same model without the profiler. Also yields the inputs both phases use."""
    try:
        rt = runtimes.create(request.runtime)
    except runtimes.RuntimeMissing as exc:
        raise _Failed(ERROR_RUNTIME_MISSING, str(exc)) from None
    emit({"event": "phase", "phase": "load"})
    _, load_ns = _load(rt, request, profiled=False)
    try:
        infos = rt.inputs()
        feeds = inputs.load_npz(request.inputs_npz, infos) if request.inputs_npz else \
            inputs.generate(infos, request.shapes, request.batch, request.seed)
    except inputs.InputSpecError as exc:
        raise _Failed(ERROR_INPUT, str(exc)) from None
    infer = rt.bind(feeds)
    if loaded.count() > 0:  # a served agent's kept models: their thread pools rest before this is timed (quiet.py)
        quiet.wait_quiet()
    try:
        t0 = time.perf_counter_ns()
        first = infer()
        first_ns = time.perf_counter_ns() - t0
        emit({"event": "phase", "phase": "warmup"})
        warm = _warm(infer, request, deadline_ns)
        emit({"event": "phase", "phase": "timed"})
        samples, cut = _loop(infer, request.iterations, deadline_ns)
    except Exception as exc:
        raise _Failed(ERROR_RUNTIME, "inference failed: %s" % first_line(exc)) from None
    outputs = []
    if isinstance(first, (list, tuple)):
        for info, value in zip(rt.outputs(), first):
            outputs.append({"name": info.name, "shape": list(getattr(value, "shape", [])),
                            "dtype": str(getattr(value, "dtype", info.dtype))})
    return {"feeds": feeds, "load_ns": load_ns, "first_ns": first_ns, "warmup": warm, "samples": samples,
            "truncated": cut, "outputs": outputs, "version": rt.version()}


def _profiled(request: Request, feeds: Dict[str, Any], emit: Progress, deadline_ns: int) -> Dict[str, Any]:
    """Phase 2: load with the profiler, warm up, run the profiled iterations, read the layers back."""
    rt = runtimes.create(request.runtime)
    emit({"event": "phase", "phase": "profile-load"})
    profiler, _ = _load(rt, request, profiled=True)
    if profiler is None:
        raise _Failed(ERROR_RUNTIME, "%s returned no profiler" % request.runtime)
    try:
        infer = rt.bind(feeds)
        infer()
        emit({"event": "phase", "phase": "profile-warmup"})
        warm = _warm(infer, request, deadline_ns)
        profiler.start()
        emit({"event": "phase", "phase": "profiled"})
        walls, cut = _loop(infer, request.iterations, deadline_ns, after=profiler.record)
        runs = profiler.layers()
    except Exception as exc:
        raise _Failed(ERROR_RUNTIME, "profiled inference failed: %s" % first_line(exc)) from None
    if not runs or not any(runs):
        raise _Failed(ERROR_RUNTIME, "%s's profiler reported no layers for %s" % (request.runtime, request.model_path))
    median = layer_stats.median_run_index(walls)
    notes = list(profiler.notes())
    if cut:
        notes.append("max_duration_s cut the profiled phase short: %d of %d iterations" % (len(walls),
                                                                                           request.iterations))
    info = {"name": rt.name, "version": rt.version()}  # type: Dict[str, Any]
    info.update(rt.details())
    return {"runtime": info, "truncated": cut, "profile": {
        "warmup": warm, "iterations": len(walls), "inference_ns": walls, "layers": layer_stats.aggregate(runs),
        "trace": layer_stats.trace(runs[median]) if median is not None and median < len(runs) else [],
        "trace_source": profiler.trace_source, "notes": notes}}


def profile(request: Request, emit: Progress) -> RawRun:
    """Execute one profile request; every failure comes back as a ``RawRun`` with ``status="error"``."""
    problem = _validate(request)
    if problem:
        return RawRun(status=STATUS_ERROR, error_kind=ERROR_INPUT, error=problem, request=request.to_dict(),
                      agent_version=__version__)
    deadline_ns = time.perf_counter_ns() + int(request.max_duration_s * _NS)
    env = {}  # type: Dict[str, Any]
    try:
        plain = _unprofiled(request, emit, deadline_ns)
        env = environment.collect({request.runtime: plain["version"]})
        gc.collect()  # the unprofiled session is gone before the profiled one loads
        prof = _profiled(request, plain["feeds"], emit, deadline_ns)
    except _Failed as exc:
        return RawRun(status=STATUS_ERROR, error_kind=exc.kind, error=str(exc), request=request.to_dict(),
                      environment=env, agent_version=__version__)
    samples = plain["samples"]
    return RawRun(
        status=STATUS_OK, request=request.to_dict(), runtime=prof["runtime"], samples_ns=samples,
        timed_wall_s=sum(samples) / _NS, timed_inferences=len(samples),
        warmup_done={"iterations": plain["warmup"]}, load_ms=plain["load_ns"] / 1e6,
        first_inference_ms=plain["first_ns"] / 1e6, inputs=inputs.describe(plain["feeds"]), outputs=plain["outputs"],
        truncated=plain["truncated"] or prof["truncated"], environment=env, profile=prof["profile"],
        agent_version=__version__,
    )
