"""The measurement loop. The harness owns timing; runtimes only load and infer.

Order of a run: read baseline memory -> load (timed) -> in a served agent holding other models, a wait until
their thread pools rest (quiet.py) -> first inference (timed) -> warm-up (by count and time) -> timed phase (until
both a minimum count and a minimum duration are met, or the watchdog; the machine's CPU use by other processes
sampled around it: ``environment["cpu_during_timed"]``, cpu_share.py) -> peak memory.
Per-inference samples are kept raw; statistics are computed on the host.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from . import (
    __version__,
    cpu_share,
    environment,
    inputs,
    loaded,
    memory,
    paced,
    power,
    quiet,
    runtimes,
    static_shapes,
)
from .protocol import (
    ERROR_INPUT,
    ERROR_RUNTIME,
    ERROR_RUNTIME_MISSING,
    MAX_SAMPLES,
    STATUS_ERROR,
    STATUS_OK,
    RawRun,
    Request,
    TensorInfo,
)
from .runtimes.base import Runtime
from .runtimes.generative import NOT_A_GRAPH

Progress = Callable[[Dict[str, Any]], None]

_NS = 1_000_000_000


def _error(request: Request, kind: str, message: str, env: Optional[Dict[str, Any]] = None) -> RawRun:
    return RawRun(
        status=STATUS_ERROR,
        error=message,
        error_kind=kind,
        request=request.to_dict(),
        environment=env or {},
        agent_version=__version__,
    )


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _validate(request: Request) -> Optional[str]:
    if request.iterations < 1:
        return "iterations must be >= 1 (got %d)" % request.iterations
    if request.warmup < 0:
        return "warmup must be >= 0 (got %d)" % request.warmup
    if request.streams < 1:
        return "streams must be >= 1 (got %d)" % request.streams
    if request.batch < 1:
        return "batch must be >= 1 (got %d)" % request.batch
    if request.min_duration_s < 0 or request.warmup_s < 0:
        return "durations must be >= 0"
    if request.max_duration_s <= 0:
        return "max_duration_s must be > 0 (got %s)" % request.max_duration_s
    try:
        power.parse_settings(request.energy)
    except ValueError as exc:
        return str(exc)
    return paced.validate(request)


def _timed_loop(
    infer: Callable[[], Any],
    iterations: int,
    min_end_ns: int,
    hard_end_ns: int,
    progress: Optional[Callable[[int], None]],
    progress_every_ns: int,
    most: int = MAX_SAMPLES,
) -> Tuple[List[int], bool]:
    """One stream: time ``infer`` until ``iterations`` and ``min_end_ns`` are both reached, ``most`` samples are
    kept (:data:`~edgeopt_agent.protocol.MAX_SAMPLES` shared by the streams), or ``hard_end_ns``."""
    samples: List[int] = []
    append = samples.append
    clock = time.perf_counter_ns
    n = 0
    next_progress = clock() + progress_every_ns if progress else hard_end_ns + 1
    while True:
        t0 = clock()
        infer()
        t1 = clock()
        append(t1 - t0)
        n += 1
        if (n >= iterations and t1 >= min_end_ns) or n >= most:
            return samples, False
        if t1 >= hard_end_ns:
            return samples, True
        if t1 >= next_progress:
            progress(n)  # type: ignore[misc]
            next_progress = t1 + progress_every_ns


def _measure_streams(
    request: Request, bind: Callable[[], Callable[[], Any]], start_ns: int, emit: Progress
) -> Tuple[List[int], int, bool]:
    """Run the timed phase on ``request.streams`` streams; return samples, wall ns and truncation."""
    min_end = start_ns + int(request.min_duration_s * _NS)
    hard_end = start_ns + int(request.max_duration_s * _NS)
    every_ns = int(request.progress_interval_s * _NS)
    most = max(1, MAX_SAMPLES // max(1, request.streams))

    def report(done: int) -> None:
        emit({"event": "progress", "phase": "timed", "done": done * request.streams,
              "target": request.iterations * request.streams, "min_duration_s": request.min_duration_s,
              "elapsed_s": round((time.perf_counter_ns() - start_ns) / _NS, 3)})

    if request.streams == 1:
        samples, truncated = _timed_loop(bind(), request.iterations, min_end, hard_end,
                                         report if every_ns > 0 else None, every_ns, most)
        return samples, time.perf_counter_ns() - start_ns, truncated

    results: List[Any] = [None] * request.streams
    errors: List[BaseException] = []
    barrier = threading.Barrier(request.streams)
    infers = [bind() for _ in range(request.streams)]

    def worker(index: int) -> None:
        try:
            barrier.wait()
            results[index] = _timed_loop(infers[index], request.iterations, min_end, hard_end,
                                         report if (index == 0 and every_ns > 0) else None, every_ns, most)
        except BaseException as exc:  # surfaced below as data, never a crash
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(request.streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter_ns() - start_ns
    if errors:
        raise errors[0]
    samples: List[int] = []
    truncated = False
    for stream_samples, stream_truncated in results:
        samples.extend(stream_samples)
        truncated = truncated or stream_truncated
    return samples, wall, truncated


class _Failed(Exception):
    """A step of :func:`run` failed; ``result`` is the error ``RawRun`` it returns."""

    def __init__(self, result: RawRun) -> None:
        super().__init__(result.error)
        self.result = result


class _Timed(NamedTuple):
    """What the warm-up and the timed phase measured."""

    warmup_iterations: int
    warmup_ns: int
    samples: List[int]
    wall_ns: int
    truncated: bool
    frames: Dict[str, Any]
    power: Dict[str, Any]


def run(request: Request, emit: Progress) -> RawRun:
    """Execute one measurement request; every failure comes back as a ``RawRun`` with ``status="error"``."""
    problem = _validate(request)
    if problem:
        return _error(request, ERROR_INPUT, problem)
    held = loaded.key(request)  # a served agent asked to keep models (loaded.py); None otherwise
    try:
        rt = loaded.take(held)
        reused = rt is not None
        if rt is None:
            rt = _create(request)
        env = environment.collect({rt.name: rt.version()})
        baseline_kb = memory.vm_hwm_kb()
        if reused:
            emit({"event": "phase", "phase": "load"})
        load_ns = 0 if reused else _load(rt, request, env, emit)
        if loaded.count() > 0:  # a served agent holds other models: their thread pools rest first (quiet.py)
            env["quiesce"] = quiet.wait_quiet()
        feeds = _feeds(rt, request, env)
        infer = rt.bind(feeds)
        first_out, first_ns = _first_inference(infer, request, env)
        timed = _warm_up_and_time(rt, feeds, infer, request, env, emit, reused)
    except _Failed as failed:
        return failed.result
    outputs = _describe_outputs(rt.outputs(), first_out)
    runtime_info: Dict[str, Any] = {"name": rt.name, "version": rt.version()}
    runtime_info.update(rt.details())
    if reused:
        runtime_info["reused_load"] = True
    loaded.keep(held, rt, request.model_path)
    return RawRun(
        status=STATUS_OK,
        request=request.to_dict(),
        runtime=runtime_info,
        samples_ns=timed.samples,
        timed_wall_s=timed.wall_ns / _NS,
        timed_inferences=len(timed.samples),
        warmup_done={"iterations": timed.warmup_iterations, "duration_s": round(timed.warmup_ns / _NS, 6)},
        load_ms=load_ns / 1e6,
        first_inference_ms=first_ns / 1e6,
        memory_kb={"baseline": baseline_kb, "peak": memory.vm_hwm_kb()},
        inputs=inputs.describe(feeds),
        outputs=outputs,
        truncated=timed.truncated,
        environment=env,
        power=timed.power,
        frames=timed.frames,
        agent_version=__version__,
    )


def _create(request: Request) -> Runtime:
    """The request's runtime backend (an unknown name or a missing package is an error run)."""
    try:
        rt = runtimes.create(request.runtime)
    except KeyError as exc:
        raise _Failed(_error(request, ERROR_INPUT, str(exc.args[0]))) from exc
    except runtimes.RuntimeMissing as exc:
        raise _Failed(_error(request, ERROR_RUNTIME_MISSING, str(exc), environment.collect())) from exc
    if getattr(rt, "generative", False):  # an LLM folder has no single forward pass: the generate command times it
        raise _Failed(_error(request, ERROR_INPUT, NOT_A_GRAPH % rt.name))
    return rt


