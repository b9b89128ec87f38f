"""I/O statistics, the I/O report and the cache from Python (issue 12):
``io_stats()`` on RNTuple and File, ``RNTUPLE_IO_REPORT=1`` printing one
report per handle (when it goes or at exit), and ``open(..., cache=DIR)``
making the second read of the same columns transfer no remote bytes.
The remote store is ``_lib._register_test_scheme`` (a local file served with
the wire counters of a remote backend)."""

from __future__ import annotations

import os
import subprocess
import sys

import rntuple
from rntuple import _lib

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")

_lib._register_test_scheme("pyioremote")


def remote(path: str) -> str:
    return "pyioremote://host" + os.path.abspath(path)


def test_io_stats_logical_and_wire_figures():
    local = rntuple.open(MUONS)["Events"]
    local.arrays(["nMuon", "Muon_pt"])
    s = local.io_stats()
    assert s["wire"] is None
    assert s["requests"] >= 1 and s["bytes_read"] >= s["bytes_needed"] > 0 and s["pages"] > 0
    assert s["read_time"] > 0 and s["read_rate"] > 0
    assert s["file_size"] == os.path.getsize(MUONS)

    f = rntuple.open(remote(MUONS), coalesce_gap=0)
    nt = f["Events"]
    nt.arrays(["nMuon", "Muon_pt"])
    r = nt.io_stats()
    # The same pages; no gaps read with coalesce_gap=0.
    assert r["bytes_needed"] == s["bytes_needed"] and r["bytes_read"] == r["bytes_needed"]
    w = r["wire"]
    # Every request of the planner went out in vectored calls; opening added a few calls.
    assert w["sub_ranges"] >= r["requests"] and w["vectored_requests"] >= r["vectored_calls"]
    assert w["bytes_transferred"] >= r["bytes_read"]
    assert w["cache_hits"] == 0 and w["retries"] == 0
    fs = f.io_stats()
    assert (fs["requests"], fs["bytes_read"], fs["wire"]) == (r["requests"], r["bytes_read"], w)
    report = nt.io_report()
    assert report.startswith(f"rntuple I/O report: {remote(MUONS)} (Events")
    assert f"{r['bytes_needed']} B" in report and "sub-ranges" in report


def test_second_read_through_the_cache_transfers_no_remote_bytes(tmp_path):
    cache = tmp_path / "cache"
    fields = ["nJet", "Jet_pt", "MET_pt"]
    local = rntuple.open(NANO)["Events"].arrays(fields).to_list()
    wire = []
    for _ in range(2):
        f = rntuple.open(remote(NANO), cache=cache)
        assert f["Events"].arrays(fields).to_list() == local
        wire.append(f.io_stats()["wire"])
    assert wire[0]["bytes_transferred"] > 0
    assert wire[1]["bytes_transferred"] == 0 and wire[1]["single_requests"] + wire[1]["vectored_requests"] == 0
    assert wire[1]["cache_bytes"] >= wire[0]["bytes_transferred"] - wire[0]["cache_bytes"]
    # The environment variable does the same.
    code = (
        "import rntuple, sys; from rntuple import _lib; _lib._register_test_scheme('pyioremote');"
        f"f = rntuple.open({remote(NANO)!r}); f['Events'].arrays({fields!r});"
        "print(f.io_stats()['wire']['bytes_transferred'])"
    )
    env = dict(os.environ, RNTUPLE_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "0", out.stderr


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "RNTUPLE_IO_REPORT"}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, check=True)


def test_the_report_is_printed_once_per_handle_when_asked():
    read = f"import rntuple; nt = rntuple.open({MUONS!r})['Events']; nt.arrays(['nMuon']);"
    # Kept alive to the end: printed at exit.
    out = run_python(read, RNTUPLE_IO_REPORT="1")
    assert out.stderr.count("rntuple I/O report: ") == 1, out.stderr
    for label in ["requests:", "bytes:", "avg request:", "file read:", "cache hits:", "wall time:"]:
        assert label in out.stderr
    # Dropped early: printed then, not again at exit.
    out = run_python(read + "del nt; import sys; print('after', file=sys.stderr)", RNTUPLE_IO_REPORT="1")
    assert out.stderr.count("rntuple I/O report: ") == 1
    assert out.stderr.index("rntuple I/O report: ") < out.stderr.index("after"), out.stderr
    # Off by default.
    out = run_python(read)
    assert "I/O report" not in out.stderr
    # The CLI flag.
    exe = os.path.join(os.path.dirname(sys.executable), "rntuple")
    out = subprocess.run(
        [exe, "--io-report", "dump", f"{MUONS}:Events", "--entries", "0:3"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stderr.count("rntuple I/O report: ") == 1, out.stderr
