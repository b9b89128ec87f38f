"""Reading over XRootD (``root://``) from a real ``xrootd`` server started on 127.0.0.1.

The server (``server_xrootd.py``) serves a temporary directory; files read over the URL must give
exactly what the local read of the same file gives, from Python and from the command line. Faults
go through ``fault_proxy.py`` between client and server: a reset connection is retried on a new
connection, resets on every connection and a stalled server end in a clear error naming the URL
within bounded time, and a server that is down is a connection error naming the URL. Those reads run in a
child process (see CHILD).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import awkward as ak
import pytest
import rntuple
from conftest import DATA
from fault_proxy import FaultProxy
from server_xrootd import XrootdServer

MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
STL = os.path.join(DATA, "test_stl_containers_rntuple_v1-0-0-0.root")


@pytest.fixture(scope="module")
def server():
    with XrootdServer() as s:
        yield s


@pytest.fixture(scope="module")
def clustered(server, tmp_path_factory) -> tuple[str, str]:
    """The muon Events rewritten in small clusters (local path, URL)."""
    local = str(tmp_path_factory.mktemp("xrootd") / "muons_clusters.root")
    data = rntuple.open(MUONS)["Events"].arrays()
    with rntuple.recreate(local, approx_zipped_cluster_size=4096, max_unzipped_page_size=1024) as f:
        f.mkrntuple("Events", data)  # writes data (uproot semantics)
    assert len(rntuple.open(local)["Events"].clusters) >= 5
    return local, server.url(server.put(local))


def same(a, b) -> bool:
    return ak.to_list(a) == ak.to_list(b)


def test_arrays_over_root_url_equal_local(server, clustered):
    local, url = clustered
    remote = rntuple.open(url)["Events"]
    mine = rntuple.open(local)["Events"]
    assert remote.num_entries == mine.num_entries == 1000
    assert len(remote.clusters) == len(mine.clusters) >= 5
    assert same(remote.arrays(), mine.arrays())
    assert same(remote.arrays(["Muon_pt", "nMuon"]), mine.arrays(["Muon_pt", "nMuon"]))
    assert same(remote.arrays(entry_start=333, entry_stop=777), mine.arrays(entry_start=333, entry_stop=777))
    # A file written by ROOT, and xroot:// spelled with one slash after the host.
    path = server.put(STL)
    nt = rntuple.open(f"xroot://127.0.0.1:{server.port}{path}")["ntuple"]
    assert same(nt.arrays(), rntuple.open(STL)["ntuple"].arrays())


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rntuple", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_cli_ls_and_show_on_the_url(clustered):
    local, url = clustered
    for command, target in (("ls", ""), ("show", ":Events")):
        remote, mine = cli(command, url + target), cli(command, local + target)
        assert remote.returncode == 0, remote.stderr
        assert mine.returncode == 0, mine.stderr
        assert remote.stdout.replace(url, "FILE") == mine.stdout.replace(local, "FILE")
        assert "Events" in remote.stdout


def test_missing_file_is_file_not_found_naming_the_url(server):
    url = server.url("/no/such/file.root")
    with pytest.raises(FileNotFoundError, match=re.escape(url)):
        rntuple.open(url)
    p = cli("ls", url)
    assert p.returncode != 0 and url in p.stderr


PATH = "/muons_clusters.root"

# The reads of the fault tests run in a child process: the proxy's threads live in this process,
# and a read holding the GIL here would starve them (a fault of the test, not of the server).
CHILD = """
import json, sys, time
import awkward as ak, rntuple
url, local = sys.argv[1], sys.argv[2]
start = time.monotonic()
try:
    remote = rntuple.open(url)["Events"].arrays()
    ok = ak.to_list(remote) == ak.to_list(rntuple.open(local)["Events"].arrays())
    print(json.dumps({"equal": ok, "seconds": time.monotonic() - start}))
except OSError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e), "seconds": time.monotonic() - start}))
"""


def read_in_child(url: str, local: str, env: dict[str, str] | None = None) -> dict:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, url, local],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def failure(url: str, local: str, within: float, env: dict[str, str] | None = None) -> str:
    """The message of the OSError that reading ``url`` ends in, checked to name the URL in time."""
    got = read_in_child(url, local, env)
    assert "error" in got, got
    assert url in got["message"], got
    assert got["seconds"] < within, got
    return got["message"]


def test_reset_connection_is_retried(server, clustered):
    local, _ = clustered
    with FaultProxy(server.port, reset_after=3000, faulty_connections=1) as proxy:
        assert read_in_child(server.url(PATH, port=proxy.port), local).get("equal") is True
        assert proxy.connections >= 2, "the reset connection was replaced by a new one"


def test_resets_on_every_connection_end_in_an_error_naming_the_url(server, clustered):
    local, _ = clustered
    with FaultProxy(server.port, reset_after=3000) as proxy:
        assert "after 4 attempts" in failure(server.url(PATH, port=proxy.port), local, within=30)
        assert proxy.connections >= 4, "3 retries on new connections"


def test_stalled_server_times_out(server, clustered):
    local, _ = clustered
    with FaultProxy(server.port, stall_after=3000) as proxy:
        url = server.url(PATH, port=proxy.port)
        message = failure(url, local, within=15, env={"RNTUPLE_XROOTD_TIMEOUT": "1.5"})
        assert "no answer within 1.5 s" in message


def test_server_down_is_a_connection_error_naming_the_url(server, clustered):
    local, _ = clustered
    proxy = FaultProxy(server.port)  # bound, never started: nothing accepts
    url = server.url(PATH, port=proxy.port)
    proxy.stop()
    assert "refused" in failure(url, local, within=10).lower()