def _load(rt: Runtime, request: Request, env: Dict[str, Any], emit: Progress) -> int:
    """Load the model; return the load time in ns."""
    # The shapes this run feeds, known before loading: runtimes compile for them (static_shapes.py).
    rt.expect_inputs(dict(request.shapes, **static_shapes.npz_shapes(request.inputs_npz)), request.batch)
    emit({"event": "phase", "phase": "load"})
    t0 = time.perf_counter_ns()
    try:
        rt.load(request.model_path, dict(request.runtime_options), request.threads)
    except ValueError as exc:
        raise _Failed(_error(request, ERROR_INPUT, "%s: %s" % (request.runtime, exc), env)) from exc
    except Exception as exc:  # runtime-specific load failures (bad graph, unsupported op)
        raise _Failed(_error(request, ERROR_RUNTIME, "%s could not load %s: %s"
                             % (request.runtime, request.model_path, first_line(exc)), env)) from exc
    return time.perf_counter_ns() - t0


def _feeds(rt: Runtime, request: Request, env: Dict[str, Any]) -> Dict[str, Any]:
    """The inputs: the request's ``.npz`` file, or random data of the model's (or the requested) shapes."""
    try:
        in_infos = rt.inputs()
        if request.inputs_npz:
            return inputs.load_npz(request.inputs_npz, in_infos)
        return inputs.generate(in_infos, request.shapes, request.batch, request.seed)
    except inputs.InputSpecError as exc:
        raise _Failed(_error(request, ERROR_INPUT, str(exc), env)) from exc


