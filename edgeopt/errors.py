"""Typed errors. Every failure a user can cause or meet derives from :class:`EdgeoptError`.

Each error carries the exit code the CLI returns for it, so the mapping from failure to exit code lives
in one place (see ``docs/exit-codes.md``). Messages say what failed, the offending value, and the fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


class ExitCode(IntEnum):
    """Documented process exit codes of every ``edgeopt`` command."""

    OK = 0
    GATE_FAILED = 1
    USAGE = 2
    DEVICE = 3
    TRUST = 4


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


class TrustError(RunnerError):
    """The device was not trusted: its SSH host key is unknown (and not accepted) or changed.

    A decision of the user's, not a device fault, so it has its own exit code (4) and fleet ``error_kind``
    (``trust``): a CI job can tell "record this board's key" from "this board is broken".
    """

    exit_code = ExitCode.TRUST


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


@dataclass(frozen=True)
class SchemaProblem:
    """The one error of a pydantic ``ValidationError`` that a file loader reports, in the pieces of its one-line
    message (targets, devices, qualify specs and recipes each word that line for their own file)."""

    loc: tuple[Any, ...]
    kind: str  # pydantic's error type: missing, extra_forbidden, ...
    msg: str  # pydantic's message, on one line
    got: str  # " (got <value>)" when the value's repr is short enough to quote, else ""
    others: int  # how many more errors there are

    @classmethod
    def of(cls, exc: ValidationError, *, unknown_first: bool = False) -> SchemaProblem:
        """The first error; with ``unknown_first`` a misspelled key first (it usually explains a 'missing' one)."""
        errors = exc.errors()
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0]) if unknown_first else errors[0]
        got = repr(err.get("input"))
        return cls(loc=tuple(err["loc"]), kind=err["type"], msg=" ".join(str(err["msg"]).split()),
                   got=f" (got {got})" if len(got) <= 60 else "", others=len(errors) - 1)

    @property
    def key(self) -> str:
        """The key path as written in YAML terms: ``devices[1].port``."""
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.loc).lstrip(".")

    @property
    def more(self) -> str:
        """`` (+N more)`` when there are other errors, else ""."""
        return f" (+{self.others} more)" if self.others else ""

    def did_you_mean(self, fields: Iterable[str]) -> str:
        """`` (did you mean 'x'?)``: the field closest to the offending (last) key, or ""."""
        close = difflib.get_close_matches(str(self.loc[-1]) if self.loc else "", list(fields), n=1, cutoff=0.6)
        return f" (did you mean '{close[0]}'?)" if close else ""
