"""One authenticated SSH connection where every remote step has a deadline.

paramiko waits forever in several places (an ``exec`` request, opening SFTP) and ``transport.is_active()`` can
stay True after the link died. So every step runs under :meth:`SshSession.step`, a timer that closes the
transport when the step overruns (which wakes any paramiko wait) and turns that into a one-line
``RunnerError``; and a liveness thread sends keepalive requests that want a reply, so a silent link is noticed
within ``dead_after_s`` while a long run streams nothing.
"""

from __future__ import annotations

import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import paramiko

from .. import interrupts
from ..devices.schema import SshAddress
from ..errors import EdgeoptError, InputError, RunnerError
from ..settings import SshTimeouts
from .limits import LineTail, ReadLimits, flood_error
from .ssh_hostkeys import DEFAULT_KNOWN_HOSTS, TrustOnFirstUse, changed_key_error, load_known_hosts

__all__ = ["ExecResult", "SshSession", "SshTimeouts"]  # SshTimeouts lives in edgeopt.settings (RemoteSpec)

# paramiko logs a failed handshake ("Exception (client): Error reading SSH protocol banner") from its own thread;
# with no logging configured Python prints that on stderr beside edgeopt's one-line error. The failure reaches
# the user as that RunnerError, so paramiko's own records go nowhere unless the application configures logging.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


@dataclass
class ExecResult:
    """What a remote command left behind: exit status (-1: none was sent), stdout, and stderr's last lines."""

    status: int
    stdout: str
    stderr_tail: str


class _Liveness:
    """Keepalive requests that want a reply; ``silent_s`` is how long ago the link last answered."""

    def __init__(self, transport: paramiko.Transport, interval_s: float) -> None:
        self._transport = transport
        self._interval_s = interval_s
        self._last_ok = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ssh-liveness", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set() and self._transport.is_active():
            self._transport.global_request("keepalive@openssh.com", wait=True)  # any answer, even "failure"
            if self._transport.is_active():
                self._last_ok = time.monotonic()
            self._stop.wait(self._interval_s)

    def silent_s(self) -> float:
        return time.monotonic() - self._last_ok

    def stop(self) -> None:
        self._stop.set()


