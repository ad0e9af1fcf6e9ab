"""The Ray executor (``pip install 'edgeopt[ray]'``): Ray's own scheduler places the device jobs.

Each device is a Ray custom resource of capacity 1, ``{"edgeopt-device:NAME": 1}``, declared on the node that
can reach it (``ray start --resources '{"edgeopt-device:pi5-01": 1}'``; for a cluster this executor starts in
this process, on this machine, every selected device). A job asks for its device's resource and no CPU (it
waits on SSH), so Ray serializes work per device and spreads it across devices and nodes. Models travel by
content hash: one ``ray.put`` of the files' bytes when the cluster is not this process's own, materialized
once per node (:mod:`..artifacts`). Progress comes back through a ``ray.util.queue.Queue``; a job past its
deadline (plus grace) is cancelled with ``ray.cancel(force=True)``, which kills its worker and so its SSH
session: the agent on the device then ends itself. Nothing here schedules, queues or calls remotely by hand.

Warm cluster: every device job in flight is a Ray worker process. A cluster's first fleet run (or one with more
devices than any before) starts a worker per job (Python, Ray and edgeopt imports: about a CPU-second each, at
most CPU-count at a time); later runs reuse them. The progress queue is one actor per driver process, reused by
its later fleet runs (an actor per run would start a worker, and kill it, every time). docs/fleet.md.

Where: the Ray instance this process already has; else ``address`` (``auto`` for the cluster ``ray start`` runs
on this machine, a GCS ``HOST:PORT``, or ``ray://HOST:PORT`` for Ray Client); else the cluster ``ray start`` runs
on this machine when one answers and offers every device's resource (:func:`running_cluster`: its address file,
checked by a TCP connect, so a stale file of a dead ``ray start`` is never followed); else a local cluster started
for the run (``address="local"``), which costs ~9-14 s and ~2.5 CPU-s: a line on stderr says so and how to keep
one running. Ray's own log lines (its banner, the token-authentication warning) are kept out of edgeopt's output
(``logging_level=ERROR``, ``log_to_driver=False``); its errors still raise.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import EdgeoptError, InputError
from ..jobs import DeviceJob
from ..progress import done_event
from ..result import DeviceOutcome
from .base import STUCK_GRACE_S, DeviceEvents, T, stuck_row

INSTALL_HINT = "pip install 'edgeopt[ray]'"
# Agent progress lines forwarded from a worker at most this often per device (phases always go through).
_PROGRESS_EVERY_S = 1.0
# Ray's logger level for ray.init: its INFO banner and WARNING lines (token authentication) stay out of our output.
_RAY_LOG_LEVEL = logging.ERROR
_PROBE_S = 0.5  # TCP connect to a cluster's GCS: a live one answers on loopback in microseconds


def _address_file() -> Path:
    """Where ``ray start`` records the cluster it started (Ray's rule: ``$RAY_TMPDIR``, ``$TMPDIR``, ``/tmp``)."""
    base = os.environ.get("RAY_TMPDIR") or (os.environ.get("TMPDIR") if sys.platform.startswith("linux") else None)
    return Path(base or "/tmp") / "ray" / "ray_current_cluster"


def running_cluster(address_file: Path | None = None) -> str | None:
    """The GCS ``HOST:PORT`` of the cluster ``ray start`` runs on this machine, when its GCS accepts a connection;
    None when there is no such file or nothing listens there (a killed ``ray start`` leaves the file behind)."""
    try:
        text = (address_file or _address_file()).read_text(encoding="utf-8").strip()
        host, _, port = text.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=_PROBE_S):
            return text
    except (OSError, ValueError):
        return None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def import_ray() -> Any:
    """The ``ray`` module, or an InputError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError(f"--executor ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


class _QueueSink:
    """A picklable progress sink: puts ``(run, device, event)`` on a Ray queue, throttling progress ticks."""

    def __init__(self, queue: Any, device: str, run: str = "") -> None:
        self.queue, self.device, self.run = queue, device, run
        self._last = 0.0

    def __call__(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        if event.get("event") == "progress" and now - self._last < _PROGRESS_EVERY_S:
            return
        self._last = now
        with contextlib.suppress(Exception):  # progress is best effort: a full or closed queue never fails a run
            self.queue.put_nowait((self.run, self.device, event))


def run_on_worker(job: DeviceJob, blobs: Mapping[str, bytes] | None, queue: Any, run: str = "") -> DeviceOutcome:
    """The Ray task body (module level, so workers import it by name)."""
    import ray

    sink = _QueueSink(queue, job.device.name, run)
    sink({"event": "state", "state": "running"})
    row = job(blobs, sink)
    node = ray.get_runtime_context().get_node_id()
    return row.model_copy(update={"worker": f"ray:{node[:12]}"})


class RayExecutor:
    """Runs device jobs as Ray tasks.

    Args:
        address: the cluster to join (``auto``, ``HOST:PORT``, ``ray://HOST:PORT``); None: the one ``ray start``
            runs on this machine if it offers every device, else start a local one.
        shared_paths: workers can open the host's model path (None: only when this process started the cluster).
        name: the result's ``executor``.
        notice: receives the one-line notes on which cluster is used or started (default: stderr).
    """

    def __init__(self, address: str | None = None, *, shared_paths: bool | None = None, name: str | None = None,
                 notice: Callable[[str], None] | None = None) -> None:
        self.address = address
        self.name = name or (f"ray:{address}" if address and not address.startswith("ray://") else address or "ray")
        self.shared_paths = shared_paths
        self.notice = notice or _stderr
        self.joined: str | None = None  # the running cluster a plain ``ray`` joined
        self._started_here = False
        self._held = 0

    def _connect(self, ray: Any, resources: dict[str, float]) -> None:
        if ray.is_initialized():
            return
        if self.address:
            try:
                ray.init(address=self.address, log_to_driver=False, logging_level=_RAY_LOG_LEVEL)
            except ConnectionError as exc:
                raise InputError(f"--executor {self.name}: no Ray cluster there ({' '.join(str(exc).split())}); "
                                 "start it (ray start --head) or use --executor ray for a local one") from None
            return
        found = running_cluster()
        if found is not None and self._join(ray, found, resources):
            return
        wanted = f" --resources '{json.dumps(resources)}'" if resources else ""
        self.notice("edgeopt: starting a local Ray cluster for this run (~10 s and ~2.5 CPU-s; stopped at its end); "
                    f"keep one running to skip that: ray start --head{wanted} (--executor ray then uses it, as does "
                    "ray:auto)")
        ray.init(address="local", resources=resources, include_dashboard=False, log_to_driver=False,
                 logging_level=_RAY_LOG_LEVEL)
        self._started_here = True

    def _join(self, ray: Any, address: str, resources: dict[str, float]) -> bool:
        """Join the running cluster at ``address`` when it offers every resource in ``resources``.

        Through ``address="auto"`` (Ray reads the same file): only a cluster found that way gets the local
        authentication token (``~/.ray/auth_token``) that ``ray start`` enabled; an explicit address does not.
        """
        try:
            ray.init(address="auto", log_to_driver=False, logging_level=_RAY_LOG_LEVEL)
        except Exception as exc:  # not a Ray GCS after all, or it went away: a local cluster it is
            with contextlib.suppress(Exception):
                ray.shutdown()
            self.notice(f"edgeopt: the Ray cluster at {address} (ray start) did not answer "
                        f"({' '.join(str(exc).split())[:120]})")
            return False
        offered = ray.cluster_resources()
        missing = sorted(r for r in resources if offered.get(r, 0) < 1)
        if missing:
            ray.shutdown()
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            self.notice(f"edgeopt: the Ray cluster running at {address} offers no {missing[0]}{more} (ray start "
                        "--resources): not used")
            return False
        self.joined = address
        self.notice(f"edgeopt: using the Ray cluster running at {address} (ray start; no start-up cost)")
        return True

    def _release(self, ray: Any) -> None:
        """Stop the cluster this executor started, once nothing holds it."""
        if self._started_here and not self._held:
            ray.shutdown()
            self._started_here = False

    @contextlib.contextmanager
    def session(self, resources: dict[str, float]) -> Iterator[None]:
        """Connect (or start a local cluster offering ``resources``) and keep it up until the block ends."""
        ray = import_ray()
        self._connect(ray, resources)
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self._release(ray)

    def shares_paths(self) -> bool:
        """Workers open the host's paths only on a cluster this process started (or when told so)."""
        return self._started_here if self.shared_paths is None else self.shared_paths

    def map_host(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]]) -> list[T]:
        """Each call as an ordinary Ray task of one CPU (``ray.remote(num_cpus=1)``), placed by Ray on any node.

        Raises:
            EdgeoptError: a task's worker died (the task itself reports its failures in its result).
        """
        ray = import_ray()
        with self.session({}):
            task = ray.remote(num_cpus=1, max_retries=0)(fn)
            puts: dict[int, Any] = {}

            def once(arg: Any) -> Any:  # an object several calls share (the inputs' bytes) goes in once
                if not (isinstance(arg, (dict, bytes)) and arg and sum(arg is a for c in calls for a in c) > 1):
                    return arg
                if id(arg) not in puts:
                    puts[id(arg)] = ray.put(arg)
                return puts[id(arg)]

            refs = [task.options(name=f"edgeopt-host:{getattr(fn, '__name__', 'task')}").remote(
                *(once(a) for a in args)) for args in calls]
            try:
                return list(ray.get(refs))
            except Exception as exc:  # a worker lost (killed, out of memory): the host step failed as a whole
                raise EdgeoptError(f"a Ray host task failed: {type(exc).__name__}: "
                                   f"{' '.join(str(exc).split())[:300]}") from None

    def execute(self, jobs: Sequence[DeviceJob], *, parallel: int, events: DeviceEvents,
                grace_s: float = STUCK_GRACE_S) -> Iterator[tuple[int, DeviceOutcome]]:
        ray = import_ray()
        self._connect(ray, {job.device.resource: 1.0 for job in jobs})
        offered = ray.cluster_resources()
        queue = _progress_queue()
        try:
            runnable = []
            for i, job in enumerate(jobs):
                if offered.get(job.device.resource, 0) < 1:
                    row = job.error_row("unreachable", _no_resource(job), 0.0)
                    events(row.device, done_event(row))
                    yield i, row
                else:
                    runnable.append(i)
            yield from self._run(ray, jobs, runnable, queue, parallel, events, grace_s)
        finally:  # the progress queue stays for this process's next fleet run on the same cluster
            self._release(ray)

    def _blobs(self, ray: Any, jobs: Sequence[DeviceJob]) -> dict[str, Any]:
        """One object-store reference per distinct model (by content hash), unless workers share our paths."""
        shared = self.shares_paths()
        refs: dict[str, Any] = {}
        for job in jobs:
            model = job.model_ref()
            if model is not None and not shared and model.key not in refs:
                refs[model.key] = ray.put(model.read_blobs())
        return refs

    def _run(self, ray: Any, jobs: Sequence[DeviceJob], todo: list[int], queue: Any, parallel: int,
             events: DeviceEvents, grace_s: float) -> Iterator[tuple[int, DeviceOutcome]]:
        blobs = self._blobs(ray, [jobs[i] for i in todo])
        task = ray.remote(run_on_worker)
        inflight: dict[Any, int] = {}
        started: dict[int, float] = {}
        names = {jobs[i].device.name: i for i in todo}
        waiting = list(todo)
        run = uuid.uuid4().hex[:12]  # tells this run's progress from a late event of an earlier one
        try:
            while waiting or inflight:
                while waiting and len(inflight) < max(1, parallel):
                    i = waiting.pop(0)
                    model = jobs[i].model_ref()
                    ref = task.options(resources={jobs[i].device.resource: 1}, num_cpus=0, max_retries=0,
                                       name=f"edgeopt-fleet:{jobs[i].device.name}").remote(
                        jobs[i], blobs.get(model.key) if model is not None else None, queue, run)
                    inflight[ref] = i
                ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
                for name, event in _drain(queue, run):
                    if event.get("state") == "running" and name in names:
                        started.setdefault(names[name], time.monotonic())
                    events(name, event)
                finished = []
                for ref in ready:
                    i = inflight.pop(ref)
                    finished.append((i, _result(ray, ref, jobs[i], started.get(i))))
                now = time.monotonic()
                for ref, i in list(inflight.items()):
                    if i in started and now - started[i] > jobs[i].deadline_s + grace_s:
                        ray.cancel(ref, force=True)
                        del inflight[ref]
                        finished.append((i, stuck_row(jobs[i], now - started[i])))
                for i, row in finished:  # before the next submission takes the slot
                    events(row.device, done_event(row))
                    yield i, row
        finally:
            for ref in inflight:  # stopped early: kill the workers, so their SSH sessions (and agents) end
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)


