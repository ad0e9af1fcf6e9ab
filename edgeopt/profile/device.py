"""The one place a runner is asked for a per-layer profile: the agent's ``profile`` command.

Every runner implements :meth:`edgeopt.runners.Runner.profile` (the local subprocess and SSH alike).
"""

from __future__ import annotations

from pathlib import Path

from edgeopt_agent.protocol import RawRun, Request

from ..runners import ProgressSink, Runner, raise_for_error


def is_local(runner: Runner) -> bool:
    """Whether the agent runs on this machine (host-side runtime defaults may then be checked here)."""
    return runner.describe().local


def run_profile(runner: Runner, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
    """Run the agent's ``profile`` command through ``runner``.

    Raises:
        InputError: the agent refused the request (e.g. a runtime that cannot profile). RunnerError: the agent
            or the device failed.
    """
    raw = runner.profile(request, model_path, progress)
    return raise_for_error(raw, str(runner.name))
