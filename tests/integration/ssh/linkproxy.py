"""A user-space TCP proxy that makes a link slow or stalled on demand (this kernel has no ``tc netem``).

The client connects to ``127.0.0.1:<port>``; each connection is forwarded to ``target``. Every chunk read from
either side is queued with a release time (arrival + the delay in force when it arrived) and written out by that
direction's sender thread, so a 500 ms delay is 500 ms of latency each way with the chunks still pipelined (not a
bandwidth cap). The condition switches at run time, for every open connection at once:

- ``normal()``: no delay;
- ``slow(delay_s)``: each chunk waits ``delay_s`` (a Wi-Fi board at the edge of its range);
- ``stall()``: nothing passes in either direction and new connections get no answer, as when the link is down;
  the held chunks flow again, in order, after ``normal()``/``slow()`` (as TCP retransmits after an outage);
- ``cut()``: every open connection is closed at once (a router reboot: the peers see a reset).

Packet loss needs the kernel (TCP hides it from user space): nftables rules in a namespace, see ``wifi.py``.
Threads only, stopped by :meth:`stop`; nothing outlives the proxy.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field

_CHUNK = 1 << 16
_EOF = b""


@dataclass
class _Condition:
    delay_s: float = 0.0
    stalled: bool = False


@dataclass
class _Pipe:
    """One direction of one connection: chunks with their release times, written to ``dst`` in order."""

    src: socket.socket
    dst: socket.socket
    proxy: LinkProxy
    queue: deque[tuple[float, bytes]] = field(default_factory=deque)
    ready: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False
    ended: bool = False

    def read_loop(self) -> None:
        try:
            while not self.closed:
                readable, _, _ = select.select([self.src], [], [], 0.2)
                if not readable:
                    continue
                data = self.src.recv(_CHUNK)
                self._put(data)
                if not data:
                    return
        except OSError:
            self._put(_EOF)

    def _put(self, data: bytes) -> None:
        with self.ready:
            self.queue.append((time.monotonic() + self.proxy.condition.delay_s, data))
            self.ready.notify_all()

    def send_loop(self) -> None:
        try:
            while not self.closed:
                with self.ready:
                    if not self.queue or self.proxy.condition.stalled:
                        self.ready.wait(0.05)
                        continue
                    release, data = self.queue[0]
                    wait = release - time.monotonic()
                    if wait > 0:
                        self.ready.wait(min(wait, 0.05))
                        continue
                    self.queue.popleft()
                if not data:
                    with contextlib.suppress(OSError):
                        self.dst.shutdown(socket.SHUT_WR)
                    self.ended = True
                    self.proxy.ended(self)
                    return
                self.dst.sendall(data)
        except OSError:
            self.proxy.close_connection(self)

    def wake(self) -> None:
        with self.ready:
            self.ready.notify_all()


class LinkProxy:
    """Listens on ``host:port`` (a free port by default) and forwards to ``target``; use as a context manager.

    Args:
        target: ``(address, port)`` of the real server (an sshd on loopback or in a namespace).
        host: listen address.
        connect_timeout_s: how long a new connection may wait for the target (a dead link: it is closed).
    """

    def __init__(self, target: tuple[str, int], host: str = "127.0.0.1", connect_timeout_s: float = 60.0) -> None:
        self.target = target
        self.connect_timeout_s = connect_timeout_s
        self.condition = _Condition()
        self._listener = socket.create_server((host, 0))
        self.host, self.port = host, int(self._listener.getsockname()[1])
        self._pipes: list[_Pipe] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.connections = 0

    # -- the link's condition ----------------------------------------------------------------------------------
    def normal(self) -> None:
        self._set(_Condition())

    def slow(self, delay_s: float = 0.5) -> None:
        self._set(_Condition(delay_s=delay_s))

    def stall(self) -> None:
        self._set(_Condition(stalled=True))

    def cut(self) -> None:
        """Close every open connection now (both ends see the connection reset)."""
        with self._lock:
            pipes = list(self._pipes)
        for pipe in pipes:
            self.close_connection(pipe)

    def _set(self, condition: _Condition) -> None:
        self.condition = condition
        with self._lock:
            pipes = list(self._pipes)
        for pipe in pipes:
            pipe.wake()

    # -- life cycle --------------------------------------------------------------------------------------------
    def start(self) -> LinkProxy:
        self._spawn(self._accept_loop)
        return self

    def stop(self) -> None:
        self._stop.set()
        self.cut()
        with contextlib.suppress(OSError):
            self._listener.close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> LinkProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _spawn(self, target: object) -> None:
        thread = threading.Thread(target=target, daemon=True, name="linkproxy")  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept_loop(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self._spawn(lambda c=client: self._connect(c))

    def _connect(self, client: socket.socket) -> None:
        """Reach the target (waiting while the link is stalled, like a SYN that gets no answer), then pump."""
        deadline = time.monotonic() + self.connect_timeout_s
        while self.condition.stalled and time.monotonic() < deadline and not self._stop.is_set():
            time.sleep(0.05)
        try:
            if self.condition.stalled:
                raise OSError("link stalled")
            upstream = socket.create_connection(self.target, timeout=max(0.1, deadline - time.monotonic()))
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pipes = [_Pipe(client, upstream, self), _Pipe(upstream, client, self)]
        with self._lock:
            self._pipes.extend(pipes)
            self.connections += 1
        for pipe in pipes:
            self._spawn(pipe.read_loop)
            self._spawn(pipe.send_loop)

    def close_connection(self, pipe: _Pipe) -> None:
        """Close both directions of the connection ``pipe`` belongs to."""
        with self._lock:
            group = [p for p in self._pipes if p.src in (pipe.src, pipe.dst)]
            for p in group:
                self._pipes.remove(p)
        for p in group or [pipe]:
            p.closed = True
            p.wake()
            for s in (p.src, p.dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    s.close()

    def ended(self, pipe: _Pipe) -> None:
        """One direction reached EOF: once both have, the connection is closed."""
        with self._lock:
            group = [p for p in self._pipes if p.src in (pipe.src, pipe.dst)]
        if group and all(p.ended for p in group):
            self.close_connection(pipe)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._pipes) // 2
