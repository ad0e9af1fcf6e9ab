"""The one place a runner is asked for a per-layer profile: the agent's ``profile`` command.

Runners take the agent subcommand as ``command=`` today (as ``evaluate`` does); once the runner protocol grows
a ``profile`` method, this call is the only one to change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgeopt_agent.protocol import RawRun, Request

from ..runners import ProgressSink, raise_for_error


def is_local(runner: Any) -> bool:
    """Whether the agent runs on this machine (host-side runtime defaults may then be checked here)."""
    return str(getattr(runner, "name", "")) == "local"


def run_profile(runner: Any, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
    """Run the agent's ``profile`` command through ``runner``.

    Raises:
        InputError: the agent refused the request (e.g. a runtime that cannot profile). RunnerError: the agent
            or the device failed.
    """
    raw = runner.run(request, model_path, progress, command="profile")
    return raise_for_error(raw, str(runner.name))
