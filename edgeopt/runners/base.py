"""What every runner provides, and how an agent's error result becomes a typed error on the host."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from edgeopt_agent import protocol
from edgeopt_agent.protocol import RawRun, Request

from ..errors import InputError, RunnerError, RuntimeUnavailableError

ProgressSink = Callable[[dict[str, Any]], None]


class AgentError(RunnerError):
    """The agent ran but reported a failure (runtime crash, timeout)."""


class Runner(Protocol):
    """Carries one request to an agent. ``name`` appears in results as ``runner``."""

    name: str

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Run ``request`` against ``model_path`` (a host path; the runner maps it to the agent's view)."""
        ...


def agent_dir() -> Path:
    """The directory holding the ``edgeopt_agent`` package: what runs locally and what is pushed to devices."""
    import edgeopt_agent

    return Path(edgeopt_agent.__file__).resolve().parent.parent


def parse_progress_line(line: str) -> dict[str, Any] | None:
    """An agent stderr line as an event dict, or None when it is ordinary log text."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        event = json.loads(text)
    except ValueError:
        return None
    return event if isinstance(event, dict) and "event" in event else None


def parse_result(stdout: str, stderr_tail: str, where: str) -> RawRun:
    """The agent's result JSON as a ``RawRun``; a garbled or missing result is a ``RunnerError``."""
    text = stdout.strip()
    if not text:
        raise RunnerError(f"the agent on {where} returned no result; its last output: {stderr_tail or '(none)'}")
    try:
        return RawRun.from_dict(json.loads(text.splitlines()[-1]))
    except (ValueError, protocol.ProtocolError) as exc:
        raise RunnerError(f"the agent on {where} returned an unreadable result ({exc}): update the agent") from None


def raise_for_error(raw: RawRun, where: str) -> RawRun:
    """Return ``raw`` when it succeeded, else raise the typed error its ``error_kind`` calls for."""
    if raw.ok:
        return raw
    message = f"{raw.error} (on {where})"
    if raw.error_kind == protocol.ERROR_INPUT:
        raise InputError(message)
    if raw.error_kind == protocol.ERROR_RUNTIME_MISSING:
        raise RuntimeUnavailableError(message)
    raise AgentError(message)
