"""``FleetRunner``: a fleet executes one job per device, each through that device's own runner.

It is the third runner beside the local and SSH ones, on the same contract where the contract has a meaning for
many devices: ``name``, :meth:`FleetRunner.describe` (a :class:`~edgeopt.runners.base.RunnerInfo`) and
:meth:`FleetRunner.close`. It does not fan one agent request out: ``run`` / ``evaluate`` / ``profile`` /
``probe`` answer for one place where an agent runs, and a fleet's answer is one row per device, each with its own
deadline and its own failure. So a caller gives it a job factory (``BenchJob`` for a benchmark, ``CheckJob``,
``SetupJob``, qualify's device job), and :meth:`FleetRunner.map` runs one job per selected device on its executor
with bounded concurrency and live progress; each job makes its agent calls through that device's own
:class:`~edgeopt.runners.ssh.SshRunner`, which is the contract's SSH runner. It is therefore not in the runner
contract test's list (``tests/contract/test_runners.py``); docs/fleet.md and docs/architecture.md say why.
A device that fails costs only its own row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InputError
from ..runners.base import RunnerInfo, RunnerKind
from .devices import FleetDevice
from .executors import DeviceEvents, Executor, make_executor
from .executors.base import STUCK_GRACE_S
from .jobs import DeviceJob
from .result import DeviceOutcome


class FleetRunner:
    """Runs one job per device of a fleet.

    Args:
        devices: the selected devices (:func:`edgeopt.fleet.fleet_devices`).
        jobs: devices run at the same time at most (None: all of them).
        executor: ``local`` (thread pool, default), ``ray``, ``ray://HOST:PORT``, or an executor object.
        progress: receives ``(device, event)`` for agent progress and state changes (e.g. :class:`FleetProgress`).
        grace_s: beyond a device's deadline, how long its job may take to stop before it is reported stuck.
    """

    def __init__(self, devices: Sequence[FleetDevice], *, jobs: int | None = None, executor: str | Executor = "local",
                 progress: DeviceEvents | None = None, grace_s: float = STUCK_GRACE_S) -> None:
        if not devices:
            raise InputError("a fleet needs at least one device: select some with --devices")
        if jobs is not None and jobs < 1:
            raise InputError(f"--jobs {jobs}: run at least 1 device at a time (default: all at once)")
        self.devices = list(devices)
        self.jobs = min(jobs or len(self.devices), len(self.devices))
        self.executor = make_executor(executor)
        self.progress = progress
        self.grace_s = grace_s
        self.name = f"fleet:{','.join(d.name for d in self.devices)}"

    def describe(self) -> RunnerInfo:
        """``fleet:NAME,...``, remote, the devices' addresses and their interpreters; contacts nothing."""
        pythons = dict.fromkeys(d.address.python for d in self.devices)
        return RunnerInfo(name=self.name, kind=RunnerKind.REMOTE,
                          address=",".join(d.address.label() for d in self.devices), python=",".join(pythons))

    def plan(self) -> dict[str, Any]:
        """How the fleet runs: executor, concurrency and devices (for results and logs)."""
        return {"name": self.name, "executor": self.executor.name, "jobs": self.jobs,
                "devices": [d.name for d in self.devices]}

    def map(self, make_job: Callable[[FleetDevice], DeviceJob]) -> list[DeviceOutcome]:
        """Run ``make_job(device)`` for every device; rows in device order."""
        return run_jobs([make_job(d) for d in self.devices], parallel=self.jobs, executor=self.executor,
                        progress=self.progress, grace_s=self.grace_s)

    def close(self) -> None:
        """Nothing is held between runs: every job opens and closes its own device connection."""


def run_jobs(jobs: Sequence[DeviceJob], *, parallel: int, executor: Executor, progress: DeviceEvents | None = None,
             grace_s: float = STUCK_GRACE_S) -> list[DeviceOutcome]:
    """Run device jobs on ``executor``, at most ``parallel`` at once; one row per job, in the jobs' order.

    What :meth:`FleetRunner.map` does once it has built its jobs; also used by ``qualify``, whose device jobs
    run through the runners its spec placed (local, ``host:`` or inventory devices).
    """
    events: DeviceEvents = progress or (lambda device, event: None)
    rows: list[DeviceOutcome | None] = [None] * len(jobs)
    for job in jobs:
        events(job.device.name, {"event": "state", "state": "queued"})
    for index, row in executor.execute(jobs, parallel=max(1, parallel), events=events, grace_s=grace_s):
        rows[index] = row
    return [row if row is not None else jobs[i].error_row("internal", "the executor returned no row", 0.0)
            for i, row in enumerate(rows)]
