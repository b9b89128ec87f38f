"""Smoke test of the benchmark harness (``bench/run.py``): a tiny run of every
competitor (ROOT RNTuple and TTree compiled against ROOT from PyPI, rntuple
through Rust and Python, uproot) that must finish with every reader reporting
the input's checksum and ROOT reading the files we write. The C++ builds and
inputs are cached under ``$RNTUPLE_CACHE/bench``; the report goes to a
temporary file, never to ``docs/benchmarks.md``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
from conftest import root_python

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(REPO, "docs", "benchmarks.md")
COMPETITORS = {"root-rntuple", "root-ttree", "ours-rust", "ours-python", "uproot"}
sys.path.insert(0, os.path.join(REPO, "bench"))

import checksum  # noqa: E402


def test_checksum_definition():
    """The checksum every reader prints, on values worked out by hand (the same case as the Rust unit test
    in crates/rntuple-bench/src/checksum.rs): a collection of records with sizes 2, 0, 1."""
    pt = ak.values_astype(ak.Array([[1.0, 2.0], [], [3.0]]), np.float32)
    q = ak.values_astype(ak.Array([[-1, 5], [], [7]]), np.int32)
    arrays = ak.zip({"Jet": ak.zip({"pt": pt, "q": q})}, depth_limit=1)
    sums = checksum.awkward_checksums(arrays)
    assert sums["Jet"] == str(2 * 1 + 0 * 2 + 1 * 3)
    assert sums["Jet[].pt"] == str(0x3F800000 + 2 * 0x40000000 + 3 * 0x40400000)
    assert sums["Jet[].q"] == str(0xFFFFFFFF + 2 * 5 + 3 * 7)
    # a slice starts counting positions at 1 again
    assert checksum.awkward_checksums(arrays[2:])["Jet[].pt"] == str(0x40400000)


def test_input_checksums_of_subfields(tmp_path):
    """The expected checksums of a selection with a sub-field of a record collection (``Jet.pt``, the
    ``read3rec`` case): the collection's sizes and that member only, worked out by hand."""
    import workloads

    w = workloads._Writer(str(tmp_path), 3)
    members = [("pt", w.scalar("f4", np.array([1.0, 2.0, 3.0]))), ("q", w.scalar("i4", np.array([-1, 5, 7])))]
    fields = [
        {"name": "MET_pt", "type": w.scalar("f4", np.array([0.5, 1.0, 2.0]))},
        {"name": "Jet", "type": w.vector(np.array([2, 0, 1]), w.record("NanoJet", members))},
    ]
    manifest = {"entries": 3, "fields": fields}
    sums = checksum.input_checksums(str(tmp_path), manifest, ["MET_pt", "Jet.pt"])
    assert sums == {
        "MET_pt": str(0x3F000000 + 2 * 0x3F800000 + 3 * 0x40000000),
        "Jet": str(2 * 1 + 0 * 2 + 1 * 3),
        "Jet[].pt": str(0x3F800000 + 2 * 0x40000000 + 3 * 0x40400000),
    }
    # the whole collection wins over one of its members, in either order
    whole = checksum.input_checksums(str(tmp_path), manifest, ["Jet"])
    assert whole["Jet[].q"] == str(0xFFFFFFFF + 2 * 5 + 3 * 7)
    assert checksum.input_checksums(str(tmp_path), manifest, ["Jet.pt", "Jet"]) == whole
    assert checksum.input_checksums(str(tmp_path), manifest, ["Jet", "Jet.pt"]) == whole
    with pytest.raises(ValueError, match="no member 'eta'"):
        checksum.input_checksums(str(tmp_path), manifest, ["Jet.eta"])
    with pytest.raises(ValueError, match="no field 'Muon'"):
        checksum.input_checksums(str(tmp_path), manifest, ["Muon.pt"])


