"""One agent process for many requests: ``python -m edgeopt_agent serve`` behind the runner interface.

A sweep sends the local agent ~130 short requests (evaluations of every level and INT8 trial, the interleaved
confirmation and ranking rounds); each one-shot agent paid a process start and the runtimes' imports (0.4-0.6 s
here, up to half of an evaluation), ~60 % of a PP-OCRv4 rec sweep's wall time in all. A served agent answers the
same requests, one JSON line each, in one process: same request, same result, same lock per request, same
watchdog, same read budgets; only the process (and so its imports and thread pools) is shared.

What a shared process changes, and so what does not go through it: ``load_ms`` and the first inference are warm
(imports and kernels already in memory; with ``keep_loaded`` a repeated ``run`` of the same model does not load it
again at all: ``load_ms`` 0, ``runtime.reused_load``), and the peak-memory counter is reset before each request
(Linux; the ``start`` event says ``peak_reset``) but the allocator keeps what earlier requests freed. A sweep
therefore measures each level's first pass, evaluations, profiles and the confirmation/ranking rounds with the
served one, and a level's memory and cold numbers with a short fresh agent (edgeopt/sweep/memory_probe.py).
``generate`` (memory per LLM cell) is never served.

``EDGEOPT_AGENT_SERVE=0`` turns serving off (every request a fresh process), e.g. to compare the two.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import RawRun, Request

from ..errors import RunnerError
from .agent_exit import AgentTrace
from .agent_pipe import AgentPipe
from .agent_schema import result_text
from .base import AgentCommand, ProgressSink, Runner, RunnerInfo, parse_progress_line, parse_result
from .event_gate import EventGate
from .limits import LineTail, ReadLimits, flood_error

# Commands the served agent answers (its SERVED_COMMANDS); others go to a fresh agent.
SERVED = (AgentCommand.RUN, AgentCommand.EVALUATE, AgentCommand.PROFILE)
# Seconds to wait for a request's last stderr event after its result arrived (the two pipes race).
TAIL_WAIT_S = 5.0
# Seconds a served agent gets to end after its stdin closes before it is killed.
CLOSE_WAIT_S = 5.0
ENV_SWITCH = "EDGEOPT_AGENT_SERVE"
# Receives the ``{"event": "info", "message": ...}`` of a session that goes on one-shot.
Info = Callable[[dict[str, Any]], None]
_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ServeSpec:
    """How to start the served agent: ``start`` returns a running ``serve`` agent's pipe (a local subprocess, an
    SSH channel: :mod:`.agent_pipe`); ``where`` names it in messages; ``grace_s``: seconds beyond a request's
    ``max_duration_s`` before it is killed."""

    start: Callable[[], AgentPipe]
    where: str
    grace_s: float


class ServeUnavailable(RunnerError):
    """The agent there cannot serve: it ended before answering its first request with any event (an agent too
    old to know ``serve``, an interpreter that does not start), or the transport refused to start it. The runner
    then goes on one-shot (:class:`ServedRunner`); never shown as an error."""


class _Request:
    """The bookkeeping of the request in flight: its stderr tail, events and the end-of-request mark."""

    def __init__(self, limits: ReadLimits, progress: ProgressSink | None, where: str) -> None:
        self.trace = AgentTrace()
        self.done = threading.Event()
        self.gate = EventGate(progress, where)
        self.tail = LineTail(limits.stderr_bytes, self.on_line)

    def on_line(self, line: str) -> bool:
        event = parse_progress_line(line)
        if event is None:
            return False
        if event.get("event") == "served":
            self.done.set()
            return True
        self.trace.observe(event)
        self.gate(event)
        return True


class ServedAgent:
    """One ``edgeopt_agent serve`` agent behind an :class:`AgentPipe`: started on the first request, restarted after
    it died, closed by :meth:`close`. Requests are answered one at a time (a lock), so one runner's calls never
    overlap."""

    def __init__(self, spec: ServeSpec) -> None:
        self.spec = spec
        self._proc: AgentPipe | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._current: _Request | None = None
        self._cap = 0
        self._over = False
        self._fresh = False  # started, and no request of it has said anything yet
        self._lock = threading.Lock()
        self._sink_lock = threading.Lock()
        self.started = 0  # processes started (1 unless one died)
        self.answered = 0

    def call(self, command: AgentCommand, request: Request, progress: ProgressSink | None,
             keep_loaded: bool = False) -> RawRun:
        """Send one request, wait for its result within the request's deadline (``keep_loaded``: a ``run`` may take
        the model an earlier run loaded and keeps its own, edgeopt_agent/loaded.py).

        Raises:
            ServeUnavailable: the agent cannot serve (nothing of the request was done: send it one-shot).
            RunnerError: the agent could not start, died (its signal and phase named), flooded a channel, outlived
                the deadline (then it is killed; the next request starts a new one) or its link was lost.
        """
        with self._lock:
            limits = ReadLimits.for_request(request)
            job = _Request(limits, progress, self.spec.where)
            with self._sink_lock:  # before the agent starts: what it writes at start-up is this request's answer too
                self._current, self._cap, self._over = job, limits.result_bytes, False
            try:
                proc = self._ensure()
                line = self._exchange(proc, command, request, keep_loaded)
                return self._answer(proc, job, line)
            except BaseException:  # a timeout, a lost link, Ctrl-C, SIGTERM: the agent must not outlive the request
                self._kill()
                raise
            finally:
                job.gate.close()

    def _exchange(self, proc: AgentPipe, command: AgentCommand, request: Request, keep_loaded: bool) -> bytes | None:
        """Write the request line; the result line (None: the agent ended first)."""
        message = {"command": command.value, "request": request.to_dict(), "keep_loaded": keep_loaded}
        payload = (json.dumps(message) + "\n").encode()
        limit_s = request.max_duration_s + self.spec.grace_s
        try:
            proc.send(payload)
        except OSError:
            return None
        try:
            return self._lines.get(timeout=limit_s)
        except queue.Empty:
            raise RunnerError(f"the served agent on {self.spec.where} did not answer within {limit_s:.0f} s and "
                              "was killed: raise --max-duration or check the model") from None

    def _answer(self, proc: AgentPipe, job: _Request, line: bytes | None) -> RawRun:
        """The result of ``line``; an ended agent's message when there is none."""
        where = self.spec.where
        fresh, self._fresh = self._fresh, False
        if line is None:
            status = proc.wait()  # a lost link raises here: the request failed, the next one reconnects
            job.done.wait(TAIL_WAIT_S)  # the stderr pump closes the tail at the end of the stream
            if self._over:
                raise flood_error(where, "stdout (the result)", self._cap)
            if job.tail.flooded:
                raise flood_error(where, "stderr", job.tail.limit)
            if fresh and job.trace.events == 0:
                raise ServeUnavailable(f"the agent on {where} did not serve (exit {status}; "
                                       f"{job.tail.text() or 'no output'})")
            return parse_result("", job.tail.text(), where, status, job.trace)
        job.done.wait(TAIL_WAIT_S)
        with self._sink_lock:
            self._current = None
        if job.tail.flooded:
            raise flood_error(where, "stderr", job.tail.limit)
        self.answered += 1
        return parse_result(result_text(line, where), job.tail.text(), where, 0, job.trace)

    def _ensure(self) -> AgentPipe:
        if self._proc is not None and self._proc.running():
            return self._proc
        old, self._proc = self._proc, None
        if old is not None:
            old.kill()
        proc = self.spec.start()
        self._proc, self._lines, self._fresh = proc, queue.Queue(), True
        self.started += 1
        for target in (self._pump_stdout, self._pump_stderr):
            threading.Thread(target=target, args=(proc, self._lines), daemon=True).start()
        return proc

    def _pump_stdout(self, proc: AgentPipe, lines: queue.Queue[bytes | None]) -> None:
        """Result lines into ``lines`` (None at the end); a line past the request's budget kills the agent."""
        buf = bytearray()
        while not self._over:
            piece = proc.read_stdout()
            if not piece:
                break
            buf += piece
            while (end := buf.find(b"\n")) >= 0 and end < self._cap:
                lines.put(bytes(buf[:end + 1]))
                del buf[:end + 1]
            if len(buf) > self._cap:
                self._over = True
                proc.kill()
        lines.put(None)

    def _pump_stderr(self, proc: AgentPipe, lines: queue.Queue[bytes | None]) -> None:
        """Stderr into the tail of the request in flight, from the agent's start on (lines between requests are
        dropped)."""
        while True:
            chunk = proc.read_stderr()
            if not chunk:
                break
            with self._sink_lock:
                job = self._current if proc is self._proc else None  # an ended agent's last bytes are not the new one's
            if job is not None:
                job.tail.feed(chunk)
                if job.tail.flooded:
                    proc.kill()
        with self._sink_lock:
            job = self._current
        if job is not None:
            job.tail.close()
            job.done.set()

    def _kill(self) -> None:
        proc = self._proc
        with self._sink_lock:
            self._current = None
        self._proc = None
        if proc is not None:
            proc.kill()

    def close(self) -> None:
        """End the agent: stdin closed, a few seconds to finish, then killed. Idempotent; never raises."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.close_stdin()
        with contextlib.suppress(TimeoutError, RunnerError):
            proc.wait(timeout_s=CLOSE_WAIT_S)
        proc.kill()


# Places a request where the served agent runs (model, input files; output files fetched back after the block):
# the request as that agent must see it. Local: the model path made absolute; SSH: files pushed (.ssh_served).
Stage = Callable[[Request, Path, "ProgressSink | None"], contextlib.AbstractContextManager[Request]]


@contextlib.contextmanager
def local_stage(request: Request, model_path: Path, progress: ProgressSink | None) -> Iterator[Request]:
    """The request for an agent on this machine: the model's absolute path; nothing to copy."""
    yield dataclasses.replace(request, model_path=str(model_path.resolve()))