class SshSession:
    """A connection to one device; use as a context manager.

    Args:
        address: where to connect and as whom.
        known_hosts: the known_hosts file trusted (and written on first use when ``accept_new_host_key``).
        accept_new_host_key: record the key of a host not yet in known_hosts instead of refusing it.
        timeouts: deadlines of each step.
    """

    def __init__(self, address: SshAddress, *, known_hosts: Path | None = None, accept_new_host_key: bool = False,
                 timeouts: SshTimeouts | None = None) -> None:
        self.address = address
        self.known_hosts = (known_hosts or DEFAULT_KNOWN_HOSTS).expanduser()
        self.accept_new_host_key = accept_new_host_key
        self.timeouts = timeouts or SshTimeouts()
        self.where = address.label()
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._liveness: _Liveness | None = None
        self._home: str | None = None

    # -- connection -------------------------------------------------------------------------------------------
    def __enter__(self) -> SshSession:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def connect(self) -> None:
        """Connect and authenticate with a key or ssh-agent (never a password), checking the host key.

        Raises:
            InputError: the key file does not exist.
            HostKeyError: unknown host (without ``accept_new_host_key``) or a changed host key.
            RunnerError: unreachable, handshake or authentication failed, or it took longer than ``connect_s``.
        """
        a, t = self.address, self.timeouts
        key = a.key.expanduser() if a.key is not None else None
        if key is not None and not key.is_file():
            raise InputError(f"--key {key}: no such private key file; pass the key that the device authorizes")
        client = paramiko.SSHClient()
        load_known_hosts(client, self.known_hosts)
        client.set_missing_host_key_policy(TrustOnFirstUse(self.known_hosts, self.accept_new_host_key))
        self._client = client
        try:
            self._connect(client, key)
        except BaseException:
            self.close()
            raise
        transport = client.get_transport()
        assert transport is not None
        transport.set_keepalive(max(1, int(t.keepalive_s)))
        self._liveness = _Liveness(transport, t.keepalive_s)

    def _connect(self, client: paramiko.SSHClient, key: Path | None) -> None:
        a, t = self.address, self.timeouts
        hint = "check the address, that sshd runs there, and the network"
        with self.step(f"connecting to {self.where}", t.connect_s, hint=hint):
            sock = socket.create_connection((a.host, a.port), timeout=t.connect_s)
            # Request/response traffic (SFTP, channel opens) stalls ~40 ms per exchange on Nagle + delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                client.connect(
                    a.host, port=a.port, username=a.user, key_filename=str(key) if key else None,
                    look_for_keys=key is None, allow_agent=True, password=None, timeout=t.connect_s,
                    banner_timeout=t.connect_s, auth_timeout=t.connect_s, channel_timeout=t.connect_s, sock=sock,
                )
            except paramiko.BadHostKeyException as exc:
                raise changed_key_error(a.host, a.port, exc.key, exc.expected_key, self.known_hosts) from None
            except paramiko.PasswordRequiredException:
                raise RunnerError(
                    f"the key {key} is protected by a passphrase: load it into ssh-agent (ssh-add {key}) and "
                    "run again without --key; edgeopt never asks for or stores passwords"
                ) from None
            except paramiko.AuthenticationException:
                used = f"key {key}" if key else "ssh-agent and ~/.ssh/id_* keys"
                raise RunnerError(
                    f"authentication as {a.user} on {self.where} failed with {used}: add your public key to "
                    f"~{a.user}/.ssh/authorized_keys on the device (ssh-copy-id) or pass --key"
                ) from None

    def close(self) -> None:
        """Close everything; never blocks for long, never raises."""
        if self._liveness is not None:
            self._liveness.stop()
        for thing in (self._sftp, self._client):
            try:
                if thing is not None:
                    thing.close()
            except Exception:  # closing a dead connection may raise anything
                pass
        self._sftp = None

    def abort(self) -> None:
        """Tear the transport down from any thread: wakes every paramiko call blocked on it."""
        client = self._client
        transport = client.get_transport() if client is not None else None
        if transport is not None:
            transport.close()

    @property
    def transport(self) -> paramiko.Transport:
        """The connection's transport (after :meth:`connect`)."""
        transport = self._client.get_transport() if self._client is not None else None
        assert transport is not None, "connect() first"
        return transport

    @property
    def alive(self) -> bool:
        transport = self._client.get_transport() if self._client is not None else None
        if transport is None or not transport.is_active():
            return False
        return self._liveness is None or self._liveness.silent_s() < self.timeouts.dead_after_s

    @property
    def link_answering(self) -> bool:
        """True when the link answered a keepalive within the last two intervals (a closed transport included: a
        step past its deadline closes a healthy link, a dead link stops answering first)."""
        return self._liveness is not None and self._liveness.silent_s() <= 2 * self.timeouts.keepalive_s

    # -- deadlines --------------------------------------------------------------------------------------------
    @contextmanager
    def step(self, what: str, seconds: float, hint: str = "check the device and the network") -> Iterator[None]:
        """Run the body with a deadline: past ``seconds`` the transport is closed and a RunnerError raised.

        Any non-edgeopt failure inside becomes a one-line RunnerError naming the step (``what`` should name
        the device, e.g. "uploading to pi@10.0.0.5:22").
        """
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            self.abort()

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        except EdgeoptError:
            if interrupts.requested() is not None:  # the interrupt closed the connection: report the interrupt
                raise interrupts.interrupt_error() from None
            if fired.is_set():
                raise self._timeout(what, seconds, hint) from None
            raise
        except (paramiko.SSHException, OSError, EOFError, ValueError) as exc:
            if interrupts.requested() is not None:
                raise interrupts.interrupt_error() from None
            if fired.is_set():
                raise self._timeout(what, seconds, hint) from None
            if isinstance(exc, TimeoutError):  # an SFTP or socket read waited connect_s for an answer
                raise RunnerError(f"{what} failed: no answer from the device for {self.timeouts.connect_s:g} s (the "
                                  "link is down or too slow): check the network, or raise --ssh-timeout connect=S "
                                  "for a slow link") from None
            if isinstance(exc, OSError) and _one_line(exc) == "Failure":  # SFTP v3 has no EROFS/ENOSPC code
                raise RunnerError(f"{what} failed (SFTP 'Failure': the device refused the write): the work dir "
                                  "there is read-only or its disk is full; check `df -h` and `mount` on the "
                                  "device or set another workdir") from None
            raise RunnerError(f"{what} failed ({_one_line(exc)}): {hint}") from None
        finally:
            timer.cancel()
        if fired.is_set():
            raise self._timeout(what, seconds, hint)

    def _timeout(self, what: str, seconds: float, hint: str) -> RunnerError:
        return RunnerError(f"{what} timed out after {seconds:g} s (connection closed): {hint}")

    # -- file transfer ----------------------------------------------------------------------------------------
    @property
    def sftp(self) -> paramiko.SFTPClient:
        """The session's SFTP client (opened on first use; call inside a :meth:`step`)."""
        if self._sftp is None:
            assert self._client is not None, "connect() first"
            self._sftp = self._client.open_sftp()
            self._sftp.get_channel().settimeout(self.timeouts.connect_s)  # type: ignore[union-attr]
        return self._sftp

    def remote_path(self, path: str) -> str:
        """``path`` made absolute on the device (relative paths are under the login's home)."""
        if PurePosixPath(path).is_absolute():
            return path
        if self._home is None:
            self._home = self.sftp.normalize(".")
        return str(PurePosixPath(self._home) / path)

    # -- commands ---------------------------------------------------------------------------------------------
    def execute(self, command: str, *, what: str, timeout_s: float,
                on_stderr_line: Callable[[str], bool] | None = None, heartbeat: bool = False,
                limits: ReadLimits | None = None) -> ExecResult:
        """Run ``command`` on the device, streaming stderr lines as they arrive.

        stdin stays open for the whole command, so a process started with ``--exit-on-stdin-eof`` ends when
        this session ends, whatever ended it. stdout and stderr are read within ``limits`` (linear time, stderr
        in constant memory); the deadline is checked between every chunk, so a flood cannot outlive it.

        Args:
            command: the remote command line; every value in it must already be shell-quoted.
            what: the step's name for messages.
            timeout_s: deadline of the whole command; past it the channel is closed (ending the command).
            on_stderr_line: receives each stderr line; returns True when it consumed it (not kept in the tail).
            heartbeat: send a newline on the command's stdin every ``keepalive_s`` (the agent's
                ``--host-silence-s`` ends it when they stop coming: the link died).
            limits: byte budgets of stdout and stderr (default: a probe's).

        Raises:
            RunnerError: timeout, dead link, a flood, or the connection dropped before the command finished.
        """
        assert self._client is not None, "connect() first"
        transport = self._client.get_transport()
        with self.step(f"starting {what} on {self.where}", self.timeouts.connect_s):
            assert transport is not None
            chan = transport.open_session(timeout=self.timeouts.connect_s)
            chan.exec_command(command)
        limits = limits or ReadLimits.for_probe()
        reader = _ChannelReader(chan, limits, on_stderr_line, what, self.where, timeout_s)
        beat = _Heartbeat(chan, self.timeouts.keepalive_s if heartbeat else 0.0)
        try:
            fd = chan.fileno()
            while True:
                reader.drain()
                if chan.exit_status_ready() and not chan.recv_ready() and not chan.recv_stderr_ready():
                    break
                gone = chan.closed or not transport.is_active()
                if gone and not chan.recv_ready() and not chan.recv_stderr_ready():
                    break
                beat.maybe_send()
                if self._liveness is not None and self._liveness.silent_s() > self.timeouts.dead_after_s:
                    self.abort()
                    raise RunnerError(
                        f"the link to {self.where} died during {what}: no answer to keepalives for "
                        f"{self.timeouts.dead_after_s:g} s; check the network (the agent stops itself on the device)"
                    )
                if not (chan.recv_ready() or chan.recv_stderr_ready()):  # the fd wakes for stdout data only
                    select.select([fd], [], [], min(0.5, reader.left_s(), beat.interval_s or 0.5))
        except (OSError, paramiko.SSHException, EOFError) as exc:
            raise RunnerError(f"{what} on {self.where} failed ({_one_line(exc)}): check the device") from None
        finally:
            chan.close()
        reader.tail.close()
        # A closed channel reads as "exit status ready" with status -1: the connection is gone, not the command.
        if chan.exit_status == -1 and not transport.is_active():
            raise RunnerError(
                f"lost the connection to {self.where} during {what} (sshd stopped or the link dropped); "
                f"the agent stops itself on the device; last output: {reader.tail.text() or '(none)'}"
            )
        return ExecResult(chan.recv_exit_status(), reader.stdout(), reader.tail.text())


