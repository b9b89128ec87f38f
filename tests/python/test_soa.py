"""Struct-of-arrays fields (field flag 0x08, ROOT 6.40's experimental
``ROOT::Experimental::RSoAField``) read as the collection of records they are
on disk, and written (``soa=[...]``) as ROOT writes them.

``tests/data/soa_root640.root`` was written by ROOT 6.40 with
``tests/reference/soa_root.py``: entry ``e`` holds ``e % 4`` hits with
``x = e + 0.25 k``, ``y = -e - 0.5 k``, ``id = 100 e + k`` (the values the
script fills, not what a reader returned). ROOT 6.40 cannot read an SoA
field back (write-only there), so uproot is the second reader; what ROOT 6.40
does with our file is compared with what it does with its own
(``soa_root.py --read``: the field descriptors, the records through a
``std::vector<HitRecord>`` view, its refusals of the SoA field itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import rntuple
from conftest import REFERENCE, root_python

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
SOA = os.path.join(DATA, "soa_root640.root")


def filled() -> list[dict]:
    return [
        {"hits": [{"x": e + 0.25 * k, "y": -e - 0.5 * k, "id": 100 * e + k} for k in range(e % 4)], "n": e}
        for e in range(5)
    ]


def test_soa_field_reads_as_a_collection_of_its_records():
    events = rntuple.open(SOA)["Events"]
    arr = events.arrays()
    assert str(arr.type) == "5 * {hits: var * {x: float32, y: float32, id: int32}, n: int32}"
    assert arr.tolist() == filled()
    hits = events.fields[0]
    assert (hits.type_name, hits.kind) == ("HitSoA", "collection")
    assert [c.type_name for c in hits.children] == ["HitRecord"]
    # a subfield alone, as for any collection of records
    assert events.arrays(["hits.x"])["hits"]["x"].tolist() == [[h["x"] for h in e["hits"]] for e in filled()]


def test_uproot_reads_the_same_values():
    uproot = pytest.importorskip("uproot")
    with uproot.open(SOA) as f:
        theirs = f["Events"].arrays()
    assert ak.to_list(theirs) == rntuple.open(SOA)["Events"].arrays().tolist()


def test_inspect_and_show_name_the_soa_type():
    run = [sys.executable, "-m", "rntuple"]
    shown = subprocess.run([*run, "show", SOA], capture_output=True, text=True, check=True).stdout
    assert "hits : HitSoA [SoA of HitRecord]" in shown, shown
    inspected = subprocess.run([*run, "inspect", "--json", SOA], capture_output=True, text=True, check=True)
    report = json.loads(inspected.stdout)
    fields = {f["name"]: f for f in report["rntuples"][0]["fields"]}
    assert (fields["hits"]["type"], fields["hits"]["soa"], fields["n"]["soa"]) == ("HitSoA", True, False)


# ROOT's versions and checksums of the classes of tests/reference/soa/soa_classes.hxx (the values
# its RSoAField stored in soa_root640.root; the ROOT test below reads them back from both files).
SOA_TYPES = {
    "hits": {"type": "HitSoA", "type_version": 2, "type_checksum": 1905544633},
    "hits._0": {"type": "HitRecord", "type_version": 2, "type_checksum": 2530391345},
}


def soa_data() -> ak.Array:
    """``filled()`` with the members' C++ types (float, float, int)."""
    data = ak.Array(filled())
    hits = ak.zip(
        {
            "x": ak.values_astype(data.hits.x, "float32"),
            "y": ak.values_astype(data.hits.y, "float32"),
            "id": ak.values_astype(data.hits.id, "int32"),
        }
    )
    return ak.zip({"hits": hits, "n": ak.values_astype(data.n, "int32")}, depth_limit=1)


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> str:
    """``filled()`` written with ``soa=["hits"]`` as ROOT's RSoAField wrote soa_root640.root."""
    path = str(tmp_path_factory.mktemp("soa") / "soa_ours.root")
    with rntuple.recreate(path) as f:
        f.mkrntuple("Events", soa_data(), soa=["hits"], types=SOA_TYPES)
    return path