class ServedRunner:
    """A runner whose run/evaluate/profile go to one served agent; everything else to ``base`` (a fresh agent).
    Results name the same runner as ``base``'s. With ``keep_loaded`` (the default) a ``run`` reuses the model an
    earlier ``run`` of the same file, runtime, options, threads and shapes loaded (``load_ms`` 0,
    ``runtime.reused_load``): for repeated rounds of the same levels, not for load or cold-start numbers."""

    def __init__(self, base: Runner, agent: ServedAgent, keep_loaded: bool = True, *, stage: Stage | None = None,
                 on_info: Info | None = None,
                 on_close: Callable[[], None] | None = None) -> None:
        self.base, self.agent, self.keep_loaded = base, agent, keep_loaded
        self.on_close = on_close  # releases what the stage holds (an SSH connection)
        self.stage: Stage = stage or local_stage
        self.on_info = on_info  # receives the one ``info`` event of a fall back to one-shot runs
        self.serving = True  # False once the agent there could not serve: every request one-shot from then on
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.base.name

    def describe(self) -> RunnerInfo:
        return self.base.describe()

    def _call(self, command: AgentCommand, request: Request, model_path: Path,
              progress: ProgressSink | None) -> RawRun:
        with self._lock:
            if self.serving:
                try:
                    with self.stage(request, Path(model_path), progress) as placed:
                        return self.agent.call(command, placed, progress,
                                               self.keep_loaded and command is AgentCommand.RUN)
                except ServeUnavailable as exc:
                    self._fall_back(exc)
            one_shot: Callable[[Request, Path, ProgressSink | None], RawRun] = getattr(self.base, command.value)
            return one_shot(request, model_path, progress)

    def _fall_back(self, exc: ServeUnavailable) -> None:
        """Serve no more: say so once, as information (the results are the same, only slower)."""
        self.serving = False
        message = f"{exc}: each request runs in its own agent process from now on"
        _log.info("%s", message)
        if self.on_info is not None:
            self.on_info({"event": "info", "message": message})

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.RUN, request, model_path, progress)

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.EVALUATE, request, model_path, progress)

    def profile(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.PROFILE, request, model_path, progress)

    def generate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Never served: an LLM cell's memory is its process's (module docstring)."""
        return self.base.generate(request, model_path, progress)

    def probe(self, runtimes: Sequence[str] | None = None) -> dict[str, Any]:
        return self.base.probe(runtimes)

    def close(self) -> None:
        self.agent.close()
        if self.on_close is not None:
            self.on_close()


def serving_enabled() -> bool:
    """False when ``EDGEOPT_AGENT_SERVE`` is 0/false/no/off (every request a fresh agent)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@contextlib.contextmanager
def agent_session(runner: Runner, on_info: Info | None = None) -> Iterator[Runner]:
    """A runner that answers many requests from one agent process while the block runs, where ``runner`` can
    serve (it has a ``served()`` context: the local and the SSH runner); else ``runner`` itself (each request its
    own agent, as always). ``on_info`` gets an ``info`` event if the agent there cannot serve after all (the
    session then goes on one-shot)."""
    opener: Callable[[Info | None], contextlib.AbstractContextManager[Runner]] | None = getattr(runner, "served",
                                                                                                  None)
    if opener is None or not serving_enabled():
        yield runner
        return
    with opener(on_info) as served:
        yield served
