"""The local runner: the device agent as a subprocess of this machine, same request and result as SSH."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import RawRun, Request

from ..config import from_environment
from ..errors import RunnerError
from .agent_exit import AgentTrace
from .base import (
    AgentCommand,
    ProgressSink,
    RunnerInfo,
    RunnerKind,
    agent_dir,
    parse_probe,
    parse_progress_line,
    parse_result,
)

# Variables the agent may inherit; everything else is dropped so runs do not depend on the caller's shell.
# EDGEOPT_PLUGIN_PATH: plug-in runtimes that are not installed (edgeopt.registry.plugins) load in the agent too.
_KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "VIRTUAL_ENV", "EDGEOPT_PLUGIN_PATH")
# Seconds beyond the request's max_duration_s before the runner kills the agent (load and warm-up included).
KILL_GRACE_S = 90.0
# Deadline of ``python -m edgeopt_agent probe`` (it imports every runtime), seconds.
PROBE_TIMEOUT_S = 120.0
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

    def probe(self) -> dict[str, Any]:
        """``python -m edgeopt_agent probe``: machine facts and which runtimes load here.

        Raises:
            RunnerError: the interpreter cannot start, the probe timed out or printed no JSON.
        """
        try:
            proc = subprocess.run([self.python, "-m", "edgeopt_agent", "probe"], capture_output=True, text=True,
                                  env=self._env(), timeout=PROBE_TIMEOUT_S, check=False)
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.python} ({exc}): pass a valid --python") from None
        except subprocess.TimeoutExpired:
            raise RunnerError(f"the local probe did not finish within {PROBE_TIMEOUT_S:.0f} s: check the runtimes "
                              f"installed for {self.python}") from None
        tail = " | ".join(proc.stderr.strip().splitlines()[-20:])
        return parse_probe(proc.stdout, proc.returncode, tail, "local", self.python)

    def close(self) -> None:
        """Nothing is held between calls: each command is its own subprocess."""

    def _lock_args(self) -> list[str]:
        if self.lock_dir is None:
            return []
        return ["--lock-dir", str(self.lock_dir), "--lock-wait-s", f"{self.lock_wait_s:g}"]

    def _env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        env["PYTHONPATH"] = str(agent_dir())
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def _call(self, command: AgentCommand, request: Request, model_path: Path,
              progress: ProgressSink | None) -> RawRun:
        """Send ``request`` to ``python -m edgeopt_agent <command>`` on stdin; its result JSON comes on stdout."""
        request = dataclasses.replace(request, model_path=str(Path(model_path).resolve()))
        try:
            proc = subprocess.Popen(
                [self.python, "-m", "edgeopt_agent", command.value, "--request", "-", "--result", "-",
                 *self._lock_args()],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self._env(), text=True,
            )
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.python} ({exc}): pass a valid --python") from None
        tail: deque[str] = deque(maxlen=20)
        chunks: list[str] = []
        trace = AgentTrace()
        readers = [threading.Thread(target=_pump_stderr, args=(proc, tail, progress, trace), daemon=True),
                   threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)]  # type: ignore[union-attr]
        for t in readers:
            t.start()
        limit_s = request.max_duration_s + KILL_GRACE_S + (self.lock_wait_s if self.lock_dir else 0.0)
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(request.to_dict()))
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
        for t in readers:
            t.join(timeout=10)
        return parse_result("".join(chunks), " | ".join(tail), "local", proc.returncode, trace)


def _pump_stderr(proc: subprocess.Popen[str], tail: deque[str], progress: ProgressSink | None,
                 trace: AgentTrace) -> None:
    """Progress lines to ``trace`` and ``progress``; other lines (library logs) into ``tail`` for error messages."""
    for line in proc.stderr:  # type: ignore[union-attr]
        event = parse_progress_line(line)
        if event is None:
            tail.append(line.rstrip())
            continue
        if event.get("event") == "phase" and event.get("phase") == "lock_wait":
            _say_waiting(event)
        trace.observe(event)
        if progress is not None:
            progress(event)


def _say_waiting(event: dict[str, Any]) -> None:
    """One stderr line when this run waits for another local run: otherwise it looks hung, and the user would
    not learn that two runs were started at once."""
    sys.stderr.write(f"edgeopt: another local run (pid {event.get('holder_pid', '?')}) is measuring on this "
                     f"machine; waiting for it to finish so neither slows the other down (lock "
                     f"{event.get('path', '?')})\n")
    sys.stderr.flush()