def _progress_queue() -> Any:
    """This process's progress queue on the current cluster: one small actor, created by the first fleet run and
    reused by the next ones (a new actor per run would start, and then kill, a worker process each time)."""
    from ray.util.queue import Queue

    return Queue(actor_options={"num_cpus": 0, "name": f"edgeopt-fleet-progress-{os.getpid()}",
                                "get_if_exists": True})


def _drain(queue: Any, run: str) -> list[tuple[str, dict[str, Any]]]:
    """This run's ``(device, event)`` pairs waiting on the queue (another run's are dropped)."""
    try:
        size = queue.qsize()
        items = list(queue.get_nowait_batch(size)) if size else []
    except Exception:  # a queue that went away takes only the progress display with it
        return []
    return [(device, event) for tag, device, event in items if tag == run]


def _result(ray: Any, ref: Any, job: DeviceJob, started: float | None) -> DeviceOutcome:
    try:
        return ray.get(ref)
    except Exception as exc:  # the worker died (killed, out of memory, node lost): this device's row only
        seconds = time.monotonic() - started if started is not None else 0.0
        text = " ".join(str(exc).split())[:300]
        return job.error_row("internal", f"the Ray worker running this device failed: {type(exc).__name__}: {text}",
                             seconds)


def _no_resource(job: DeviceJob) -> str:
    res = job.device.resource
    return (f"no Ray node offers the resource {res}: start the node that reaches {job.device.name} with "
            f"ray start --resources '{{\"{res}\": 1}}' (docs/fleet.md)")
