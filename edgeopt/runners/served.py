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
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import RawRun, Request

from ..errors import RunnerError
from .agent_exit import AgentTrace
from .base import AgentCommand, ProgressSink, Runner, RunnerInfo, parse_progress_line, parse_result
from .limits import LineTail, ReadLimits, flood_error

# Commands the served agent answers (its SERVED_COMMANDS); others go to a fresh agent.
SERVED = (AgentCommand.RUN, AgentCommand.EVALUATE, AgentCommand.PROFILE)
# Seconds to wait for a request's last stderr event after its result arrived (the two pipes race).
TAIL_WAIT_S = 5.0
# Seconds a served agent gets to end after its stdin closes before it is killed.
CLOSE_WAIT_S = 5.0
ENV_SWITCH = "EDGEOPT_AGENT_SERVE"


@dataclasses.dataclass(frozen=True)
class ServeSpec:
    """How to start the served agent: the command line and its environment; ``where`` names it in messages;
    ``grace_s``: seconds beyond a request's ``max_duration_s`` before it is killed."""

    argv: tuple[str, ...]
    env: dict[str, str]
    where: str
    grace_s: float


class _Request:
    """The bookkeeping of the request in flight: its stderr tail, events and the end-of-request mark."""

    def __init__(self, limits: ReadLimits, progress: ProgressSink | None) -> None:
        self.trace = AgentTrace()
        self.done = threading.Event()
        self.progress = progress
        self.tail = LineTail(limits.stderr_bytes, self.on_line)

    def on_line(self, line: str) -> bool:
        event = parse_progress_line(line)
        if event is None:
            return False
        if event.get("event") == "served":
            self.done.set()
            return True
        self.trace.observe(event)
        if self.progress is not None:
            self.progress(event)
        return True


