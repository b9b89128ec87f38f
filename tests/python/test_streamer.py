"""Streamer fields (``ROOT::RStreamerField``) read as values, equal to ROOT's reader.

``tests/data/streamer_root640.root`` and ``streamer_root640.json`` (ROOT 6.40's
``RNTupleReader`` reading of it) are made by ``tests/reference/streamer_root.py``;
``test_values_equal_roots_reader_fresh`` reruns that script (ROOT writes and
reads a new file) and compares with ours.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import pyarrow as pa
import pytest
import rntuple

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(TESTS, "data")
FILE = os.path.join(DATA, "streamer_root640.root")
HIT = "{x: float32, y: float32, id: int32, samples: var * float32, label: string}"


def expected(folder: str = DATA) -> list[dict]:
    with open(os.path.join(folder, "streamer_root640.json"), encoding="utf-8") as fh:
        return json.load(fh)["Events"]


def test_values_equal_roots_reader():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = rntuple.open(FILE)["Events"].arrays(library="pa")
    # Arrow keeps a base class as the member ":_0", as ROOT's JSON does.
    assert pa.types.is_struct(table.schema.field("hit").type)
    assert table.to_pylist() == expected()


def test_forms_and_values_are_those_of_split_fields():
    # "Split" holds the same classes and values as ordinary (split) fields, written by ROOT.
    f = rntuple.open(FILE)
    streamed, split = f["Events"].arrays(), f["Split"].arrays()
    assert streamed.type == split.type
    assert streamed.tolist() == split.tolist()
    der = "{h: " + HIT + ", more: var * " + HIT + ", big: int64, w: float64, c: 3 * int16}"
    tob = "{n: int32, v: var * float64, fUniqueID: uint32, fBits: uint32}"  # TObject as split fields have it
    assert str(streamed.type) == f"4 * {{hit: {HIT}, hits: var * {HIT}, der: {der}, tob: {tob}}}"
    streamed_pa, split_pa = f["Events"].arrays(library="pa"), f["Split"].arrays(library="pa")
    for name in ("hit", "hits", "der", "tob"):
        assert streamed_pa.schema.field(name).type == split_pa.schema.field(name).type, name
    assert streamed_pa.to_pylist() == split_pa.to_pylist()


def test_maps_sets_and_tstrings_equal_roots_reader():
    # Gap26: map<int,float>, set<int>, map<string,Hit>, set<string>, TString, vector<string>
    # (tests/reference/streamer_root.py); maps read as lists of {_0, _1}, as split maps do.
    path = os.path.join(DATA, "streamer_gaps_root640.root")
    with open(os.path.join(DATA, "streamer_gaps_root640.json"), encoding="utf-8") as fh:
        want = json.load(fh)["Events"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nt = rntuple.open(path)["Events"]
        assert nt.arrays(library="pa").to_pylist() == want
        got = nt.arrays()
    m, mh = "m: var * {_0: int32, _1: float32}", "mh: var * {_0: string"
    assert str(got.type).startswith(f"4 * {{gap: {{{m}, s: var * int32, {mh}")
    assert got.gap.t.tolist() == ["t0", "t1", "t2", "T" * 300]


def test_undecodable_fields_stay_bytes_with_a_warning(tmp_path):
    # Our writer's streamer field, uncompressed and without page checksums; then the length of a
    # string inside entry 0 is made one short, so that the object's byte count no longer fits.
    # (Nested fields, and a class missing from the streamer info: test_streamer_nested.py.)
    path = str(tmp_path / "bad.root")
    hit = pa.struct([("id", pa.int32()), ("label", pa.string())])
    values = pa.Table.from_pylist(
        [{"hit": {"id": i, "label": f"MARK{i}"}} for i in range(3)], schema=pa.schema([("hit", hit, False)])
    )
    with rntuple.recreate(path) as f:
        f.mkrntuple("Events", values, types={"hit": "THit"}, streamer=["hit"], compression=0, page_checksums=False)
    data = open(path, "rb").read()
    assert data.count(b"\x05MARK0") == 1
    with open(path, "wb") as fh:
        fh.write(data.replace(b"\x05MARK0", b"\x04MARK0"))
    nt = rntuple.open(path)["Events"]
    why = r"streamer field 'hit' of class THit: kept as bytes \(object 0 of the read: .*byte count"
    with pytest.warns(UserWarning, match=why):
        table = nt.arrays(library="pa")
    assert pa.types.is_large_binary(table.schema.field("hit").type)
    with pytest.warns(UserWarning, match=why):
        assert str(nt.arrays().type) == "3 * {hit: bytes}"


def test_values_equal_roots_reader_fresh(tmp_path):
    script = os.path.join(TESTS, "reference", "streamer_root.py")
    root_python = os.environ.get("RNTUPLE_ROOT_PYTHON", sys.executable)
    subprocess.run([root_python, script, str(tmp_path)], check=True, capture_output=True)
    ours = rntuple.open(str(tmp_path / "streamer_root640.root"))["Events"].arrays(library="pa").to_pylist()
    assert ours == expected(str(tmp_path))
    gaps = rntuple.open(str(tmp_path / "streamer_gaps_root640.root"))["Events"].arrays(library="pa").to_pylist()
    with open(tmp_path / "streamer_gaps_root640.json", encoding="utf-8") as fh:
        assert gaps == json.load(fh)["Events"]


def test_many_objects_decode_across_chunks(tmp_path):
    # More objects than the reader decodes at once (rntuple::streamer::decode_entries, 4096 per
    # chunk), at the top level and as vector items: the chunks join in order.
    path = str(tmp_path / "many.root")
    hit = pa.struct([("id", pa.int32()), ("label", pa.string())])
    rows = [
        {"hit": {"id": i, "label": "x" * (i % 3)}, "hits": [{"id": -i, "label": ""}] * (i % 3)} for i in range(9000)
    ]
    schema = pa.schema([("hit", hit, False), ("hits", pa.list_(hit), False)])
    with rntuple.recreate(path) as f:
        f.mkrntuple(
            "Events",
            pa.Table.from_pylist(rows, schema=schema),
            types={"hit": "CHit", "hits": "std::vector<CHit>"},
            streamer=["hit", "hits"],
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rntuple.open(path)["Events"].arrays(library="pa").to_pylist() == rows
