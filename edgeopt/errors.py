"""Typed errors. Every failure a user can cause or meet derives from :class:`EdgeoptError`.

Each error carries the exit code the CLI returns for it, so the mapping from failure to exit code lives
in one place (see ``docs/exit-codes.md``). Messages say what failed, the offending value, and the fix.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented process exit codes of every ``edgeopt`` command."""

    OK = 0
    GATE_FAILED = 1
    USAGE = 2
    DEVICE = 3


class EdgeoptError(Exception):
    """Base of all edgeopt errors; ``str(err)`` is a one-line message with the fix."""

    exit_code: ExitCode = ExitCode.USAGE


class InputError(EdgeoptError):
    """Bad user input: a file, a flag value, a spec."""


class ModelLoadError(InputError):
    """A model file is missing, not ONNX, corrupt, or unsafe to load."""


class ShapeError(InputError):
    """An input shape or input name given by the user does not fit the model."""


class TargetError(InputError):
    """An unknown target or an invalid target YAML file."""


class RunnerError(EdgeoptError):
    """The runner or the device agent failed (crash, timeout, runtime missing on the device)."""

    exit_code = ExitCode.DEVICE


class RuntimeUnavailableError(RunnerError):
    """The requested runtime is not installed where the agent runs."""


def first_line(exc: BaseException, *, limit: int | None = 300, fallback: str | None = None) -> str:
    """The first line of an exception's message, for a one-line error that names its cause.

    Args:
        exc: the exception (a library's message is often a multi-line dump).
        limit: cut the line at this many characters (None: keep it whole).
        fallback: what to say when the message is empty (default: the exception's type name).
    """
    text = str(exc).strip()
    line = text.splitlines()[0] if text else (fallback or type(exc).__name__)
    return line if limit is None else line[:limit]
