"""Writing to XRootD (``root://``: writes at offsets to a temporary name, ``kXR_mv`` when complete)
and WebDAV (``http://``: a local spool ``PUT`` to a temporary name, then ``MOVE``), against a real
``xrootd`` (server_xrootd.py, run as ``nobody`` with a writable directory) and a real nginx with
``dav_methods PUT DELETE MOVE`` (server_http.py).

The same proofs for both stores: values read back over the URL equal the input; ROOT 6.40 reads the
file in the server's directory; a writer that is abandoned or SIGKILLed leaves nothing under the
file's name; a refused write, a reset and a stalled server through the tests' proxy; the command
line's ``convert`` and ``merge`` write to the URL."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time

import awkward as ak
import numpy as np
import pytest
import rntuple
from fault_proxy import FaultProxy
from remote_write import assert_root_reads, big_events, small_events, start_endless_writer, wait_for_commits
from server_http import Nginx
from server_xrootd import XrootdServer


class Store:
    """One server: where its files land (``root``), the URL of a path, and its port."""

    def __init__(self, kind: str, root: str, port: int, log: str | None = None) -> None:
        self.kind, self.root, self.port, self.log = kind, root, port, log

    def requests(self) -> list[str]:
        """``METHOD URI STATUS`` of the requests nginx logged."""
        assert self.log is not None
        with open(self.log) as f:
            return [" ".join(ln.split()[:2] + ln.split()[-1:]) for ln in f]

    def url(self, path: str, port: int | None = None) -> str:
        port = port or self.port
        if self.kind == "xrootd":
            return f"root://127.0.0.1:{port}//{path}"
        return f"http://127.0.0.1:{port}/{path}"

    def listing(self, sub: str) -> list[str]:
        d = os.path.join(self.root, sub)
        return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.fixture(scope="module", params=["xrootd", "dav"])
def store(request, tmp_path_factory):
    if request.param == "xrootd":
        with XrootdServer() as server:
            for sub in ("out", "readonly"):
                os.makedirs(os.path.join(server.data, sub))
            os.chmod(os.path.join(server.data, "out"), 0o777)  # the daemon runs as nobody
            yield Store("xrootd", server.data, server.port)
    else:
        server = Nginx(str(tmp_path_factory.mktemp("nginx")), [], "token")
        try:
            yield Store("dav", os.path.join(server.dir, "www"), server.port, os.path.join(server.dir, "access.log"))
        finally:
            server.stop()


@pytest.fixture(autouse=True)
def quick_failures(monkeypatch, tmp_path):
    monkeypatch.setenv("RNTUPLE_SPOOL_DIR", str(tmp_path))


def out(store: Store, name: str) -> str:
    """The path of ``name`` in the writable directory of ``store``."""
    return f"{'out' if store.kind == 'xrootd' else 'dav/out'}/{name}"


def test_a_file_written_to_the_url_reads_back_and_root_reads_it(store, tmp_path):
    events = small_events()
    url = store.url(out(store, "events.root"))
    with rntuple.recreate(url) as f:
        f["Events"] = events
    assert rntuple.open(url)["Events"].arrays().to_list() == events.to_list()
    assert_root_reads(os.path.join(store.root, out(store, "events.root")), events)
    assert not [n for n in store.listing(os.path.dirname(out(store, "x"))) if n.endswith(".rntuple-tmp")]
    assert os.listdir(tmp_path) == []  # the WebDAV spool is gone
    if store.kind == "dav":
        # One PUT to a temporary name beside the file, then a MOVE to the name.
        sent = [r for r in store.requests() if "events.root" in r and not r.startswith(("GET", "HEAD"))]
        assert len(sent) == 2, sent
        assert re.fullmatch(r"PUT /dav/out/\.events\.root\.\S+\.rntuple-tmp 201", sent[0]), sent
        assert re.fullmatch(r"MOVE /dav/out/\.events\.root\.\S+\.rntuple-tmp 20[14]", sent[1]), sent


def test_an_abandoned_writer_leaves_nothing(store, tmp_path):
    url = store.url(out(store, "abandoned.root"))
    with pytest.raises(RuntimeError, match="boom"), rntuple.recreate(url, compression=0) as f:
        f["Events"] = big_events(6)
        raise RuntimeError("boom")
    assert [n for n in store.listing(os.path.dirname(out(store, "x"))) if "abandoned" in n] == []
    assert os.listdir(tmp_path) == []


def test_a_killed_writer_leaves_nothing_that_reads_as_complete(store, tmp_path):
    url = store.url(out(store, "killed.root"))
    proc = start_endless_writer(url, {**os.environ})
    try:
        wait_for_commits(proc, 6)
    finally:
        proc.kill()
        proc.wait()
    names = [n for n in store.listing(os.path.dirname(out(store, "x"))) if "killed" in n]
    assert "killed.root" not in names
    if store.kind == "xrootd":
        # The temporary name holds the committed bytes behind a placeholder header every reader refuses.
        (temp,) = names
        assert temp.startswith(".killed.root.") and temp.endswith(".rntuple-tmp")
        with pytest.raises(Exception, match="not completed|incomplete|placeholder|unfinished"):
            rntuple.open(os.path.join(store.root, out(store, temp)))
    else:
        assert names == []  # the spool was local; nothing was sent


def test_a_refused_write_names_the_url(store):
    url = store.url("readonly/refused.root")
    with pytest.raises(OSError, match=re.escape(url)), rntuple.recreate(url) as f:  # noqa: PT012
        f["Events"] = small_events(10)
    assert not os.path.exists(os.path.join(store.root, "readonly", "refused.root"))


def test_a_connection_reset_mid_write_is_retried(store):
    events = big_events(6, seed=5)
    with FaultProxy(store.port, reset_up_after=1 << 20, faulty_connections=1) as proxy:
        url = store.url(out(store, "reset.root"), port=proxy.port)
        with rntuple.recreate(url, compression=0) as f:
            f["Events"] = events
        assert proxy.connections >= 2
    got = rntuple.open(store.url(out(store, "reset.root")))["Events"].arrays()
    assert np.array_equal(got.x, events.x)


def test_a_stalled_server_times_out(store, monkeypatch):
    monkeypatch.setenv("RNTUPLE_HTTP_TIMEOUT", "1")
    monkeypatch.setenv("RNTUPLE_HTTP_RETRIES", "0")
    monkeypatch.setenv("RNTUPLE_XROOTD_TIMEOUT", "1")
    with FaultProxy(store.port) as proxy:
        url = store.url(out(store, "stalled.root"), port=proxy.port)
        start = time.monotonic()
        with pytest.raises(OSError, match=re.escape(url)):  # noqa: PT012
            with rntuple.recreate(url, compression=0) as f:
                proxy.stall_after = 0  # from now on the server says nothing
                f["Events"] = big_events(6, seed=6)
        assert time.monotonic() - start < 60
    assert "stalled.root" not in store.listing(os.path.dirname(out(store, "x")))


def test_command_line_converts_and_merges_to_the_url(store, tmp_path):
    events = small_events()
    local = tmp_path / "in.root"
    with rntuple.recreate(local) as f:
        f["Events"] = events
    exe = shutil.which("rntuple")
    cmd = [exe] if exe else [sys.executable, "-m", "rntuple"]
    merged = store.url(out(store, "merged.root"))
    p = subprocess.run([*cmd, "merge", merged, str(local), str(local)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert rntuple.open(merged)["Events"].arrays().to_list() == events.to_list() * 2
    parquet = tmp_path / "in.parquet"
    ak.to_parquet(events, parquet)
    converted = store.url(out(store, "converted.root"))
    p = subprocess.run([*cmd, "convert", str(parquet), converted], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert rntuple.open(converted)["Events"].arrays().to_list() == events.to_list()