def _first_inference(infer: Callable[[], Any], request: Request, env: Dict[str, Any]) -> Tuple[Any, int]:
    """Run the first (cold) inference; return its outputs and its time in ns."""
    t0 = time.perf_counter_ns()
    try:
        first_out = infer()
    except Exception as exc:
        raise _Failed(_error(request, ERROR_RUNTIME, "first inference failed: %s" % first_line(exc), env)) from exc
    return first_out, time.perf_counter_ns() - t0


def _warm_up_and_time(
    rt: Runtime, feeds: Dict[str, Any], infer: Callable[[], Any], request: Request, env: Dict[str, Any], emit: Progress,
    reused: bool = False,
) -> _Timed:
    """Warm up (by count and time), then the timed phase (free-running streams or frame-paced), metered.

    ``reused``: a model a served agent kept loaded from an earlier request (loaded.py), warmed up for
    ``warmup``/``warmup_s`` then: at most :data:`loaded.REUSED_WARMUP` inferences now and no minimum duration (a
    sweep's interleaved rounds reuse each level's model several times; 0.2 s of warm-up per round was ~10 % of a
    PP-OCRv4 rec sweep, the 5-inference count ~10 % of a PP-OCRv4 det confirmation round)."""
    meter = power.PowerSession.open(request.energy)  # no sensor found: an estimate is made on the host
    if meter.measuring:
        emit({"event": "phase", "phase": "idle"})
        meter.idle()
    emit({"event": "phase", "phase": "warmup"})
    w_start = time.perf_counter_ns()
    w_min_end = w_start + (0 if reused else int(request.warmup_s * _NS))
    w_count = min(request.warmup, loaded.REUSED_WARMUP) if reused else request.warmup
    w_done = 0
    try:
        while w_done < w_count or time.perf_counter_ns() < w_min_end:
            infer()
            w_done += 1
        w_ns = time.perf_counter_ns() - w_start
        emit({"event": "phase", "phase": "timed"})
        share = cpu_share.CpuShare()  # who else used the CPUs during the timed phase (cpu_share.py)
        meter.start()
        frames = {}  # type: Dict[str, Any]
        if request.pacing_fps is not None:  # frame-paced load (paced.py); the timed loop is not used then
            samples, wall_ns, truncated, frames = paced.measure(request, rt.bind(feeds), time.perf_counter_ns(), emit)
        else:
            samples, wall_ns, truncated = _measure_streams(request, lambda: rt.bind(feeds), time.perf_counter_ns(),
                                                           emit)
        meter.stop()
        env["cpu_during_timed"] = share.stop()
        # The last progress event carries the run's true totals, so the last progress line agrees with the result:
        # elapsed_s unrounded, as timed_wall_s (rounded to ms first, 0.5049 s printed as 0.51 against 0.50)
        emit({"event": "progress", "phase": "timed", "final": True, "done": len(samples),
              "target": request.iterations * request.streams, "elapsed_s": wall_ns / _NS})
    except Exception as exc:
        meter.close()
        raise _Failed(_error(request, ERROR_RUNTIME, "inference failed: %s" % first_line(exc), env)) from exc
    power_report = meter.report()
    meter.close()
    return _Timed(w_done, w_ns, samples, wall_ns, truncated, frames, power_report)


def _describe_outputs(out_infos: List[TensorInfo], first_out: Any) -> List[Dict[str, Any]]:
    """Name, shape and dtype of each output, from the first inference's values."""
    outputs = []
    if isinstance(first_out, (list, tuple)):
        for info, value in zip(out_infos, first_out):
            shape = list(getattr(value, "shape", []))
            outputs.append({"name": info.name, "shape": shape, "dtype": str(getattr(value, "dtype", info.dtype))})
    return outputs