class ServedAgent:
    """One ``edgeopt_agent serve`` process: started on the first request, restarted after it died, closed by
    :meth:`close`. Requests are answered one at a time (a lock), so one runner's calls never overlap."""

    def __init__(self, spec: ServeSpec) -> None:
        self.spec = spec
        self._proc: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._current: _Request | None = None
        self._cap = 0
        self._over = False
        self._lock = threading.Lock()
        self._sink_lock = threading.Lock()
        self.started = 0  # processes started (1 unless one died)
        self.answered = 0

    def call(self, command: AgentCommand, request: Request, progress: ProgressSink | None,
             keep_loaded: bool = False) -> RawRun:
        """Send one request, wait for its result within the request's deadline (``keep_loaded``: a ``run`` may take
        the model an earlier run loaded and keeps its own, edgeopt_agent/loaded.py).

        Raises:
            RunnerError: the agent could not start, died (its signal and phase named), flooded a channel or
                outlived the deadline (then it is killed; the next request starts a new one).
        """
        with self._lock:
            proc = self._ensure()
            limits = ReadLimits.for_request(request)
            job = _Request(limits, progress)
            with self._sink_lock:
                self._current, self._cap, self._over = job, limits.result_bytes, False
            try:
                line = self._exchange(proc, command, request, keep_loaded)
            except BaseException:  # a timeout, Ctrl-C, SIGTERM: the agent must not outlive the request
                self._kill()
                raise
            return self._answer(proc, job, line)

    def _exchange(self, proc: subprocess.Popen[bytes], command: AgentCommand, request: Request,
                  keep_loaded: bool) -> bytes | None:
        """Write the request line; the result line (None: the agent ended first)."""
        message = {"command": command.value, "request": request.to_dict(), "keep_loaded": keep_loaded}
        payload = (json.dumps(message) + "\n").encode()
        limit_s = request.max_duration_s + self.spec.grace_s
        try:
            assert proc.stdin is not None
            proc.stdin.write(payload)
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        try:
            return self._lines.get(timeout=limit_s)
        except queue.Empty:
            raise RunnerError(f"the {self.spec.where} agent did not answer within {limit_s:.0f} s and was killed: "
                              "raise --max-duration or check the model") from None

    def _answer(self, proc: subprocess.Popen[bytes], job: _Request, line: bytes | None) -> RawRun:
        """The result of ``line``; an ended agent's message when there is none."""
        where = self.spec.where
        if line is None:
            status = proc.wait()
            job.done.wait(TAIL_WAIT_S)  # the stderr pump closes the tail at the end of the stream
            over = self._over
            self._reset()
            if over:
                raise flood_error(where, "stdout (the result)", self._cap)
            if job.tail.flooded:
                raise flood_error(where, "stderr", job.tail.limit)
            return parse_result("", job.tail.text(), where, status, job.trace)
        job.done.wait(TAIL_WAIT_S)
        with self._sink_lock:
            self._current = None
        if job.tail.flooded:
            self._kill()
            raise flood_error(where, "stderr", job.tail.limit)
        self.answered += 1
        return parse_result(line.decode("utf-8", "replace"), job.tail.text(), where, 0, job.trace)

    def _ensure(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._reset()
        try:
            proc = subprocess.Popen(list(self.spec.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=self.spec.env)
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.spec.argv[0]} ({exc}): pass a valid --python"
                              ) from None
        self._proc, self._lines = proc, queue.Queue()
        self.started += 1
        for target in (self._pump_stdout, self._pump_stderr):
            threading.Thread(target=target, args=(proc, self._lines), daemon=True).start()
        return proc

    def _pump_stdout(self, proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        """Result lines into ``lines`` (None at the end); a line past the request's budget kills the agent."""
        stream = proc.stdout
        assert stream is not None
        buf = bytearray()
        while True:
            piece = stream.readline(1 << 20)
            if not piece:
                break
            buf += piece
            if len(buf) > self._cap:
                self._over = True
                proc.kill()
                break
            if buf.endswith(b"\n"):
                lines.put(bytes(buf))
                buf = bytearray()
        lines.put(None)

    def _pump_stderr(self, proc: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        """Stderr into the tail of the request in flight (lines between requests are dropped)."""
        stream = proc.stderr
        assert stream is not None
        while True:
            chunk = stream.read1(1 << 16)  # type: ignore[attr-defined]
            if not chunk:
                break
            with self._sink_lock:
                job = self._current
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
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._reset()

    def _reset(self) -> None:
        with self._sink_lock:
            self._current = None
        self._proc = None

    def close(self) -> None:
        """End the agent: stdin closed, a few seconds to finish, then killed. Idempotent; never raises."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            assert proc.stdin is not None
            proc.stdin.close()
        try:
            proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ServedRunner:
    """A runner whose run/evaluate/profile go to one served agent; everything else to ``base`` (a fresh agent).
    Results name the same runner as ``base``'s. With ``keep_loaded`` (the default) a ``run`` reuses the model an
    earlier ``run`` of the same file, runtime, options, threads and shapes loaded (``load_ms`` 0,
    ``runtime.reused_load``): for repeated rounds of the same levels, not for load or cold-start numbers."""

    def __init__(self, base: Runner, agent: ServedAgent, keep_loaded: bool = True) -> None:
        self.base, self.agent, self.keep_loaded = base, agent, keep_loaded

    @property
    def name(self) -> str:
        return self.base.name

    def describe(self) -> RunnerInfo:
        return self.base.describe()

    def _call(self, command: AgentCommand, request: Request, model_path: Path,
              progress: ProgressSink | None) -> RawRun:
        request = dataclasses.replace(request, model_path=str(Path(model_path).resolve()))
        return self.agent.call(command, request, progress, self.keep_loaded and command is AgentCommand.RUN)

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.RUN, request, model_path, progress)

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.EVALUATE, request, model_path, progress)

    def profile(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        return self._call(AgentCommand.PROFILE, request, model_path, progress)

    def generate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Never served: an LLM cell's memory is its process's (module docstring)."""
        return self.base.generate(request, model_path, progress)

    def probe(self) -> dict[str, Any]:
        return self.base.probe()

    def close(self) -> None:
        self.agent.close()


def serving_enabled() -> bool:
    """False when ``EDGEOPT_AGENT_SERVE`` is 0/false/no/off (every request a fresh agent)."""
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


@contextlib.contextmanager
def agent_session(runner: Runner) -> Iterator[Runner]:
    """A runner that answers many requests from one agent process while the block runs, where ``runner`` can
    serve (it has a ``served()`` context); else ``runner`` itself (each request its own agent, as always)."""
    opener: Callable[[], contextlib.AbstractContextManager[Runner]] | None = getattr(runner, "served", None)
    if opener is None or not serving_enabled():
        yield runner
        return
    with opener() as served:
        yield served
