"""Reading over HTTP: ``rntuple.open("http://...")`` and the command line against a real nginx
(server_http.py), faults through the TCP fault proxy (fault_proxy.py), and a small HTTP server
here that lies on purpose (a 200 to a range request, a wrong ``Content-Range``, a short body, a
file that changes between requests). Every error names the URL."""

from __future__ import annotations

import http.server
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
import rntuple
from fault_proxy import FaultProxy
from server_http import Nginx, events_file, free_port, same  # noqa: F401 (events_file: the `events` fixture)

TOKEN = "test-token-4711"


COLUMNS = ["nMuon", "Muon_pt", "Muon_charge"]


@pytest.fixture(scope="module")
def nginx(events, tmp_path_factory):
    server = Nginx(str(tmp_path_factory.mktemp("nginx")), [events], TOKEN)
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def quick_failures(monkeypatch):
    """No token from the machine; retries and timeouts short enough for tests."""
    for name in ("BEARER_TOKEN", "BEARER_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BEARER_TOKEN_FILE", "/nonexistent/token")
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "2")


def gets(log: list[str]) -> list[str]:
    return [line for line in log if line.startswith("GET ")]


def test_arrays_over_http_equal_the_local_read(nginx, events):
    local = rntuple.open(events)["Events"]
    assert len(local.clusters) == 4
    before = len(nginx.log())
    with rntuple.open(nginx.url("events.root")) as f:
        remote = f["Events"]
        assert remote.num_entries == 1000
        assert same(remote.arrays(), local.arrays())
        assert same(
            remote.arrays(COLUMNS, entry_start=300, entry_stop=800),
            local.arrays(COLUMNS, entry_start=300, entry_stop=800),
        )
    log = nginx.log()[before:]
    assert log[0] == 'HEAD /events.root "-" 200'
    # Every read was a checked range request (one range, or several in one multipart request: the
    # planner's choice; tests/http.rs counts those), and pages went out together.
    assert all(re.fullmatch(r'GET /events\.root "bytes=[0-9,-]+" 206', line) for line in gets(log)), log
    # Far fewer requests than pages (uproot sends one request per page).
    pages = sum(c["num_pages"] for c in rntuple.inspect(events)["rntuples"][0]["clusters"])
    assert len(gets(log)) * 10 < pages, (len(gets(log)), pages)


