"""A started agent's three streams and its end, whatever started it: the transport of a served agent.

:class:`edgeopt.runners.served.ServedAgent` speaks the serve protocol (one request line in, one result line out,
events on stderr, deadlines, read budgets) over an :class:`AgentPipe`; how the agent was started is the pipe's
business: :class:`PopenPipe` here (a local subprocess), ``ChannelPipe`` in :mod:`.ssh_served` (a paramiko exec
channel). So the protocol is written once and a new transport is one small class.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence
from typing import Protocol

from ..errors import RunnerError

# Bytes one read asks for.
CHUNK = 1 << 16


class AgentPipe(Protocol):
    """One running agent: write its stdin, read its stdout and stderr, end it.

    Reads block until data, end of stream (``b""``) or the pipe's own end (a dead link reads as the end).
    """

    def send(self, data: bytes) -> None:
        """Write all of ``data`` to the agent's stdin. Raises OSError when the agent's stdin is gone."""
        ...

    def read_stdout(self) -> bytes:
        """The next bytes of stdout (up to ``CHUNK``); ``b""`` at its end."""
        ...

    def read_stderr(self) -> bytes:
        """The next bytes of stderr (up to ``CHUNK``); ``b""`` at its end."""
        ...

    def running(self) -> bool:
        """True while the agent can still answer (process alive; channel open and link up)."""
        ...

    def close_stdin(self) -> None:
        """Close the agent's stdin (it ends after its current request); never raises."""
        ...

    def wait(self, timeout_s: float | None = None) -> int:
        """The agent's exit status (negative or 128+N: a signal), once it ended.

        Raises:
            TimeoutError: it did not end within ``timeout_s``.
            RunnerError: the transport was lost before the agent's end was known (a dropped SSH link).
        """
        ...

    def kill(self) -> None:
        """End the agent now and release the transport; idempotent, never raises."""
        ...


class PopenPipe:
    """An agent started as a local subprocess."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    @classmethod
    def start(cls, argv: Sequence[str], env: dict[str, str]) -> PopenPipe:
        """Start ``argv`` with ``env`` and pipes on all three streams.

        Raises:
            RunnerError: the interpreter cannot be started.
        """
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=env)
        except OSError as exc:
            raise RunnerError(f"cannot start the agent with {argv[0]} ({exc}): pass a valid --python") from None
        return cls(proc)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_stdout(self) -> bytes:
        assert self.proc.stdout is not None
        return self.proc.stdout.read1(CHUNK)  # type: ignore[attr-defined]

    def read_stderr(self) -> bytes:
        assert self.proc.stderr is not None
        return self.proc.stderr.read1(CHUNK)  # type: ignore[attr-defined]

    def running(self) -> bool:
        return self.proc.poll() is None

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def wait(self, timeout_s: float | None = None) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"the agent did not end within {timeout_s} s") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