def test_bench_quick_run_checks_every_competitor(tmp_path):
    out = tmp_path / "benchmarks.md"
    raw = tmp_path / "results.json"
    docs_before = os.stat(DOCS).st_mtime_ns if os.path.exists(DOCS) else None
    cmd = [
        root_python(),
        os.path.join(REPO, "bench", "run.py"),
        "--quick",
        "--scale",
        "tiny",
        "--runs",
        "1",
        "--workloads",
        "nanoaod,run2012",
        "--codecs",
        "505",
        "--cases",
        "write,read,read3,read3rec,range,limit",
        "--output",
        str(out),
        "--json",
        str(raw),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-6000:]

    data = json.loads(raw.read_text())
    assert data["failures"] == []
    seen = {(r["case"], r["workload"], r["competitor"]) for r in data["results"]}
    for workload in ("nanoaod", "run2012"):
        for case in ("write", "read", "read3", "range"):
            # the memory-budget variant of our Rust writer only writes
            expected = COMPETITORS | {"ours-rust-budget"} if case == "write" else COMPETITORS
            assert {c for (k, w, c) in seen if k == case and w == workload} == expected, (case, workload)
        assert ("limit", workload, "codec") in seen
    # sub-fields of record collections: every reader but TTree's (its generated reader takes whole branches)
    assert {c for (k, w, c) in seen if k == "read3rec" and w == "nanoaod"} == COMPETITORS - {"root-ttree"}
    assert not any(k == "read3rec" and w == "run2012" for (k, w, c) in seen)
    reads = [r for r in data["results"] if r["case"] in ("read", "read3", "read3rec", "range")]
    assert reads and all(r["checksum_ok"] for r in reads)
    # every figure the report needs is there, the heap counter's too (every writer runs under it)
    for r in data["results"]:
        if r["case"] == "write":
            assert r["wall"] > 0 and r["peak_rss"] > r["rss_after_load"] > 0 and r["file_size"] > 0
            assert r["heap_requested"] >= r["heap_above_input"] > 0 and r["heap_calls"] > 0, r["competitor"]
    # ROOT reads the files our writers wrote, with the input's checksum
    checks = {(c["workload"], c["writer"], c["reader"]): c["ok"] for c in data["checks"]}
    for workload in ("nanoaod", "run2012"):
        for writer in ("ours-rust", "ours-python"):
            assert checks[(workload, writer, "root-rntuple")] is True
        assert checks[(workload, "root-rntuple", "ours-rust")] is True
    assert all(checks.values())

    text = out.read_text()
    for section in ("## Machine and versions", "## Workloads", "## Targets", "## Write", "## Read", "## Codec limit"):
        assert section in text
    assert "| zstd 5 | 1 | **rntuple (Rust)** |" in text
    assert "| 3 fields of records (MET_pt, Muon.pt, Jet.pt) | 1 | **rntuple (Python)** |" in text
    # issue 15's targets, measured by this run
    assert "### Issue 15" in text and "| write, 1 thread: time vs codec alone | nanoaod |" in text
    assert "| Python read of 3 fields of record collections, open included: vs ROOT's C++ views | nanoaod |" in text
    # the committed report is left alone
    assert (os.stat(DOCS).st_mtime_ns if os.path.exists(DOCS) else None) == docs_before


def test_bench_cms_aod_memory_case(tmp_path):
    """The CMS AOD-like workload (552 top-level fields, LZMA 4): every writer of its plan writes it
    under the heap counter, ROOT and we read every file back with the input's checksum, and the
    report has its memory section."""
    out = tmp_path / "benchmarks.md"
    raw = tmp_path / "results.json"
    cmd = [root_python(), os.path.join(REPO, "bench", "run.py"), "--scale", "tiny", "--runs", "1"]
    cmd += ["--workloads", "cmsaod", "--cases", "write", "--output", str(out), "--json", str(raw)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-6000:]
    data = json.loads(raw.read_text())
    assert data["failures"] == []
    assert data["workloads"]["cmsaod"]["top_level_fields"] == 552
    writes = [r for r in data["results"] if r["case"] == "write" and r["workload"] == "cmsaod"]
    writers = {"root-rntuple", "root-ttree", "ours-rust", "ours-rust-budget", "ours-python"}
    assert {r["competitor"] for r in writes} == writers
    for r in writes:
        assert r["config"] == {"codec": 204, "threads": 1}
        assert r["heap_requested"] >= r["heap_above_input"] > 0 and r["heap_calls"] > 0, r["competitor"]
        assert r["heap_hist"] and r["file_size"] > 0
    checks = {(c["writer"], c["reader"]): c["ok"] for c in data["checks"]}
    assert checks[("ours-rust", "root-rntuple")] is True
    assert checks[("root-ttree", "root-ttree")] is True
    assert all(checks.values())
    text = out.read_text()
    assert "## Memory: heap and RSS (issue 15)" in text and "### CMS AOD-like, LZMA 4" in text
    assert "| peak heap above input vs ROOT RNTuple | cmsaod |" in text


def test_bench_startup_case(tmp_path):
    """``bench/startup.py`` (issue 15's start-up row) on a tiny 2,000-field file: every process runs,
    the figures and the imports beyond awkward's are reported."""
    env = dict(os.environ, RNTUPLE_CACHE=str(tmp_path))
    cmd = [sys.executable, os.path.join(REPO, "bench", "startup.py"), "--entries", "40", "--runs", "1"]
    proc = subprocess.run([*cmd, "--json", "--importtime"], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-6000:]
    data = json.loads(proc.stdout)
    assert data["file"].startswith(str(tmp_path)) and os.path.exists(data["file"])
    assert set(data["seconds"]) == {"awkward", "rntuple", "uproot"}
    for reader in ("rntuple", "uproot"):
        figures = data["seconds"][reader]
        assert figures["min"] > figures["in_process_min"] > 0
    assert "rntuple._lib" in data["imports_beyond_awkward_us"]
