"""Streamer fields below the top level read as values, equal to ROOT's reader.

``tests/data/streamer_nested_root640.root`` and its ``.json`` (ROOT 6.40's ``RNTupleReader``
reading of it) are made by ``tests/reference/streamer_nested_root.py``: the class ``Inner26``
(base ``InnerBase26``) is streamed as the member ``outer.in`` and the item ``outer.ins._0`` of a
split class, and as the item ``inners._0`` of a top-level ``std::vector<Inner26>``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from typing import Any

import pyarrow as pa
import pytest
import rntuple

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(TESTS, "data")
FILE = os.path.join(DATA, "streamer_nested_root640.root")
INNER = "{a: float32, v: var * int32, s: string, tag: int32}"


def expected(folder: str = DATA) -> list[dict]:
    with open(os.path.join(folder, "streamer_nested_root640.json"), encoding="utf-8") as fh:
        return json.load(fh)["Events"]


def flattened(v: Any) -> Any:
    """ROOT's JSON with base classes (``:_0``) merged into their records, as awkward records have them."""
    if isinstance(v, list):
        return [flattened(x) for x in v]
    if isinstance(v, dict):
        out = {k: flattened(x) for k, x in v.items() if k != ":_0"}
        if ":_0" in v:
            out.update(flattened(v[":_0"]))
        return out
    return v


def test_nested_values_equal_roots_reader_in_arrow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = rntuple.open(FILE)["Events"].arrays(library="pa")
    inner = table.schema.field("outer").type.field("in").type
    assert pa.types.is_struct(inner)
    assert [inner.field(i).name for i in range(inner.num_fields)] == [":_0", "a", "v", "s"]
    assert table.to_pylist() == expected()


def test_nested_values_equal_roots_reader_in_awkward():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rntuple.open(FILE)["Events"].arrays()
    assert str(got.type) == f"5 * {{outer: {{n: int32, in: {INNER}, ins: var * {INNER}}}, inners: var * {INNER}}}"
    assert got.tolist() == flattened(expected())
    # A subfield path reads the streamer field below it alone.
    part = rntuple.open(FILE)["Events"].arrays(["outer.ins"])
    assert part.outer.ins.tolist() == [flattened(e["outer"]["ins"]) for e in expected()]


def altered(tmp_path, old: bytes, new: bytes) -> str:
    data = open(FILE, "rb").read()
    assert len(old) == len(new) and old in data
    path = tmp_path / "altered.root"
    path.write_bytes(data.replace(old, new, 1))
    return str(path)


def test_a_class_missing_from_the_streamer_info_stays_bytes_with_a_warning(tmp_path):
    # Field outer.in's class renamed in the (uncompressed) header: no streamer info has it.
    path = altered(tmp_path, b"in\x07\x00\x00\x00Inner26", b"in\x07\x00\x00\x00Inner2X")
    nt = rntuple.open(path, verify_checksums=False)["Events"]
    why = r"streamer field 'outer.in' of class Inner2X: kept as bytes \(class Inner2X is missing from the streamer info"
    with pytest.warns(UserWarning, match=why) as caught:
        table = nt.arrays(library="pa")
    assert len(caught) == 1
    assert table.schema.field("outer").type.field("in").type == pa.large_binary()
    rows = table.to_pylist()
    assert [r["outer"]["ins"] for r in rows] == [e["outer"]["ins"] for e in expected()]  # still decoded
    with pytest.warns(UserWarning, match=why):
        got = nt.arrays()
    assert str(got.type).startswith("5 * {outer: {n: int32, in: bytes, ins: var * {a: float32")


def test_bytes_that_disagree_with_the_streamer_info_stay_bytes_with_a_warning(tmp_path):
    # A string length one short inside an item of `inners`: its class's byte count no longer fits.
    path = altered(tmp_path, b"\x05inner", b"\x04inner")
    nt = rntuple.open(path, verify_checksums=False)["Events"]
    with pytest.warns(UserWarning, match=r"streamer field 'inners._0' of class Inner26: kept as bytes \(.*byte count"):
        table = nt.arrays(library="pa")
    assert table.schema.field("inners").type.value_type == pa.large_binary()
    assert [r["outer"] for r in table.to_pylist()] == [e["outer"] for e in expected()]


def test_nested_values_equal_roots_reader_fresh(tmp_path):
    script = os.path.join(TESTS, "reference", "streamer_nested_root.py")
    root_python = os.environ.get("RNTUPLE_ROOT_PYTHON", sys.executable)
    subprocess.run([root_python, script, str(tmp_path)], check=True, capture_output=True)
    ours = rntuple.open(str(tmp_path / "streamer_nested_root640.root"))["Events"].arrays(library="pa").to_pylist()
    assert ours == expected(str(tmp_path))