def test_we_write_soa_fields_and_read_them_back(ours):
    events = rntuple.open(ours)["Events"]
    assert events.arrays().tolist() == filled()
    hits = events.fields[0]
    assert (hits.type_name, hits.kind, [c.type_name for c in hits.children]) == ("HitSoA", "collection", ["HitRecord"])
    run = [sys.executable, "-m", "rntuple"]
    shown = subprocess.run([*run, "show", ours], capture_output=True, text=True, check=True).stdout
    assert "hits : HitSoA [SoA of HitRecord]" in shown, shown
    report = json.loads(subprocess.run([*run, "inspect", "--json", ours], capture_output=True, text=True).stdout)
    mine = json.loads(subprocess.run([*run, "inspect", "--json", SOA], capture_output=True, text=True).stdout)
    # the same fields and columns as ROOT's file, and the same bytes before compression (the
    # record-level comparison is crates/rntuple/tests/write_roundtrip.rs::soa_field_records_and_columns_are_roots)
    keys = ("name", "type", "id", "soa", "num_subfields", "num_columns", "num_pages", "uncompressed")
    assert [{k: f[k] for k in keys} for f in report["rntuples"][0]["fields"]] == [
        {k: f[k] for k in keys} for f in mine["rntuples"][0]["fields"]
    ]
    assert str(events.arrays().type) == str(rntuple.open(SOA)["Events"].arrays().type)


def test_uproot_reads_our_soa_file(ours):
    uproot = pytest.importorskip("uproot")
    with uproot.open(ours) as f:
        assert ak.to_list(f["Events"].arrays()) == filled()


def test_root_reads_our_soa_file_as_it_reads_its_own(ours):
    """ROOT 6.40 (through the classes' dictionary) sees the same SoA field in our file as in its own
    (IsSoACollection, type names, versions, checksums), reads its records through a
    ``std::vector<HitRecord>`` view with the values filled, and refuses to read it as an SoA field
    in both files alike (``RSoAField`` is write-only in 6.40)."""
    script = os.path.join(REFERENCE, "soa_root.py")
    proc = subprocess.run([root_python(), script, "--read", ours, SOA], capture_output=True, text=True)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 2, proc.stderr[-3000:]
    theirs_of_ours, theirs_of_theirs = lines
    assert theirs_of_ours["entries"] == filled()
    assert theirs_of_ours["fields"][0] == {
        "name": "hits",
        "type": "HitSoA",
        "version": 2,
        "checksum": 1905544633,
        "soa": True,
        "role": 2,
        "parent": "",
    }
    for key in ("fields", "entries", "show", "soa_view"):
        assert theirs_of_ours[key] == theirs_of_theirs[key], key
    assert "RSoAField::ReadGlobalImpl" in theirs_of_ours["show"] and "not yet implemented" in theirs_of_ours["show"]
    assert "is a SoA field" in theirs_of_ours["soa_view"]


def test_soa_option_errors(tmp_path):
    data = soa_data()
    with rntuple.recreate(str(tmp_path / "bad.root")) as f:
        with pytest.raises(rntuple.WriteError, match=r"types=\{'hits._0': 'HitRecord'\}"):
            f.mkrntuple("A", data, soa=["hits"], types={"hits": "HitSoA"})
        with pytest.raises(rntuple.WriteError, match=r"needs the SoA class as its type"):
            f.mkrntuple("B", data, soa=["hits"], types={"hits._0": "HitRecord"})
        with pytest.raises(rntuple.WriteError, match=r"field 'n': a struct-of-arrays field is written from a list"):
            f.mkrntuple("C", data, soa=["n"], types={"n": "NSoA"})
        with pytest.raises(TypeError, match="soa is a list of field paths"):
            f.mkrntuple("D", data, soa="hits", types=SOA_TYPES)
        with pytest.raises(rntuple.WriteError, match="overrides name fields that the schema does not have: 'nope'"):
            f.mkrntuple("E", data[["n"]], soa=["nope"])
        f.abandon()


def test_parallel_writer_and_add_fields_take_soa(tmp_path):
    path = str(tmp_path / "par.root")
    data = soa_data()
    with rntuple.recreate(path) as f:
        with f.mkrntuple_parallel("Events", data, soa=["hits"], types=SOA_TYPES):
            pass
        with f.mkrntuple("Later", {"n": "int32"}) as w:
            w.extend({"n": np.array([7], np.int32)})
            w.add_fields(data[["hits"]], soa=["hits"], types=SOA_TYPES)
            w.extend(data[:1])
    with rntuple.open(path) as f:
        assert f["Events"].arrays().tolist() == filled()
        assert [h.type_name for h in f["Events"].fields] == ["HitSoA", "std::int32_t"]
        later = f["Later"]
        assert later.arrays().tolist() == [{"n": 7, "hits": []}, {"n": 0, "hits": []}]
        assert later.fields[1].type_name == "HitSoA"
