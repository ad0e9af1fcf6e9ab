"""What every runner provides, and how an agent's error result becomes a typed error on the host.

A runner carries agent commands to one place where the agent runs (this machine, an SSH device, later a fleet).
The contract is :class:`Runner`; ``tests/contract/test_runners.py`` runs it against every runner listed there.

Adding an agent command that takes a request and returns a result (like ``evaluate``): add it to
:class:`AgentCommand`, declare ``def <command>(self, request, model_path, progress=None) -> RawRun`` on
:class:`Runner`, and implement it in each runner as ``return self._call(AgentCommand.<COMMAND>, ...)``. A file the
agent must read or write travels through the request's path fields (``edgeopt.runners.ssh`` lists them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from edgeopt_agent import protocol
from edgeopt_agent.protocol import RawRun, Request

from .. import jsonio
from ..errors import InputError, RunnerError, RuntimeUnavailableError
from ..untrusted import clean_text, clean_tree
from .agent_exit import AgentTrace
from .agent_schema import accept_result, result_text
from .limits import MAX_LINE_BYTES, PROBE_STDOUT_BYTES

ProgressSink = Callable[[dict[str, Any]], None]


class AgentError(RunnerError):
    """The agent ran but reported a failure (runtime crash, timeout)."""


class AgentCommand(str, Enum):
    """Subcommands of ``python -m edgeopt_agent`` that take a request and return a ``RawRun``."""

    RUN = "run"
    EVALUATE = "evaluate"
    PROFILE = "profile"
    GENERATE = "generate"


class RunnerKind(str, Enum):
    """Where a runner's agent runs: this machine (host paths and installed packages apply) or elsewhere."""

    LOCAL = "local"
    REMOTE = "remote"


@dataclass(frozen=True)
class RunnerInfo:
    """What a runner says about itself (:meth:`Runner.describe`).

    Attributes:
        name: the result's ``runner`` (``local``, ``ssh:user@host:port``).
        kind: local or remote.
        address: where the agent runs (``localhost``, ``user@host:port``).
        python: the agent's interpreter there.
    """

    name: str
    kind: RunnerKind
    address: str
    python: str

    @property
    def local(self) -> bool:
        """True when the agent runs on this machine (host paths and installed runtimes apply)."""
        return self.kind is RunnerKind.LOCAL


class Runner(Protocol):
    """Carries agent commands to one place where the agent runs; ``name`` appears in results as ``runner``.

    Every method that contacts the agent raises :class:`RunnerError` when the transport or the agent fails; a
    result the agent produced (ok or not) comes back as a ``RawRun`` (see :func:`raise_for_error`).
    """

    @property
    def name(self) -> str:
        """The result's ``runner``."""
        ...

    def describe(self) -> RunnerInfo:
        """Name, local or remote, address and interpreter; contacts nothing."""
        ...

    def run(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Timed measurement of ``model_path`` (a host path; the runner maps it to the agent's view)."""
        ...

    def evaluate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """The outputs of ``request.eval_npz``'s samples, written to the host path ``request.eval_output``."""
        ...

    def profile(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Per-layer times from the runtime's own profiler (``RawRun.profile``; edgeopt/profile)."""
        ...

    def generate(self, request: Request, model_path: Path, progress: ProgressSink | None = None) -> RawRun:
        """Generative timings of an LLM folder over ``request.generate``'s cells (``RawRun.generate``;
        edgeopt.bench.llm)."""
        ...

    def probe(self, runtimes: Sequence[str] | None = None) -> dict[str, Any]:
        """Machine facts and runtimes where the agent runs (``python -m edgeopt_agent probe``); ``runtimes``: report
        only those (each one the agent loads costs an import: ~0.5 CPU-s for all of them)."""
        ...

    def close(self) -> None:
        """Release what the runner holds (connections, workers); idempotent, never raises."""
        ...


def probe_args(runtimes: Sequence[str] | None) -> list[str]:
    """The agent's ``probe`` arguments that limit it to ``runtimes`` (none: every runtime)."""
    return ["--runtimes", ",".join(runtimes)] if runtimes else []


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
        event = clean_tree(jsonio.loads(text, max_bytes=MAX_LINE_BYTES))
    except (ValueError, RecursionError):  # UntrustedDataError is a ValueError: too deep is not an event
        return None
    return event if isinstance(event, dict) and "event" in event else None


def parse_result(stdout: str, stderr_tail: str, where: str, status: int | None = None,
                 trace: AgentTrace | None = None) -> RawRun:
    """The agent's result JSON as a ``RawRun``; a garbled or missing result is a ``RunnerError``.

    Args:
        stdout: the result text (stdout locally, ``result.json`` over SSH).
        stderr_tail: the agent's last non-event stderr lines.
        where: the runner's name, for messages.
        status: the agent's exit status (negative: killed by that signal; 128+N from a remote shell).
        trace: the agent's events, to say in which phase and after how long it ended.

    The result is checked against the one schema of what an agent returns (:mod:`.agent_schema`) and every
    string in it cleaned: a device is untrusted input.
    """
    if not stdout or stdout.isspace():  # not strip(): a copy of the whole result
        raise RunnerError((trace or AgentTrace()).no_result_message(status, where, clean_text(stderr_tail)))
    return accept_result(stdout, where)


def parse_result_bytes(data: bytearray, stderr_tail: str, where: str, status: int | None = None,
                       trace: AgentTrace | None = None) -> RawRun:
    """:func:`parse_result` of the result's bytes, which are emptied once decoded (the host then holds one copy of
    the result while it is parsed, not two)."""
    text = result_text(data, where)
    data.clear()
    return parse_result(text, stderr_tail, where, status, trace)


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


def parse_probe(stdout: str, status: int, stderr_tail: str, where: str, python: str) -> dict[str, Any]:
    """The probe's JSON line as a dict; no JSON is a :class:`RunnerError` naming the interpreter."""
    try:
        facts: Any = clean_tree(jsonio.loads(stdout.strip().splitlines()[-1], max_bytes=PROBE_STDOUT_BYTES))
    except (ValueError, IndexError, RecursionError):  # a device's facts are untrusted: too deep is no answer
        facts = None
    if not isinstance(facts, dict):
        raise RunnerError(
            f"the probe on {where} printed no result (exit {status}; "
            f"last output: {clean_text(stderr_tail) or '(none)'}): "
            f"the agent needs Python 3.8+ at {python}"
        )
    return facts
