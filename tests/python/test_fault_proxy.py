"""The fault proxy the remote tests rely on does what it says, against a real TCP echo server."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from fault_proxy import FaultProxy


@pytest.fixture()
def echo_port():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                return

            def echo(c=conn):
                with c:
                    while data := c.recv(65536):
                        c.sendall(data * 4)  # answers are 4x the request

            threading.Thread(target=echo, daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1]
    stop.set()
    srv.close()


def _ask(port: int, payload: bytes, want: int, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(payload)
        got = b""
        while len(got) < want:
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


def test_forwards_and_counts(echo_port):
    with FaultProxy(echo_port) as p:
        assert _ask(p.port, b"abc", 12) == b"abc" * 4
        assert (p.connections, p.bytes_up, p.bytes_down) == (1, 3, 12)


def test_latency_is_paid_per_request(echo_port):
    with FaultProxy(echo_port, latency=0.2) as p:
        t = time.perf_counter()
        _ask(p.port, b"x", 4)
        assert time.perf_counter() - t >= 0.2


def test_reset_after_n_bytes_then_healthy_connections(echo_port):
    with FaultProxy(echo_port, reset_after=10, faulty_connections=1) as p:
        with pytest.raises(ConnectionResetError):
            _ask(p.port, b"0123456789", 40)
        assert _ask(p.port, b"0123456789", 40) == b"0123456789" * 4


def test_stall_holds_the_connection_silent(echo_port):
    with FaultProxy(echo_port, stall_after=5) as p:
        with socket.create_connection(("127.0.0.1", p.port), timeout=0.5) as c:
            c.sendall(b"abcdef")
            got = c.recv(100)
            assert got == b"abcde"
            with pytest.raises(TimeoutError):
                c.recv(100)


def test_stopped_proxy_refuses(echo_port):
    p = FaultProxy(echo_port).start()
    port = p.port
    p.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
