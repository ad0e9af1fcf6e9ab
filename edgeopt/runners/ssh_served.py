"""The served agent over SSH: ``python3 -m edgeopt_agent serve`` on the device, on one paramiko exec channel.

A one-shot SSH request pays a connection, an agent process (its start and the runtimes' imports) and a job
directory each time; a sweep sends ~100 of them. Served, one connection and one agent answer them all: the agent
is pushed once (as for a one-shot run: same cache, interpreter, ``env -i`` environment, device lock per request),
started on one exec channel, and :class:`edgeopt.runners.served.ServedAgent` speaks the same protocol over that
channel's stdin/stdout/stderr (:class:`ChannelPipe`) as over a local pipe. Each request's model and input files
go into the device cache first, and an ``evaluate``'s outputs come back from a job directory made for it
(:meth:`SshRunner.staged`, as one-shot).

Faults, as one-shot: the agent runs with ``--exit-on-stdin-eof --host-silence-s``, and the host writes a newline
on the channel every ``keepalive_s`` (idle or not), so the agent ends when the channel closes or the link dies; a
request past ``max_duration_s + lock_wait_s + run_grace_s`` closes the channel (the next request starts a new
agent); a lost link fails the request in flight with a ``RunnerError`` and the next request reconnects. A channel
that cannot be opened, or an agent that ends before its first event (too old to know ``serve``), is
:class:`ServeUnavailable`: the session goes on one-shot, with an ``info`` event.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import paramiko

from edgeopt_agent.protocol import Request

from ..devices.schema import SshAddress
from ..errors import RunnerError
from .agent_pipe import CHUNK
from .base import ProgressSink, Runner
from .served import Info, ServedAgent, ServedRunner, ServeSpec, ServeUnavailable
from .ssh_cache import KEEP_RECENT_S, Bundle, TransferStats
from .ssh_session import SshSession, SshTimeouts

# Seconds a blocked channel read waits before it looks at the link again.
POLL_S = 0.5
# The agent's cache entry is re-used (its mtime set: it is never evicted while in use) at least this often.
AGENT_TOUCH_S = KEEP_RECENT_S / 3


class SshDevice(Runner, Protocol):
    """What a served session uses of its SSH runner (:class:`edgeopt.runners.ssh.SshRunner`, which imports this
    module: so it is named by what it does)."""

    address: SshAddress
    timeouts: SshTimeouts
    last_stats: TransferStats | None

    def _session(self) -> SshSession: ...

    def _push_agent(self, s: SshSession, workdir: str, stats: TransferStats, emit: ProgressSink) -> str: ...

    def _agent_command(self, agent_path: str, *args: str) -> str: ...

    def bundles(self, request: Request, model_path: Path) -> tuple[Bundle, dict[str, Bundle]]: ...

    def staged(self, s: SshSession, workdir: str, request: Request, bundles: tuple[Bundle, dict[str, Bundle]],
               stats: TransferStats, emit: ProgressSink, *,
               job_dir: bool = True) -> AbstractContextManager[tuple[Request, str]]: ...


class ChannelPipe:
    """An agent on a paramiko exec channel (:class:`edgeopt.runners.agent_pipe.AgentPipe`), with the host's
    heartbeat on its stdin and the link's liveness checked while a read waits."""

    def __init__(self, session: SshSession, chan: paramiko.Channel) -> None:
        self.session, self.chan = session, chan
        self.lost = ""  # why the link was given up on (a dead link), if it was
        self._send_lock = threading.Lock()  # a heartbeat never lands inside a request line
        self._stop = threading.Event()
        chan.settimeout(POLL_S)
        threading.Thread(target=self._beat, name="ssh-serve-heartbeat", daemon=True).start()

    @classmethod
    def start(cls, session: SshSession, command: str) -> ChannelPipe:
        """Run ``command`` (shell-quoted) on a new exec channel of ``session``.

        Raises:
            ServeUnavailable: the channel could not be opened or the command not started.
        """
        transport = session.transport
        try:
            with session.step(f"starting the served agent on {session.where}", session.timeouts.connect_s):
                chan = transport.open_session(timeout=session.timeouts.connect_s)
                chan.exec_command(command)
        except RunnerError as exc:
            raise ServeUnavailable(str(exc)) from None
        return cls(session, chan)

    def _beat(self) -> None:
        """A newline every ``keepalive_s`` (the agent's ``--host-silence-s`` ends it when they stop coming)."""
        while not self._stop.wait(self.session.timeouts.keepalive_s) and not self.chan.closed:
            with self._send_lock, contextlib.suppress(OSError, EOFError, paramiko.SSHException):
                if self.chan.send_ready():
                    self.chan.send(b"\n")

    def send(self, data: bytes) -> None:
        with self._send_lock:
            try:
                self.chan.sendall(data)
            except (EOFError, paramiko.SSHException) as exc:
                raise OSError(str(exc)) from None

    def _read(self, recv: Callable[[int], bytes]) -> bytes:
        while True:
            try:
                return recv(CHUNK)
            except TimeoutError:
                if self.chan.closed:
                    return b""
                if not self.session.alive:  # no answer to keepalives: give the link up, as a one-shot run does
                    self.lost = (f"the link to {self.session.where} died during the served agent's request: no "
                                 f"answer to keepalives for {self.session.timeouts.dead_after_s:g} s; check the "
                                 "network (the agent stops itself on the device)")
                    self.session.abort()
                    return b""
            except (OSError, EOFError, paramiko.SSHException):
                return b""

    def read_stdout(self) -> bytes:
        return self._read(self.chan.recv)

    def read_stderr(self) -> bytes:
        return self._read(self.chan.recv_stderr)

    def running(self) -> bool:
        return not self.chan.closed and not self.chan.exit_status_ready() and self.session.alive

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, EOFError, paramiko.SSHException):
            self.chan.shutdown_write()

    def wait(self, timeout_s: float | None = None) -> int:
        if not self.chan.status_event.wait(timeout_s):
            raise TimeoutError(f"the agent on {self.session.where} did not end within {timeout_s} s")
        if self.lost:
            raise RunnerError(self.lost)
        if self.chan.exit_status == -1 and not self.chan.get_transport().is_active():
            raise RunnerError(f"lost the connection to {self.session.where} during the served agent's request "
                              "(sshd stopped or the link dropped); the agent stops itself on the device")
        return int(self.chan.exit_status)

    def kill(self) -> None:
        """Close the channel: the agent sees its stdin end and stops itself (``--exit-on-stdin-eof``)."""
        self._stop.set()
        with contextlib.suppress(Exception):  # a dead transport may fail to close in any way
            self.chan.close()


