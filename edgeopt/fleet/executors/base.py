"""What an executor does: run one job per device, at most ``parallel`` at once, and yield rows as they finish.

Executors do no scheduling of their own beyond that bound: the local one is a standard thread pool, the Ray
one hands each job to Ray's scheduler with the device's custom resource.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from ..jobs import DeviceJob
from ..result import DeviceOutcome

# A device event (agent progress, or {"event": "state", "state": "running" | "done" | "error"}) by device name.
DeviceEvents = Callable[[str, dict[str, Any]], None]
# Beyond its deadline, how long a job may take to stop (its watchdog aborts the SSH session) before the executor
# gives up on it and reports the device as stuck.
STUCK_GRACE_S = 30.0

T = TypeVar("T")


class Executor(Protocol):
    """Runs device jobs; ``name`` appears in the fleet result's ``executor``."""

    name: str

    def execute(self, jobs: Sequence[DeviceJob], *, parallel: int, events: DeviceEvents,
                grace_s: float = STUCK_GRACE_S) -> Iterator[tuple[int, DeviceOutcome]]:
        """Yield ``(index into jobs, row)`` for every job, in completion order.

        Each device's final ``state`` event (:func:`edgeopt.fleet.progress.done_event`) is sent before the next
        job takes its slot, so a progress display never sees more than ``parallel`` devices running.
        """
        ...

    def session(self, resources: dict[str, float]) -> AbstractContextManager[None]:
        """Keep the executor's workers (a Ray cluster it starts, with ``resources``) up across several calls: a
        fleet sweep's host tasks, then its device jobs."""
        ...

    def shares_paths(self) -> bool:
        """Whether workers open this host's paths (else files travel as bytes, by content hash)."""
        ...

    def map_host(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]]) -> list[T]:
        """``fn(*args)`` for every ``args`` in ``calls``, as host-side CPU work (here: in order, in this process;
        Ray: ordinary tasks of one CPU each, on any node); results in the calls' order. ``fn`` is a module-level
        function that reports its failures in its result rather than raising."""
        ...


def stuck_row(job: DeviceJob, seconds: float) -> DeviceOutcome:
    """The row of a job that did not stop within its deadline plus the grace period."""
    return job.error_row("deadline", f"did not stop within its deadline of {job.deadline_s:g} s (+ grace): the "
                                     "device or its link hangs; check it (edgeopt devices check)", seconds)
