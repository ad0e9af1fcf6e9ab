"""Frame-paced load: issue frames at a fixed rate, as a camera or a video pipeline would, and count deadline misses.

Frame ``i`` is scheduled at ``t0 + i / fps``. The loop sleeps until then (never busy-waits: a spinning core would
steal from the runtime's threads on a small board), runs one inference, and records its latency and whether it
completed after its deadline ``scheduled + 1 / fps``. Frames are never dropped: when a frame overruns, the next one
starts late (as soon as the previous one finishes) and its lateness counts against its own deadline, which is how
a single-threaded pipeline with a frame queue behaves. Statistics are the host's job (``edgeopt.metrics.deadline``).

Standard library only, Python 3.8 syntax: this module runs on the device.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .protocol import MAX_FRAMES

_NS = 1_000_000_000


def validate(request: Any) -> Optional[str]:
    """Why ``request.pacing_fps`` cannot be run, or None (also None when pacing is off)."""
    fps = request.pacing_fps
    if fps is None:
        return None
    if not isinstance(fps, (int, float)) or isinstance(fps, bool) or not math.isfinite(fps) or fps <= 0:
        return "pacing_fps must be a positive number of frames per second (got %r)" % (fps,)
    if request.streams != 1:
        return "pacing_fps runs one stream of frames: set streams to 1 (got %d)" % request.streams
    return None


def paced_loop(
    infer: Callable[[], Any],
    fps: float,
    frames_min: int,
    min_end_ns: int,
    hard_end_ns: int,
    progress: Optional[Callable[[int], None]] = None,
    progress_every_ns: int = 0,
    clock: Callable[[], int] = time.perf_counter_ns,
    sleep: Callable[[float], None] = time.sleep,
) -> Tuple[List[int], bool, Dict[str, Any]]:
    """Run frames at ``fps`` until ``frames_min`` frames and ``min_end_ns`` are both reached, or ``hard_end_ns``.

    Returns:
        ``(samples_ns, truncated, frames)``: per-frame inference latencies, whether the watchdog ended the loop,
        and the frame facts: ``fps``, ``period_ns``, ``scheduled`` (frames issued), ``completed``, ``misses``
        (completed after their deadline), ``late_starts`` (started after their slot because the previous frame
        was still running), ``max_lateness_ns`` (latest start after its slot), ``response_ns`` (completion minus
        scheduled time, per frame) and ``wall_ns``.
    """
    period_ns = int(round(_NS / fps))
    samples: List[int] = []
    responses: List[int] = []
    misses = 0
    late_starts = 0
    max_lateness = 0
    truncated = False
    t0 = clock()
    next_progress = t0 + progress_every_ns if progress and progress_every_ns > 0 else None
    i = 0
    while True:
        scheduled = t0 + i * period_ns
        now = clock()
        if now < scheduled:
            sleep((scheduled - now) / _NS)
            start = clock()
        else:
            start = now
            if now > scheduled:
                late_starts += 1
        infer()
        end = clock()
        samples.append(end - start)
        responses.append(end - scheduled)
        max_lateness = max(max_lateness, start - scheduled)
        if end > scheduled + period_ns:
            misses += 1
        i += 1
        if (i >= frames_min and end >= min_end_ns) or i >= MAX_FRAMES:
            break
        if end >= hard_end_ns:
            truncated = True
            break
        if next_progress is not None and end >= next_progress:
            progress(i)  # type: ignore[misc]
            next_progress = end + progress_every_ns
    frames = {
        "fps": float(fps),
        "period_ns": period_ns,
        "scheduled": i,
        "completed": i,
        "misses": misses,
        "late_starts": late_starts,
        "max_lateness_ns": max_lateness,
        "response_ns": responses,
        "wall_ns": clock() - t0,
    }
    return samples, truncated, frames


def measure(
    request: Any, infer: Callable[[], Any], start_ns: int, emit: Callable[[Dict[str, Any]], None]
) -> Tuple[List[int], int, bool, Dict[str, Any]]:
    """The timed phase of a paced request: ``(samples_ns, wall_ns, truncated, frames)`` (see :func:`paced_loop`).

    ``request.iterations`` is the minimum number of frames; ``min_duration_s`` and ``max_duration_s`` apply as in
    the back-to-back loop.
    """
    every_ns = int(request.progress_interval_s * _NS)

    def report(done: int) -> None:
        emit({"event": "progress", "phase": "timed", "done": done, "target": request.iterations,
              "min_duration_s": request.min_duration_s,
              "elapsed_s": round((time.perf_counter_ns() - start_ns) / _NS, 3)})

    samples, truncated, frames = paced_loop(
        infer, float(request.pacing_fps), request.iterations,
        start_ns + int(request.min_duration_s * _NS), start_ns + int(request.max_duration_s * _NS),
        report if every_ns > 0 else None, every_ns,
    )
    return samples, time.perf_counter_ns() - start_ns, truncated, frames
