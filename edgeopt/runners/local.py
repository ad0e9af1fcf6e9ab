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

from edgeopt_agent.protocol import RawRun, Request

from ..errors import RunnerError
from .base import ProgressSink, agent_dir, parse_progress_line, parse_result

# Variables the agent may inherit; everything else is dropped so runs do not depend on the caller's shell.
# EDGEOPT_PLUGIN_PATH: plug-in runtimes that are not installed (edgeopt.plugins) load in the agent too.
_KEEP_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "VIRTUAL_ENV", "EDGEOPT_PLUGIN_PATH")
# Seconds beyond the request's max_duration_s before the runner kills the agent (load and warm-up included).
KILL_GRACE_S = 90.0


class LocalRunner:
    """Runs ``python -m edgeopt_agent run`` as a subprocess with a clean environment.

    Args:
        python: interpreter for the agent (default: this one, which has onnxruntime installed).
    """

    name = "local"

    def __init__(self, python: str | None = None) -> None:
        self.python = python or sys.executable

    def _env(self) -> dict[str, str]:
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        env["PYTHONPATH"] = str(agent_dir())
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None, *,
            command: str = "run") -> RawRun:
        """``command``: the agent subcommand, ``run`` (timed measurement) or ``evaluate`` (eval outputs)."""
        request = dataclasses.replace(request, model_path=str(Path(model_path).resolve()))
        try:
            proc = subprocess.Popen(
                [self.python, "-m", "edgeopt_agent", command, "--request", "-", "--result", "-"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env(),
                text=True,
            )
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {self.python} ({exc}): pass a valid --python") from None
        tail: deque[str] = deque(maxlen=20)
        chunks: list[str] = []

        def pump_stderr() -> None:
            for line in proc.stderr:  # type: ignore[union-attr]
                event = parse_progress_line(line)
                if event is None:
                    tail.append(line.rstrip())
                elif progress is not None:
                    progress(event)

        def pump_stdout() -> None:
            chunks.append(proc.stdout.read())  # type: ignore[union-attr]

        readers = [threading.Thread(target=f, daemon=True) for f in (pump_stderr, pump_stdout)]
        for t in readers:
            t.start()
        limit_s = request.max_duration_s + KILL_GRACE_S
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
        for t in readers:
            t.join(timeout=10)
        return parse_result("".join(chunks), " | ".join(tail), "local")
