"""The browse server: the page, its static assets and a small JSON API over
one file, nothing else.

Routes (GET only): ``/`` (the page), ``/static/<asset>`` for the assets of
this package (a fixed list), ``/api/summary``, ``/api/pages?rntuple=&cluster=``,
``/api/values?rntuple=&field=&start=&count=``,
``/api/histogram?rntuple=&field=&bins=``. Any other path is 404; a query
with unknown or repeated parameters, a non-integer where an integer belongs,
or an RNTuple / field the file does not have is 400 or 404. On a loopback
address, requests whose ``Host`` is not a loopback name are refused (403):
a web page elsewhere cannot reach the server through DNS rebinding.

Work per request is bounded: at most :data:`MAX_THREADS` requests are
handled at once (more connections wait in the listen queue), a connection
that sends nothing for :attr:`BrowseServer.request_timeout` seconds is
closed, and a histogram (a read of a whole column) is computed once per
field and bin count, one at a time, and then answered from a cache
(:mod:`._source`).
"""

from __future__ import annotations

import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ._source import Source

__all__ = ["ASSETS", "MAX_THREADS", "BrowseServer", "asset"]

#: The static files of the page: name -> content type.
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
#: Requests handled at once (threads); further connections wait.
MAX_THREADS = 8

# Parameters of each API route: name -> integer?
_ROUTES: dict[str, dict[str, bool]] = {
    "/api/summary": {},
    "/api/pages": {"rntuple": False, "cluster": True},
    "/api/values": {"rntuple": False, "field": False, "start": True, "count": True},
    "/api/histogram": {"rntuple": False, "field": False, "bins": True},
}


def asset(name: str) -> str:
    """The text of a static asset (``index.html`` or one of :data:`ASSETS`)."""
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: BrowseServer
    server_version = "rntuple-browse"
    sys_version = ""

    def setup(self) -> None:
        # A client that stalls holds a thread for this long at most.
        super().setup()
        self.connection.settimeout(self.server.request_timeout)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            super().log_message(format, *args)

    def do_HEAD(self) -> None:  # noqa: N802
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"", "text/plain")

    def do_POST(self) -> None:  # noqa: N802
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"method not allowed\n", "text/plain")

    do_PUT = do_DELETE = do_PATCH = do_POST  # noqa: N815

    def do_GET(self) -> None:  # noqa: N802
        self.server.requests.append(self.path)
        try:
            self._check_host()
            status, body, ctype = self._route()
        except _Refused as err:
            status, body, ctype = err.status, json.dumps({"error": str(err)}).encode(), "application/json"
        except Exception as err:  # noqa: BLE001 - the page shows the message
            status = HTTPStatus.UNPROCESSABLE_ENTITY
            body, ctype = json.dumps({"error": str(err) or type(err).__name__}).encode(), "application/json"
        self._send(status, body, ctype)

    def _send(self, status: HTTPStatus, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _check_host(self) -> None:
        if not self.server.loopback:
            return
        try:
            host = urlsplit("//" + (self.headers.get("Host") or "")).hostname
        except ValueError:
            host = None
        if host not in _LOOPBACK:
            raise _Refused(HTTPStatus.FORBIDDEN, f"host {self.headers.get('Host')!r} refused")

    def _route(self) -> tuple[HTTPStatus, bytes, str]:
        url = urlsplit(self.path)
        path = url.path
        if path in ("/", "/index.html"):
            if url.query:
                raise _Refused(HTTPStatus.BAD_REQUEST, "the page takes no query")
            return HTTPStatus.OK, self.server.page.encode(), "text/html; charset=utf-8"
        if path.startswith("/static/") and path[len("/static/") :] in ASSETS:
            name = path[len("/static/") :]
            return HTTPStatus.OK, asset(name).encode(), ASSETS[name]
        if path not in _ROUTES:
            raise _Refused(HTTPStatus.NOT_FOUND, f"no such resource: {path}")
        params = self._params(url.query, _ROUTES[path])
        return HTTPStatus.OK, json.dumps(self._api(path, params)).encode(), "application/json"

    @staticmethod
    def _params(query: str, allowed: dict[str, bool]) -> dict[str, Any]:
        parsed = parse_qs(query, keep_blank_values=True, strict_parsing=False)
        out: dict[str, Any] = {}
        for key, values in parsed.items():
            if key not in allowed:
                raise _Refused(HTTPStatus.BAD_REQUEST, f"unknown parameter {key!r}")
            if len(values) != 1:
                raise _Refused(HTTPStatus.BAD_REQUEST, f"parameter {key!r} given {len(values)} times")
            value = values[0]
            if allowed[key]:
                if not value.lstrip("-").isdigit():
                    raise _Refused(HTTPStatus.BAD_REQUEST, f"parameter {key!r} must be an integer")
                out[key] = int(value)
            else:
                out[key] = value
        return out

    def _api(self, path: str, p: dict[str, Any]) -> Any:
        source = self.server.source
        if path == "/api/summary":
            return source.summary()
        name = p.get("rntuple")
        if name not in source.rntuple_names():
            raise _Refused(HTTPStatus.NOT_FOUND, f"no RNTuple {name!r} in this file")
        if path == "/api/pages":
            if "cluster" not in p:
                raise _Refused(HTTPStatus.BAD_REQUEST, "parameter 'cluster' missing")
            return source.pages(name, p["cluster"])
        field = p.get("field")
        try:
            known = source.fields(name)
        except KeyError as err:
            raise _Refused(HTTPStatus.NOT_FOUND, str(err.args[0])) from None
        if field not in known:
            raise _Refused(HTTPStatus.NOT_FOUND, f"no field {field!r} in {name!r}")
        if path == "/api/values":
            return source.values(name, field, p.get("start", 0), p.get("count", 20))
        return source.histogram(name, field, p.get("bins", 50))


class BrowseServer(ThreadingHTTPServer):
    """Serves the browse page of ``source`` on ``(host, port)`` (port 0: a free one)."""

    daemon_threads = True

    def __init__(self, source: Source, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> None:
        if ":" in host.strip("[]"):
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)
        self.source = source
        self.verbose = verbose
        #: The paths asked for, in order (GET only).
        self.requests: list[str] = []
        self.loopback = host.strip("[]") in ("127.0.0.1", "localhost", "::1")
        self.page = asset("index.html").replace("<!--DATA-->", "")
        self._thread: threading.Thread | None = None
        #: Seconds a connection may stay silent before it is closed.
        self.request_timeout: float = 30.0
        self._slots = threading.BoundedSemaphore(MAX_THREADS)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Hands the request to a thread once one of :data:`MAX_THREADS` slots is free."""
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def start(self) -> str:
        """Serves in a background thread; returns the page's URL."""
        self._thread = threading.Thread(target=self.serve_forever, name="rntuple-browse", daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        if self._thread is not None:
            self._thread.join()
        self.source.close()
