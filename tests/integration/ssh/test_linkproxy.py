"""The link proxy the link-fault tests rely on: latency each way, a stall that holds and then releases the data in
order, and a cut, all switched while a connection is open (a real TCP echo server on loopback; no root)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.integration.ssh.linkproxy import LinkProxy


@pytest.fixture()
def echo() -> Iterator[tuple[str, int]]:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            while data := conn.recv(4096):
                conn.sendall(data)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[:2]
    stop.set()
    thread.join(timeout=5)
    server.close()


def _round_trip(sock: socket.socket, payload: bytes) -> float:
    started = time.monotonic()
    sock.sendall(payload)
    got = b""
    while len(got) < len(payload):
        got += sock.recv(4096)
    assert got == payload
    return time.monotonic() - started


def test_delay_stall_and_cut_switch_while_the_connection_is_open(echo):
    with LinkProxy(echo) as proxy, socket.create_connection((proxy.host, proxy.port), timeout=10) as sock:
        assert _round_trip(sock, b"a") < 0.15  # normal
        proxy.slow(0.2)
        assert 0.4 <= _round_trip(sock, b"b") < 1.0  # 0.2 s each way
        proxy.stall()
        sock.sendall(b"held-1")
        sock.sendall(b"held-2")
        sock.settimeout(0.5)
        with pytest.raises(TimeoutError):
            sock.recv(100)  # nothing passes while stalled
        proxy.normal()
        sock.settimeout(5)
        got = b""
        while len(got) < 12:
            got += sock.recv(100)
        assert got == b"held-1held-2"  # released, in order
        assert proxy.connections == 1 and proxy.open_connections == 1
        proxy.cut()
        assert sock.recv(100) == b""  # the peer sees the connection end
        assert proxy.open_connections == 0


def test_new_connections_get_no_answer_while_stalled(echo):
    with LinkProxy(echo, connect_timeout_s=0.5) as proxy:
        proxy.stall()
        with socket.create_connection((proxy.host, proxy.port), timeout=5) as sock:
            assert sock.recv(10) == b""  # closed once the connect times out, never forwarded
        assert proxy.connections == 0
