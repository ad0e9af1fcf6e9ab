"""The thread-pool executor with jobs that only sleep: the concurrency bound, the stuck-job net, a job's bug."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from edgeopt.devices.schema import SshAddress
from edgeopt.fleet import FleetDevice, FleetRow, FleetRunner
from edgeopt.fleet.executors import LocalExecutor


@dataclass
class Gauge:
    lock: threading.Lock = field(default_factory=threading.Lock)
    now: int = 0
    peak: int = 0


@dataclass(frozen=True)
class SleepJob:
    device: FleetDevice
    gauge: Gauge
    sleep_s: float = 0.2
    deadline_s: float = 30.0
    crash: bool = False

    def model_ref(self) -> None:
        return None

    def error_row(self, kind, message, seconds):
        return FleetRow(device=self.device.name, target="local", runner="test", status="error", error=message,
                        error_kind=kind, seconds=seconds)

    def __call__(self, blobs=None, progress=None, cancel=None):
        with self.gauge.lock:
            self.gauge.now += 1
            self.gauge.peak = max(self.gauge.peak, self.gauge.now)
        try:
            if self.crash:
                raise ValueError("a bug in a job")
            end = time.monotonic() + self.sleep_s
            while time.monotonic() < end and not (cancel is not None and cancel.is_set()):
                time.sleep(0.01)
        finally:
            with self.gauge.lock:
                self.gauge.now -= 1
        return FleetRow(device=self.device.name, target="local", runner="test", status="ok", seconds=self.sleep_s)


def _devices(n: int) -> list[FleetDevice]:
    addr = SshAddress(host="127.0.0.1", user="root")
    return [FleetDevice(name=f"d{i}", target="local", address=addr) for i in range(n)]


def test_jobs_bound_concurrency_and_rows_keep_device_order():
    gauge, events = Gauge(), []
    fleet = FleetRunner(_devices(6), jobs=2, progress=lambda d, e: events.append((d, e.get("state"))))
    started = time.monotonic()
    rows = fleet.map(lambda d: SleepJob(d, gauge))
    assert [r.device for r in rows] == [f"d{i}" for i in range(6)] and all(r.status == "ok" for r in rows)
    assert gauge.peak == 2 and time.monotonic() - started >= 0.55  # three waves of two
    assert ("d5", "done") in events and ("d0", "queued") in events
    assert fleet.plan()["jobs"] == 2 and not fleet.describe().local
    assert FleetRunner(_devices(3)).jobs == 3  # default: all at once


def test_a_crashing_job_and_a_stuck_job_cost_only_their_own_rows():
    gauge = Gauge()
    devices = _devices(3)
    jobs = [SleepJob(devices[0], gauge), SleepJob(devices[1], gauge, crash=True),
            SleepJob(devices[2], gauge, sleep_s=30.0, deadline_s=0.3)]
    started = time.monotonic()
    rows = dict(LocalExecutor().execute(jobs, parallel=3, events=lambda d, e: None, grace_s=0.5))
    assert time.monotonic() - started < 5  # the stuck one was given up on, and cancelled
    assert rows[0].status == "ok"
    assert rows[1].error_kind == "internal" and "a bug in a job" in rows[1].error
    assert rows[2].error_kind == "deadline" and "did not stop within its deadline" in rows[2].error
