"""The local runner: the device agent as a subprocess of this machine, same request and result as SSH."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import RawRun, Request

from ..config import from_environment
from ..errors import RunnerError
from .agent_exit import AgentTrace
from .agent_pipe import PopenPipe
from .base import (
    AgentCommand,
    ProgressSink,
    RunnerInfo,
    RunnerKind,
    agent_dir,
    parse_probe,
    parse_progress_line,
    parse_result_bytes,
    probe_args,
)
from .event_gate import EventGate
from .limits import LineTail, ReadLimits, flood_error, read_capped
from .served import Info, ServedAgent, ServedRunner, ServeSpec

# Variables the agent may inherit; everything else is dropped so runs do not depend on the caller's shell.
# EDGEOPT_PLUGIN_PATH: plug-in runtimes that are not installed (edgeopt.registry.plugins) load in the agent too.
_KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "VIRTUAL_ENV", "EDGEOPT_PLUGIN_PATH")
# Seconds beyond the request's max_duration_s before the runner kills the agent (load and warm-up included).
KILL_GRACE_S = 90.0
# Deadline of ``python -m edgeopt_agent probe`` (it imports every runtime), seconds.
PROBE_TIMEOUT_S = 120.0
# How often the size of an eval output the local agent writes is looked at, seconds.
WATCH_S = 0.05
# How long a local run waits for another local run to finish before failing, seconds.
LOCAL_LOCK_WAIT_S = 1800.0


class LocalRunner:
    """Runs ``python -m edgeopt_agent COMMAND`` as a subprocess with a clean environment.

    Every command takes this machine's lock (the device lock of the agent, in ``lock_dir``) first: two local
    runs at once (two sweeps in two terminals) measured each other, 28-45 % slower, with no warning. The second
    now waits for the first, and says so on stderr.

    Args:
        python: interpreter for the agent (default: this one, which has onnxruntime installed).
        lock_dir: directory of the machine's lock (None: :func:`edgeopt.config.from_environment`'s ``lock_dir``).
        lock_wait_s: how long a run waits for another local run before failing.
    """

    name = "local"

    def __init__(self, python: str | None = None, *, lock_dir: Path | None = None,
                 lock_wait_s: float = LOCAL_LOCK_WAIT_S) -> None:
        self.python = python or sys.executable
        self.lock_dir = lock_dir if lock_dir is not None else from_environment().lock_dir
        self.lock_wait_s = lock_wait_s

    def describe(self) -> RunnerInfo:
        """``local`` on ``localhost`` with the agent's interpreter."""
        return RunnerInfo(name=self.name, kind=RunnerKind.LOCAL, address="localhost", python=self.python)

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Timed measurement of ``model_path`` (see :meth:`edgeopt.runners.Runner.run`)."""
        return self._call(AgentCommand.RUN, request, model_path, progress)

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Outputs of ``request.eval_npz``'s samples, written by the agent to ``request.eval_output``."""
        return self._call(AgentCommand.EVALUATE, request, model_path, progress)

    def profile(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Per-layer profile of ``model_path`` (see :meth:`edgeopt.runners.Runner.profile`)."""
        return self._call(AgentCommand.PROFILE, request, model_path, progress)

    def generate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Generative timings of the LLM folder ``model_path`` (see :meth:`edgeopt.runners.Runner.generate`)."""
        return self._call(AgentCommand.GENERATE, request, model_path, progress)

    def probe(self, runtimes: Sequence[str] | None = None) -> dict[str, Any]:
        """``python -m edgeopt_agent probe``: machine facts and which runtimes load here (``runtimes``: only those).

        Raises:
            RunnerError: the interpreter cannot start, the probe timed out or printed no JSON.
        """
        limits = ReadLimits.for_probe()
        try:
            proc = subprocess.Popen([self.python, "-m", "edgeopt_agent", "probe", *probe_args(runtimes)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    env=self._env())
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.python} ({exc}): pass a valid --python") from None
        tail = LineTail(limits.stderr_bytes)
        out: dict[str, Any] = {}
        readers = [threading.Thread(target=_pump_stderr, args=(proc, tail), daemon=True),
                   threading.Thread(target=_pump_stdout, args=(proc, limits.stdout_bytes, out), daemon=True)]
        for t in readers:
            t.start()
        try:
            proc.wait(timeout=PROBE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise RunnerError(f"the local probe did not finish within {PROBE_TIMEOUT_S:.0f} s: check the runtimes "
                              f"installed for {self.python}") from None
        finally:
            for t in readers:
                t.join(timeout=10)
        if out.get("over"):
            raise flood_error("local", "stdout", limits.stdout_bytes)
        if tail.flooded:
            raise flood_error("local", "stderr", limits.stderr_bytes)
        stdout = out.get("data", b"").decode("utf-8", "replace")
        return parse_probe(stdout, proc.returncode, tail.text(), "local", self.python)

    def close(self) -> None:
        """Nothing is held between calls: each command is its own subprocess."""

    def serving(self, on_info: Info | None = None) -> ServedRunner:
        """This runner with run/evaluate/profile answered by one ``edgeopt_agent serve`` process (started on the
        first request) until the returned runner is closed (:mod:`.served`: what a shared process changes, and
        what stays one-shot)."""
        argv = (self.python, "-m", "edgeopt_agent", "serve", *self._lock_args())
        spec = ServeSpec(start=functools.partial(PopenPipe.start, argv, self._env()), where="local",
                         grace_s=KILL_GRACE_S + (self.lock_wait_s if self.lock_dir else 0.0))
        return ServedRunner(self, ServedAgent(spec), on_info=on_info)

    def served(self, on_info: Info | None = None) -> contextlib.closing[ServedRunner]:
        """:meth:`serving` for the block's duration (closed after it); ``on_info`` gets the ``info`` event of a
        session that goes on one-shot (the agent there cannot serve)."""
        return contextlib.closing(self.serving(on_info))

    def _env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        env["PYTHONPATH"] = str(agent_dir())
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def _lock_args(self) -> list[str]:
        if self.lock_dir is None:
            return []
        return ["--lock-dir", str(self.lock_dir), "--lock-wait-s", f"{self.lock_wait_s:g}"]

    def _call(self, command: AgentCommand, request: Request, model_path: Path,
              progress: ProgressSink | None) -> RawRun:
        """Send ``request`` to ``python -m edgeopt_agent <command>`` on stdin; its result JSON comes on stdout.

        Both channels are read within the request's budgets (:class:`ReadLimits`): a flood stops the agent.
        """
        request = dataclasses.replace(request, model_path=str(Path(model_path).resolve()))
        limits = ReadLimits.for_request(request)
        try:
            proc = subprocess.Popen(
                [self.python, "-m", "edgeopt_agent", command.value, "--request", "-", "--result", "-",
                 *self._lock_args()],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env(),
            )
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.python} ({exc}): pass a valid --python") from None
        trace = AgentTrace()
        gate = EventGate(_local_sink(progress), self.name)
        tail = LineTail(limits.stderr_bytes, _progress_handler(gate, trace))
        out: dict[str, Any] = {}
        readers = [threading.Thread(target=_pump_stderr, args=(proc, tail), daemon=True),
                   threading.Thread(target=_pump_stdout, args=(proc, limits.result_bytes, out), daemon=True)]
        watch = _OutputWatch(proc, request.eval_output, limits.file_bytes)
        for t in (*readers, watch.thread):
            t.start()
        self._wait(proc, request, json.dumps(request.to_dict()).encode())
        for t in (*readers, watch.thread):
            t.join(timeout=10)
        gate.close()
        watch.check()
        if out.get("over"):
            raise flood_error("local", "stdout (the result)", limits.result_bytes)
        if tail.flooded:
            raise flood_error("local", "stderr", limits.stderr_bytes)
        return parse_result_bytes(out.pop("data", None) or bytearray(), tail.text(), "local", proc.returncode, trace)

    def _wait(self, proc: subprocess.Popen[bytes], request: Request, payload: bytes) -> None:
        """Write the request, wait for the agent within its deadline; kill it on a timeout or an interrupt."""
        limit_s = request.max_duration_s + KILL_GRACE_S + (self.lock_wait_s if self.lock_dir else 0.0)
        try:
            assert proc.stdin is not None
            proc.stdin.write(payload)
            proc.stdin.close()
            proc.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise RunnerError(
                f"the local agent did not finish within {limit_s:.0f} s and was killed: "
                "raise --max-duration or check the model"
            ) from None
        except BrokenPipeError:
            proc.wait()
        except BaseException:  # Ctrl-C, SIGTERM: the agent must not outlive its caller
            proc.kill()
            proc.wait()
            raise


class _OutputWatch:
    """The eval output a local agent writes straight into the host's file system, capped as an SSH one is: its
    size is looked at every :data:`WATCH_S` while the agent runs, and past ``limit`` bytes the agent is killed (a
    board that floods may be this machine's agent too: it wrote 2 GB into the temp dir before it was refused).
    """

    def __init__(self, proc: subprocess.Popen[bytes], path: str | None, limit: int) -> None:
        self.proc, self.path, self.limit = proc, Path(path) if path else None, limit
        self.thread = threading.Thread(target=self._loop, name="eval-output-watch", daemon=True)

    def _size(self) -> int:
        try:
            return self.path.stat().st_size if self.path is not None else 0
        except OSError:
            return 0

    def _loop(self) -> None:
        while self.path is not None and self.proc.poll() is None:
            if self._size() > self.limit:
                self.proc.kill()
                return
            time.sleep(WATCH_S)

    def check(self) -> None:
        """Raise the flood (the output removed) when the output is over its limit."""
        if self.path is not None and self._size() > self.limit:
            self.path.unlink(missing_ok=True)
            raise flood_error("local", self.path.name, self.limit)


def _progress_handler(gate: EventGate, trace: AgentTrace) -> Callable[[str], bool]:
    """A stderr line handler: progress events to ``trace`` and through ``gate`` (True), other lines kept (False)."""

    def on_line(line: str) -> bool:
        event = parse_progress_line(line)
        if event is None:
            return False
        trace.observe(event)
        gate(event)
        return True

    return on_line


def _local_sink(progress: ProgressSink | None) -> ProgressSink:
    """What a passed event does here: a local lock wait said on stderr, then ``progress``."""

    def sink(event: dict[str, Any]) -> None:
        if event.get("event") == "phase" and event.get("phase") == "lock_wait":
            _say_waiting(event)
        if progress is not None:
            progress(event)

    return sink


def _say_waiting(event: dict[str, Any]) -> None:
    """One stderr line when this run waits for another local run: otherwise it looks hung, and the user would
    not learn that two runs were started at once."""
    sys.stderr.write(f"edgeopt: another local run (pid {event.get('holder_pid', '?')}) is measuring on this "
                     f"machine; waiting for it to finish so neither slows the other down (lock "
                     f"{event.get('path', '?')})\n")
    sys.stderr.flush()


def _pump_stderr(proc: subprocess.Popen[bytes], tail: LineTail) -> None:
    """Read stderr in chunks into ``tail`` (linear, bounded); past its budget the agent is killed."""
    stream = proc.stderr
    assert stream is not None
    while True:
        chunk = stream.read1(1 << 16)  # type: ignore[attr-defined]
        if not chunk:
            break
        tail.feed(chunk)
        if tail.flooded:
            proc.kill()
            break
    tail.close()


def _pump_stdout(proc: subprocess.Popen[bytes], limit: int, out: dict[str, Any]) -> None:
    """Read the result from stdout up to ``limit`` bytes; past it the agent is killed and ``over`` set."""
    assert proc.stdout is not None
    data, over = read_capped(proc.stdout.read1, limit)  # type: ignore[attr-defined]
    out["data"], out["over"] = data, over
    if over:
        proc.kill()
