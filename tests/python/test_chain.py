"""Chains and joins (friends): rntuple.chain and rntuple.join, after ROOT's RNTupleProcessor."""

from __future__ import annotations

import os

import awkward as ak
import numpy as np
import pytest
import rntuple
from conftest import write_in_clusters

_write = write_in_clusters


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = str(tmp_path_factory.mktemp("chain"))
    out = {}
    out["a"] = _write(
        os.path.join(d, "a.root"), "Events", {"event": np.arange(0, 30), "x": np.arange(30) * 1.5}, [10, 20]
    )
    out["b"] = _write(
        os.path.join(d, "b.root"), "Events", {"event": np.arange(30, 50), "x": np.arange(20) * -1.0}, [20]
    )
    # Different schema: y instead of x, and x with another type.
    out["c"] = _write(os.path.join(d, "c.root"), "Events", {"event": np.arange(50, 55), "y": np.ones(5)}, [5])
    out["d"] = _write(
        os.path.join(d, "d.root"), "Events", {"event": np.arange(5), "x": np.arange(5, dtype=np.int32)}, [5]
    )
    # Friends of a+b: the same 50 entries, other fields.
    out["f"] = _write(os.path.join(d, "f.root"), "Calib", {"w": np.arange(50) * 0.5}, [25, 25])
    # An index-joined auxiliary: some events, shuffled, some missing.
    events = np.array([45, 3, 7, 0, 29, 30, 12, 99])
    out["idx"] = _write(os.path.join(d, "idx.root"), "Aux", {"event": events, "e": events * 10.0}, [4, 4])
    return out


def test_chain_global_entries(files: dict[str, str]) -> None:
    c = rntuple.chain([files["a"], files["b"]])
    assert c.num_entries == 50 and len(c) == 50
    assert c.keys() == ["event", "x"]
    assert c.arrays()["event"].to_list() == list(range(50))
    want = [37.5, 39.0, 40.5, 42.0, 43.5, -0.0, -1, -2, -3, -4]
    assert c.arrays("x", entry_start=25, entry_stop=35)["x"].to_list() == want
    reports = [r for _, r in c.iterate(step_size=15, report=True)]
    assert [(os.path.basename(r.file_path), r.entry_start, r.entry_stop, r.global_entry_start) for r in reports] == [
        ("a.root", 0, 10, 0),
        ("a.root", 10, 20, 10),  # a cluster of 20 > 15 entries: two equal pieces
        ("a.root", 20, 30, 20),
        ("b.root", 0, 10, 30),
        ("b.root", 10, 20, 40),
    ]


def test_chain_of_rntuple_specs(files: dict[str, str]) -> None:
    c = rntuple.chain([f"{files['b']}:Events", f"{files['a']}:Events"])
    assert c.arrays("event")["event"].to_list() == list(range(30, 50)) + list(range(30))


def test_schema_mismatch_names_field_and_files(files: dict[str, str]) -> None:
    with pytest.raises(rntuple.SchemaMismatchError) as err:
        rntuple.chain([files["a"], files["c"]]).arrays()
    text = str(err.value)
    assert "'x'" in text and "a.root" in text and "c.root (missing)" in text and "union=True" in text
    with pytest.raises(rntuple.SchemaMismatchError, match=r"'x'.*double.*int32"):
        rntuple.chain([files["a"], files["d"]]).keys()


def test_union_fills_missing_fields_with_none(files: dict[str, str]) -> None:
    c = rntuple.chain([files["b"], files["c"]], union=True)
    assert c.keys() == ["event", "x", "y"]
    got = c.arrays()
    assert got["event"].to_list() == list(range(30, 55))
    assert got["x"].to_list() == [-float(i) for i in range(20)] + [None] * 5
    assert got["y"].to_list() == [None] * 20 + [1.0] * 5
    assert str(got.type) == "25 * {event: int64, x: ?float64, y: ?float64}"
    assert rntuple.concatenate([files["b"], files["c"]], union=True)["y"].to_list() == got["y"].to_list()


def test_join_side_by_side_with_prefixes(files: dict[str, str]) -> None:
    j = rntuple.join([[files["a"], files["b"]], files["f"]])
    assert j.keys() == ["event", "x", "Calib.w"]  # auxiliary fields under the RNTuple's name, as ROOT
    got = j.arrays()
    assert got["event"].to_list() == list(range(50))
    assert got["Calib.w"].to_list() == [i * 0.5 for i in range(50)]
    # Named prefixes for every input; filter_name sees the prefixed names.
    j = rntuple.join([[files["a"], files["b"]], files["f"]], names=["main", "cal"])
    assert j.arrays(filter_name=["main.event", "cal.*"]).fields == ["main.event", "cal.w"]
    parts = list(j.iterate(step_size=20))
    assert ak.concatenate(parts)["cal.w"].to_list() == got["Calib.w"].to_list()
    with pytest.raises(ValueError, match="same number of entries"):
        rntuple.join([files["a"], files["f"]])


def test_join_on_index_field(files: dict[str, str]) -> None:
    j = rntuple.join([[files["a"], files["b"]], files["idx"]], on="event")
    got = j.arrays()
    assert len(got) == 50
    e = got["Aux.e"].to_list()
    want = {45: 450.0, 3: 30.0, 7: 70.0, 0: 0.0, 29: 290.0, 30: 300.0, 12: 120.0}
    assert e == [want.get(i) for i in range(50)]  # unmatched entries: None
    assert str(got.type) == '50 * {event: int64, x: float64, "Aux.event": ?int64, "Aux.e": ?float64}'
    # Several index fields.
    j = rntuple.join([files["idx"], files["idx"]], names=[None, "again"], on=["event", "e"])
    assert j.arrays()["again.e"].to_list() == [450.0, 30.0, 70.0, 0.0, 290.0, 300.0, 120.0, 990.0]
    with pytest.raises(KeyError, match="index field 'nope'"):
        rntuple.join([files["a"], files["idx"]], on="nope")
