"""Struct-of-arrays fields (field flag 0x08, ROOT 6.40's experimental
``ROOT::Experimental::RSoAField``) read as the collection of records they are
on disk.

``tests/data/soa_root640.root`` was written by ROOT 6.40 with
``tests/reference/soa_root.py``: entry ``e`` holds ``e % 4`` hits with
``x = e + 0.25 k``, ``y = -e - 0.5 k``, ``id = 100 e + k`` (the values the
script fills, not what a reader returned). ROOT 6.40 cannot read an SoA
field back (write-only there), so uproot is the second reader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import awkward as ak
import pytest
import rntuple

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
