"""The default executor: a thread pool in this process (nothing to install).

Device jobs spend their time waiting on SSH, so threads are enough: the host's CPU is not the bottleneck until
hundreds of devices. Each job carries a cancel token; stopping the run early (Ctrl-C) or giving up on a stuck
job sets it, so running jobs abort their SSH sessions at once (the agents on the devices end themselves).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from ..jobs import DeviceJob
from ..progress import done_event
from ..result import DeviceOutcome
from .base import STUCK_GRACE_S, DeviceEvents, T, stuck_row


class LocalExecutor:
    """Runs jobs on a ``concurrent.futures.ThreadPoolExecutor`` of ``parallel`` threads."""

    name = "local"

    def session(self, resources: dict[str, float]) -> contextlib.AbstractContextManager[None]:
        """Nothing to keep up: the pool lives for one ``execute``."""
        return contextlib.nullcontext()

    def shares_paths(self) -> bool:
        return True

    def map_host(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]]) -> list[T]:
        """One after another in this process (host work is CPU-bound: threads would not make it faster)."""
        return [fn(*args) for args in calls]

    def execute(self, jobs: Sequence[DeviceJob], *, parallel: int, events: DeviceEvents,
                grace_s: float = STUCK_GRACE_S) -> Iterator[tuple[int, DeviceOutcome]]:
        cancels = [threading.Event() for _ in jobs]
        started: dict[int, float] = {}

        def call(index: int, job: DeviceJob) -> DeviceOutcome:
            name = job.device.name
            started[index] = time.monotonic()
            events(name, {"event": "state", "state": "running"})
            row = job(None, lambda event: events(name, event), cancels[index])
            row = row.model_copy(update={"worker": threading.current_thread().name})
            events(name, done_event(row))
            return row

        pool = ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="edgeopt-fleet")
        futures: dict[Future[DeviceOutcome], int] = {pool.submit(call, i, job): i for i, job in enumerate(jobs)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    yield futures[future], _outcome(future, jobs[futures[future]], started.get(futures[future]),
                                                    events)
                now = time.monotonic()
                for future in list(pending):
                    i = futures[future]
                    if i in started and now - started[i] > jobs[i].deadline_s + grace_s:
                        pending.discard(future)
                        cancels[i].set()  # one more try to stop it; its row is final either way
                        row = stuck_row(jobs[i], now - started[i])
                        events(row.device, done_event(row))
                        yield i, row
        finally:
            for cancel in cancels:  # stopped early (Ctrl-C, an error in the caller): abort what still runs
                cancel.set()
            pool.shutdown(wait=False, cancel_futures=True)


def _outcome(future: Future[Any], job: DeviceJob, started: float | None, events: DeviceEvents) -> DeviceOutcome:
    try:
        return future.result()  # its final state event was sent by the worker
    except Exception as exc:  # a job never raises for a device problem; this is a bug, kept to its row
        seconds = time.monotonic() - started if started is not None else 0.0
        row = job.error_row("internal", f"{type(exc).__name__}: {exc}", seconds)
        events(row.device, done_event(row))
        return row
