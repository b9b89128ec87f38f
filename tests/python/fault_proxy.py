"""A TCP proxy on 127.0.0.1 that puts real faults between a client and a real server.

Used by the remote-reading tests and benchmarks (HTTP, XRootD, S3 alike; it does not parse the
protocol). Faults, each settable before or while the proxy runs (new values apply to data that
flows after the change):

* ``latency``: seconds added before each chunk the client sends is forwarded (each request pays it
  once, as a round trip to a far server would);
* ``reset_after``: after this many bytes from the server on one connection, the connection is reset
  (TCP RST, as a crashed server or a broken link gives);
* ``reset_up_after``: after this many bytes from the client on one connection, the connection is
  reset (a link broken while a request body, such as an upload's part, is on its way);
* ``stall_after``: after this many bytes from the server on one connection, nothing more is
  forwarded and the connection is held open (a server that stops answering);
* ``faulty_connections``: the faults above hit only the first N connections (None: all), so a
  client's retry on a new connection can succeed;
* ``stop()`` (or never ``start()``-ing) leaves the port closed (a server that is down).

Counters: ``connections``, ``bytes_up`` (client to server) and ``bytes_down``.

>>> with FaultProxy(server_port, latency=0.01) as proxy:
...     url = f"http://127.0.0.1:{proxy.port}/file.root"
"""

from __future__ import annotations

import socket
import struct
import threading
import time


class FaultProxy:
    def __init__(
        self,
        target_port: int,
        *,
        target_host: str = "127.0.0.1",
        latency: float = 0.0,
        reset_after: int | None = None,
        reset_up_after: int | None = None,
        stall_after: int | None = None,
        faulty_connections: int | None = None,
    ) -> None:
        self.target = (target_host, target_port)
        self.latency = latency
        self.reset_after = reset_after
        self.reset_up_after = reset_up_after
        self.stall_after = stall_after
        self.faulty_connections = faulty_connections
        self.connections = 0
        self.bytes_up = 0
        self.bytes_down = 0
        self._lock = threading.Lock()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._sockets: list[socket.socket] = []
        self._thread: threading.Thread | None = None

    def start(self) -> FaultProxy:
        self._listener.listen(64)
        self._thread = threading.Thread(target=self._accept, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Closes the port and every connection (a server that goes down)."""
        self._stopped.set()
        for s in [self._listener, *self._sockets]:
            _close(s)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                faulty = self.faulty_connections is None or self.connections <= self.faulty_connections
            try:
                server = socket.create_connection(self.target, timeout=10)
                server.settimeout(None)
            except OSError:
                _reset(client)
                continue
            self._sockets += [client, server]
            threading.Thread(target=self._up, args=(client, server, faulty), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, faulty), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, faulty: bool) -> None:
        sent = 0
        try:
            while chunk := client.recv(1 << 16):
                if self.latency:
                    time.sleep(self.latency)
                if faulty and self.reset_up_after is not None and sent + len(chunk) > self.reset_up_after:
                    server.sendall(chunk[: max(0, self.reset_up_after - sent)])
                    _reset(client)
                    _close(server)
                    return
                sent += len(chunk)
                with self._lock:
                    self.bytes_up += len(chunk)
                server.sendall(chunk)
        except OSError:
            pass
        _close(server)

    def _down(self, server: socket.socket, client: socket.socket, faulty: bool) -> None:
        sent = 0
        try:
            while chunk := server.recv(1 << 16):
                if faulty and self.stall_after is not None and sent + len(chunk) > self.stall_after:
                    client.sendall(chunk[: max(0, self.stall_after - sent)])
                    self._stopped.wait()  # hold the connection open, say nothing more
                    return
                if faulty and self.reset_after is not None and sent + len(chunk) > self.reset_after:
                    client.sendall(chunk[: max(0, self.reset_after - sent)])
                    _reset(client)
                    _close(server)
                    return
                with self._lock:  # counted before it is sent, so a client that got it sees it counted
                    self.bytes_down += len(chunk)
                client.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
        _close(client)


def _reset(s: socket.socket) -> None:
    """Closes with a TCP RST instead of a FIN."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    _close(s, how=socket.SHUT_RD)


def _close(s: socket.socket, how: int = socket.SHUT_RDWR) -> None:
    """Closes `s`, first waking any thread blocked on it (closing alone would leave the socket open
    until that thread's call returns)."""
    try:
        s.shutdown(how)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
