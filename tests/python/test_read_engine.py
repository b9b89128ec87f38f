"""The read engine from Python: ``threads`` (same result for any number), I/O
counters, and arrays that cross from Rust without copies."""

from __future__ import annotations

import os

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import rntuple

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
NANO = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
STL = os.path.join(DATA, "test_stl_containers_rntuple_v1-0-0-0.root")


@pytest.mark.parametrize("path", [NANO, STL])
def test_any_number_of_threads_gives_the_same_arrays(path: str) -> None:
    with rntuple.open(path) as f:
        nt = f[f.rntuple_names()[0]]
        one = nt.arrays(threads=1)
        n = nt.num_entries
        for threads in (2, 3, 0, None):
            assert ak.array_equal(nt.arrays(threads=threads), one, equal_nan=True), threads
            part = nt.arrays(entry_start=n // 3, entry_stop=n - 1, threads=threads)
            assert ak.array_equal(part, one[n // 3 : n - 1], equal_nan=True), threads
        batches = [b for b in nt.iterate(step_size=97, threads=2)]
        assert ak.array_equal(ak.concatenate(batches), one, equal_nan=True)
    with rntuple.open(path, threads=1) as f:
        assert ak.array_equal(f[f.rntuple_names()[0]].arrays(), one, equal_nan=True)


def test_bad_thread_counts_are_value_errors() -> None:
    with rntuple.open(NANO) as f:
        nt = f["Events"]
        for bad in (-1, 1.5, "2", True):
            with pytest.raises(ValueError, match="threads"):
                nt.arrays(["nMuon"], threads=bad)
        with pytest.raises(ValueError, match="threads"):
            nt.arrays(["nMuon"], threads=100_000)
    with pytest.raises(ValueError, match="threads"):
        rntuple.open(NANO, threads=-2)


def test_io_stats_count_requests_and_bytes() -> None:
    with rntuple.open(NANO) as f:
        nt = f["Events"]
        nt.reset_io_stats()
        assert nt.io_stats() == {"requests": 0, "vectored_calls": 0, "bytes_read": 0, "bytes_needed": 0, "pages": 0}
        nt.arrays()
        everything = nt.io_stats()
        # One cluster of a small file: one request reads all its pages.
        assert everything["requests"] == 1
        assert everything["bytes_read"] >= everything["bytes_needed"] > 0
        nt.reset_io_stats()
        nt.arrays(["nMuon"])
        one = nt.io_stats()
        assert 0 < one["bytes_needed"] < everything["bytes_needed"] / 4
        assert one["pages"] < everything["pages"]


def test_numbers_and_offsets_reach_python_without_copies() -> None:
    """pyarrow imports the Rust buffers (Arrow PyCapsule interface) and the
    awkward layout views them: the values and 64-bit offsets of a collection
    keep their address from Rust to awkward."""
    from rntuple._awkward import batch_to_layout

    with rntuple.open(NANO) as f:
        nt = f["Events"]
        field = nt["Muon_pt"]
        assert field.columns[0][0][1] == "SplitIndex64"  # 64-bit offsets: no narrowing
        batch = pa.record_batch(nt._inner.read(["Muon_pt"], 0, None, None))
    pt = batch.column(0)
    layout = batch_to_layout(batch, [field])
    muon = layout.content("Muon_pt")
    assert muon.content.data.ctypes.data == pt.values.buffers()[1].address
    assert muon.offsets.data.ctypes.data == pt.buffers()[1].address
    assert muon.content.data.dtype == np.float32
