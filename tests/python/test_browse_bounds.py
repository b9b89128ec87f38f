"""The browse server's work per request is bounded, and the page names a URL without its
credentials: a histogram (a read of a whole column) is computed once and then answered from a
cache; at most ``MAX_THREADS`` requests are handled at once, and a silent connection is closed
after ``request_timeout``; the page, its title and the summary show a URL without userinfo or
signature."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.request

from rntuple import browse
from rntuple.browse._server import MAX_THREADS
from server_http import Nginx

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
FILE = os.path.join(DATA, "test_multiple_cluster_groups_rntuple_v1-0-0-0.root")


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def test_a_histogram_is_computed_once_then_cached():
    server = browse.serve(FILE)
    try:
        base = server.url + "api/histogram?rntuple=ntuple&field=one&bins=20"
        first = get(base)
        assert sum(first["counts"]) == first["entries"] == 1000
        reads = server.source._ntuple("ntuple").io_stats()["requests"]
        assert reads > 0
        again = get(base)
        assert again == first
        # The second answer read nothing.
        assert server.source._ntuple("ntuple").io_stats()["requests"] == reads
        # Another bin count is another histogram: it reads again.
        assert sum(get(base.replace("bins=20", "bins=7"))["counts"]) == 1000
        assert server.source._ntuple("ntuple").io_stats()["requests"] > reads
    finally:
        server.stop()


def _browse_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("Thread-") and "process_request" in t.name)


def test_threads_are_bounded_and_silent_connections_closed():
    server = browse.serve(FILE)
    server.request_timeout = 1.0
    host, port = server.server_address[0], server.server_address[1]
    silent = []
    try:
        for _ in range(3 * MAX_THREADS):
            s = socket.create_connection((host, port))
            silent.append(s)
        time.sleep(0.5)
        busy = _browse_threads()
        assert 0 < busy <= MAX_THREADS, busy
        # Once the silent connections time out, a real request is answered.
        start = time.monotonic()
        assert get(server.url + "api/summary")["rntuples"][0]["name"] == "ntuple"
        assert time.monotonic() - start < 15
    finally:
        for s in silent:
            s.close()
        server.stop()


def test_the_page_names_a_url_without_its_credentials(tmp_path):
    nginx = Nginx(str(tmp_path / "nginx"), [FILE], token="t")
    try:
        secret = nginx.url(os.path.basename(FILE)).replace("http://", "http://alice:pa55word@")
        secret += "?X-Amz-Credential=AKIA77&X-Amz-Signature=5ec7e7"
        out = browse.write_html(secret, tmp_path / "page.html")
        page = open(out, encoding="utf-8").read()
        server = browse.serve(secret)
        try:
            summary = json.dumps(get(server.url + "api/summary"))
        finally:
            server.stop()
    finally:
        nginx.stop()
    for text in (page, summary):
        assert "X-Amz-Signature=REDACTED" in text
        for leaked in ("alice", "pa55word", "AKIA77", "5ec7e7"):
            assert leaked not in text, leaked


def _ints(path) -> str:
    import numpy as np
    import rntuple

    with rntuple.recreate(path) as f:
        f["Events"] = {"x": np.arange(1_000_000, dtype=np.int64)}
    return str(path)


def test_the_server_reads_within_a_default_budget():
    # The default (docs/browse.md): 1 GiB per read, whatever the caller's rntuple.open default.
    server = browse.serve(FILE)
    try:
        assert server.source.max_memory == 1 << 30
        server.source._ntuple("ntuple")
        assert server.source._file._options["max_memory"] == 1 << 30
    finally:
        server.stop()


def test_a_read_over_the_budget_is_an_error_answer_and_the_server_goes_on(tmp_path):
    # `rntuple browse --max-memory`: a histogram of the 8 MB column x is refused (an error the page
    # shows, HTTP 422), before the read allocates; the server answers the next requests.
    import signal
    import subprocess
    import sys
    import urllib.error

    path = _ints(tmp_path / "ints.root")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "rntuple", "browse", path, "--no-browser", "--port", str(port), "--max-memory", "4 MB"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        assert "serving" in line, line + (p.stderr.read() if p.poll() is not None else "")
        base = f"http://127.0.0.1:{port}/api/"
        try:
            urllib.request.urlopen(base + "histogram?rntuple=Events&field=x&bins=10", timeout=30)
            raise AssertionError("the histogram should be refused")
        except urllib.error.HTTPError as err:
            assert err.code == 422
            message = json.loads(err.read())["error"]
        assert "4000000-byte max_memory budget" in message and "iterate(step_size=" in message, message
        values = get(base + "values?rntuple=Events&field=x&start=0&count=5")
        assert values["values"] == [0, 1, 2, 3, 4]
        assert get(base + "summary")["rntuples"][0]["name"] == "Events"
        assert p.poll() is None
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
    assert p.returncode == 0
    # A bad size is a usage error naming the option.
    q = subprocess.run(
        [*cmd[:5], "--max-memory", "a lot", "--html", "-o", str(tmp_path / "x.html")], capture_output=True, text=True
    )
    assert q.returncode != 0 and "--max-memory: a memory size must be" in q.stderr, q.stderr
