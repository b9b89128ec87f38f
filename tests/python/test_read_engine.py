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
        zero = {"requests": 0, "vectored_calls": 0, "bytes_read": 0, "bytes_needed": 0, "pages": 0}
        assert {k: nt.io_stats()[k] for k in zero} == zero
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
        batch = pa.record_batch(nt._inner.read(["Muon_pt"], 0, None, None)[0])
    pt = batch.column(0)
    layout = batch_to_layout(batch, [field])
    muon = layout.content("Muon_pt")
    assert muon.content.data.ctypes.data == pt.values.buffers()[1].address
    assert muon.offsets.data.ctypes.data == pt.buffers()[1].address
    assert muon.content.data.dtype == np.float32


def _muon_file(path) -> ak.Array:
    """A record collection (``Muon``: pt, eta, phi, hits) over several clusters, written by rntuple."""
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 5, 4000)
    total = int(counts.sum())
    hits = ak.unflatten(np.arange(2 * total, dtype=np.int32), np.full(total, 2))
    muon = ak.zip(
        {
            "pt": rng.random(total, np.float32),
            "eta": rng.random(total, np.float32),
            "phi": rng.random(total),
            "hits": hits,
        },
        depth_limit=1,
    )
    data = ak.Array({"nMuon": counts.astype(np.int32), "Muon": ak.unflatten(muon, counts)})
    with rntuple.recreate(path, approx_zipped_cluster_size=20_000, max_unzipped_page_size="1 KiB") as f:
        f["Events"] = data
    return data


def _page_bytes(path, field_paths: list[str]) -> tuple[int, int]:
    """Stored bytes (checksums included) and number of the pages of the columns of the fields at
    ``field_paths`` (on-disk dotted names), from uproot's reading of the page lists."""
    import uproot

    nt = uproot.open(path)["Events"]
    records = nt.field_records

    def path_of(i: int) -> str:
        parent = records[i].parent_field_id
        return records[i].field_name if parent == i else f"{path_of(parent)}.{records[i].field_name}"

    ids = {i for i in range(len(records)) if path_of(i) in field_paths}
    columns = [c for c, rec in enumerate(nt.column_records) if rec.field_id in ids]
    assert len(columns) >= len(field_paths)
    pages = [p for cluster in nt.page_link_list for c in columns for p in cluster[c].pages]
    return sum(p.locator.num_bytes + 8 * p.has_checksum for p in pages), len(pages)


@pytest.mark.parametrize(
    "selection, columns_of",
    [
        (["Muon.pt"], ["Muon", "Muon._0.pt"]),
        ({"filter_name": ["Muon.eta", "Muon.phi"]}, ["Muon", "Muon._0.eta", "Muon._0.phi"]),
        ({"filter_name": "/^Muon[.]hits$/"}, ["Muon", "Muon._0.hits", "Muon._0.hits._0"]),
    ],
)
def test_a_subfield_reads_only_its_columns(tmp_path, selection, columns_of) -> None:
    """``Muon.pt`` reads the pages of ``pt`` and of the ``Muon`` offsets: planned in Rust, not
    dropped in Python. The values and form are those of the whole read's member."""
    path = tmp_path / "muons.root"
    data = _muon_file(path)
    expected_bytes, expected_pages = _page_bytes(path, columns_of)
    with rntuple.open(path) as f:
        nt = f["Events"]
        assert len(nt.clusters) > 3
        nt.reset_io_stats()
        got = nt.arrays(selection) if isinstance(selection, list) else nt.arrays(**selection)
        stats = nt.io_stats()
        assert (stats["bytes_needed"], stats["pages"]) == (expected_bytes, expected_pages)
        members = [p.rsplit(".", 1)[1] for p in columns_of[1:] if p.count(".") == 2]
        assert got.fields == ["Muon"] and got.Muon.fields == members
        whole = nt.arrays(["Muon"])
        assert str(got.Muon.type) == str(whole.Muon[members].type)
        for m in members:
            assert ak.array_equal(got.Muon[m], whole.Muon[m])
        assert ak.array_equal(whole.Muon.hits, data.Muon.hits) and ak.array_equal(whole.Muon.pt, data.Muon.pt)
        nt.reset_io_stats()
        nt.arrays(["Muon"])
        assert nt.io_stats()["bytes_needed"] > expected_bytes  # the other members too