class SshServe:
    """The device side of one served session: its connection (made again after a lost link), the work dir, the
    agent's cache entry, and how a request is staged there."""

    def __init__(self, runner: SshDevice) -> None:
        self.runner = runner
        self._session: SshSession | None = None
        self._workdir = ""
        self._agent = ""
        self._agent_at = 0.0

    def session(self) -> SshSession:
        """The live connection, connecting (again) when there is none or the link died."""
        s = self._session
        if s is not None and s.alive:
            return s
        self.close()
        s = self.runner._session()
        s.connect()
        self._session = s
        try:
            with s.step(f"preparing {s.where}", self.runner.timeouts.fetch_s):
                self._workdir = s.remote_path(self.runner.address.workdir)
        except BaseException:
            self.close()
            raise
        return s

    def agent(self, s: SshSession, emit: ProgressSink) -> str:
        """The agent's directory on the device: pushed on first use, its cache entry re-used now and then so the
        cache's eviction never takes it from under a running agent."""
        if not self._agent or time.monotonic() - self._agent_at > AGENT_TOUCH_S:
            self._agent = self.runner._push_agent(s, self._workdir, TransferStats(), emit)
            self._agent_at = time.monotonic()
        return self._agent

    def start(self) -> ChannelPipe:
        """A new ``serve`` agent on the device (the device lock per request, the same flags as a one-shot run)."""
        s = self.session()
        t = self.runner.timeouts
        command = self.runner._agent_command(
            self.agent(s, lambda event: None), "serve", "--lock-dir", f"{self._workdir}/locks",
            "--lock-wait-s", f"{t.lock_wait_s:g}", "--exit-on-stdin-eof",
            "--host-silence-s", f"{t.dead_after_s + 3 * t.keepalive_s:g}",
        )
        return ChannelPipe.start(s, command)

    @contextlib.contextmanager
    def stage(self, request: Request, model_path: Path, progress: ProgressSink | None) -> Iterator[Request]:
        """The request as the served agent sees it (files pushed; outputs fetched back after the block)."""
        bundles = self.runner.bundles(request, model_path)
        emit: ProgressSink = progress or (lambda event: None)
        s = self.session()
        self.agent(s, emit)
        stats = TransferStats()
        self.runner.last_stats = stats
        with self.runner.staged(s, self._workdir, request, bundles, stats, emit, job_dir=False) as (remote, _):
            yield remote

    def close(self) -> None:
        s, self._session = self._session, None
        if s is not None:
            s.close()


def serving(runner: SshDevice, on_info: Info | None = None) -> ServedRunner:
    """``runner`` with run/evaluate/profile answered by one served agent on its device (module docstring)."""
    t = runner.timeouts
    host = SshServe(runner)
    agent = ServedAgent(ServeSpec(start=host.start, where=runner.name, grace_s=t.lock_wait_s + t.run_grace_s))
    return ServedRunner(runner, agent, stage=host.stage, on_info=on_info, on_close=host.close)