def test_a_server_without_multi_range_is_read_range_by_range(nginx, events):
    local = rntuple.open(events)["Events"].arrays(COLUMNS)
    before = len(nginx.log())
    assert same(rntuple.open(nginx.url("nomulti/events.root"))["Events"].arrays(COLUMNS), local)
    log = gets(nginx.log()[before:])
    declined = [line for line in log if line.endswith(" 200")]
    assert len(declined) <= 1 and all("," in line for line in declined), log  # asked at most once
    assert all(line.endswith(" 206") and "," not in line for line in log if line not in declined)
    assert len(log) > len(declined)


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 403 to everything and records the ``Authorization`` header of each request."""

    seen: list[str | None] = []

    def log_message(self, format, *args):  # noqa: A002
        pass

    def _refuse(self):
        type(self).seen.append(self.headers.get("Authorization"))
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = _refuse  # noqa: N815
    do_GET = _refuse  # noqa: N815


@pytest.fixture
def recorder():
    _Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_no_bearer_token_over_plain_http(nginx, recorder, monkeypatch):
    """A token and every host opted in: still none goes over http:// (tokens over https only,
    to the hosts of RNTUPLE_TOKEN_HOSTS: crates/rntuple-container/tests/credentials.rs)."""
    monkeypatch.setenv("BEARER_TOKEN", TOKEN)
    monkeypatch.setenv("RNTUPLE_TOKEN_HOSTS", "*")
    with pytest.raises(PermissionError, match="RNTUPLE_TOKEN_HOSTS"):
        rntuple.open(f"{recorder}/f.root")
    assert _Recorder.seen == [None]
    # nginx's private location wants the token: over http it is not sent.
    url = nginx.url("private/events.root")
    with pytest.raises(PermissionError, match=re.escape(url)):
        rntuple.open(url)


def test_errors_and_reports_name_urls_without_credentials(nginx, recorder):
    port = recorder.rsplit(":", 1)[1]
    secret = f"http://alice:pa55word@127.0.0.1:{port}/f.root?X-Amz-Credential=AKIA77&X-Amz-Signature=5ec7e7&v=1"
    with pytest.raises(PermissionError) as err:
        rntuple.open(secret)
    text = str(err.value)
    assert f"http://127.0.0.1:{port}/f.root?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&v=1" in text, text
    for leaked in ("alice", "pa55word", "AKIA77", "5ec7e7"):
        assert leaked not in text
    # The I/O report of a read names the URL without them (nginx ignores the query).
    url = nginx.url("events.root").replace("http://", "http://bob:hunter2@") + "?access_token=t0k3n"
    report = rntuple.open(url)["Events"]
    report.arrays(["nMuon"])
    shown = report.io_report()
    assert "access_token=REDACTED" in shown and "hunter2" not in shown and "t0k3n" not in shown, shown


def test_missing_file_and_server_down_name_the_url(nginx):
    url = nginx.url("missing.root")
    with pytest.raises(FileNotFoundError, match=re.escape(url)):
        rntuple.open(url)
    down = f"http://127.0.0.1:{free_port()}/events.root"
    with pytest.raises(OSError, match=re.escape(down)):
        rntuple.open(down)


def command() -> list[str]:
    exe = shutil.which("rntuple")
    return [exe] if exe else [sys.executable, "-m", "rntuple"]


def test_command_line_reads_urls(nginx, events):
    url = nginx.url("events.root")
    p = subprocess.run([*command(), "ls", url], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Events" in p.stdout
    q = subprocess.run([*command(), "show", f"{url}:Events"], capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr
    local = subprocess.run([*command(), "show", f"{events}:Events"], capture_output=True, text=True, timeout=120)
    assert q.stdout.replace(url, events) == local.stdout


# ---------------------------------------------------------------------------
# faults through the TCP proxy
# ---------------------------------------------------------------------------


def test_a_reset_mid_transfer_is_retried(nginx, events):
    local = rntuple.open(events)["Events"].arrays()
    with FaultProxy(nginx.port, reset_after=3000, faulty_connections=1) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/events.root"
        assert same(rntuple.open(url)["Events"].arrays(), local)
        assert proxy.connections >= 2


def test_resets_every_time_give_a_clear_error_in_bounded_time(nginx):
    with FaultProxy(nginx.port, reset_after=3000) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/events.root"
        start = time.monotonic()
        with pytest.raises(OSError, match=re.escape(url) + ".*failed after 3 attempts"):
            rntuple.open(url)["Events"].arrays()
        assert time.monotonic() - start < 30


def test_a_stalled_server_times_out(nginx, monkeypatch):
    monkeypatch.setenv("RNTUPLE_HTTP_TIMEOUT", "1")
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "1")
    with FaultProxy(nginx.port, stall_after=3000) as proxy:
        url = f"http://127.0.0.1:{proxy.port}/events.root"
        start = time.monotonic()
        with pytest.raises(OSError, match=re.escape(url)):
            rntuple.open(url)["Events"].arrays()
        assert time.monotonic() - start < 20


# ---------------------------------------------------------------------------
# a server that lies
# ---------------------------------------------------------------------------


class Liar(http.server.BaseHTTPRequestHandler):
    """Serves ``server.data`` with real HTTP; ``server.mode`` picks the lie."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def headers_for(self, length: int, status: int, content_range: str | None = None) -> None:
        srv = self.server
        srv.requests += 1
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        etag = '"v1"' if srv.mode != "changing" or srv.requests == 1 else f'"v{srv.requests}"'
        self.send_header("ETag", etag)
        if content_range:
            self.send_header("Content-Range", content_range)
        self.end_headers()

    def do_HEAD(self) -> None:
        self.headers_for(len(self.server.data), 200)

    def do_GET(self) -> None:
        data, mode = self.server.data, self.server.mode
        spec = self.headers.get("Range", "").removeprefix("bytes=")
        if "," in spec or mode == "200":  # no multi-range here; "200": no ranges at all
            self.headers_for(len(data), 200)
            self.wfile.write(data)
            return
        first, last = (int(x) for x in spec.split("-"))
        body = data[first : last + 1]
        shift = 1 if mode == "wrong-range" else 0
        self.headers_for(len(body), 206, f"bytes {first + shift}-{last + shift}/{len(data)}")
        if mode == "short":
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture
def liar(events):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Liar)
    server.data = open(events, "rb").read()  # noqa: SIM115
    server.mode = "honest"
    server.requests = 0
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("200", "answered 200 .* to range request"),
        ("wrong-range", "Content-Range 'bytes 1-"),
        ("short", "body ended early"),
        ("changing", "changed since it was opened"),
    ],
)
def test_a_lying_server_is_never_believed(liar, events, mode, message):
    url = f"http://127.0.0.1:{liar.server_address[1]}/events.root"
    assert same(rntuple.open(url)["Events"].arrays(COLUMNS), rntuple.open(events)["Events"].arrays(COLUMNS))
    liar.mode = mode
    liar.requests = 0
    with pytest.raises(OSError, match=re.escape(url) + ".*" + message):
        rntuple.open(url)["Events"].arrays(COLUMNS)


def test_a_handle_whose_url_carries_credentials_is_not_pickled(nginx, monkeypatch):
    import pickle

    plain = rntuple.open(nginx.url("events.root"))
    assert pickle.loads(pickle.dumps(plain["Events"])).num_entries == 1000
    url = nginx.url("events.root") + "?X-Amz-Credential=AKIA77&X-Amz-Signature=5ec7e7"
    f = rntuple.open(url)
    for handle in (f, f["Events"]):
        with pytest.raises(pickle.PicklingError, match="RNTUPLE_PICKLE_CREDENTIALS") as err:
            pickle.dumps(handle)
        assert "5ec7e7" not in str(err.value) and "X-Amz-Signature=REDACTED" in str(err.value)
    # The user's explicit choice: then the URL travels as given.
    monkeypatch.setenv("RNTUPLE_PICKLE_CREDENTIALS", "1")
    data = pickle.dumps(f["Events"])
    assert b"5ec7e7" in data
    assert pickle.loads(data).num_entries == 1000