class _ChannelReader:
    """Reads a channel's stdout (up to a budget) and stderr (linear, bounded lines) and enforces the deadline."""

    def __init__(self, chan: paramiko.Channel, limits: ReadLimits, on_line: Callable[[str], bool] | None,
                 what: str, where: str, timeout_s: float) -> None:
        self.chan, self.limits, self.what, self.where, self.timeout_s = chan, limits, what, where, timeout_s
        self.deadline = time.monotonic() + timeout_s
        self.tail = LineTail(limits.stderr_bytes, on_line)
        self.out: list[bytes] = []
        self.out_size = 0

    def left_s(self) -> float:
        """Seconds to the deadline; past it a RunnerError (the channel is closed by the caller)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RunnerError(
                f"{self.what} on {self.where} did not finish within {self.timeout_s:.0f} s and was stopped "
                "(channel closed): raise --max-duration or check the device"
            )
        return left

    def drain(self) -> None:
        """Read what is ready on both channels; the deadline and the budgets are checked after every chunk."""
        chan = self.chan
        for _ in range(64):  # then back to the caller's loop: heartbeat and liveness go on during a long stream
            if not (chan.recv_ready() or chan.recv_stderr_ready()):
                return
            if chan.recv_ready():
                chunk = chan.recv(1 << 16)
                self.out_size += len(chunk)
                if self.out_size > self.limits.stdout_bytes:
                    raise flood_error(self.where, "stdout", self.limits.stdout_bytes)
                self.out.append(chunk)
            if chan.recv_stderr_ready():
                self.tail.feed(chan.recv_stderr(1 << 16))
                if self.tail.flooded:
                    raise flood_error(self.where, "stderr", self.limits.stderr_bytes)
            self.left_s()

    def stdout(self) -> str:
        return b"".join(self.out).decode("utf-8", "replace")


class _Heartbeat:
    """A newline on a channel's stdin every ``interval_s`` (0: never); never blocks on a full window."""

    def __init__(self, chan: paramiko.Channel, interval_s: float) -> None:
        self.chan, self.interval_s = chan, interval_s
        self._next = time.monotonic()

    def maybe_send(self) -> None:
        if self.interval_s <= 0 or time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.interval_s
        if self.chan.send_ready():
            self.chan.send(b"\n")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
