"""Attribute sets (ROOT 6.40's RNTupleAttr*) in Python, with ROOT as the judge.

``tests/data/attributes_root640.root`` was written by ROOT 6.40
(``tests/reference/attributes_root.py write``); ``attributes_root640.json``
is what ROOT reads of it (``attributes_root.py dump``), checked here against
ROOT itself. We must read the same from ROOT's file, and ROOT (and uproot)
must read the same from the file we write with the same content.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pyarrow as pa
import pytest
import rntuple
from conftest import REFERENCE, canon_diff, root_python

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
ROOT_FILE = os.path.join(DATA, "attributes_root640.root")
SCRIPT = os.path.join(REFERENCE, "attributes_root.py")

with open(os.path.join(DATA, "attributes_root640.json"), encoding="utf-8") as _fh:
    EXPECTED = json.load(_fh)


def root_reads(path: str, ntuple: str = "Events") -> dict:
    """What ROOT 6.40 reads of the attribute sets of path:ntuple (attributes_root.py dump)."""
    proc = subprocess.run([root_python(), SCRIPT, "dump", path, ntuple], capture_output=True, text=True)
    assert proc.returncode == 0, f"ROOT failed:\n{proc.stderr[-3000:]}"
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)


def our_reading(events: rntuple.RNTuple) -> dict:
    """The same description from our API."""
    sets = []
    for name in events.attribute_sets:
        s = events.attribute_set(name)
        values = s.arrays().to_list()
        entries = [{"range": [r.start, len(r)], "values": v} for r, v in zip(s.entry_ranges, values, strict=True)]
        sets.append(
            {
                "name": s.name,
                "version": list(s.schema_version),
                "entries": entries,
                "order": s.entries(),
                "containing": {str(e): s.entries_containing(e) for e in range(events.num_entries)},
            }
        )
    return {"sets": sets}


def assert_same(expected: dict, actual: dict) -> None:
    diff = canon_diff(expected, actual)
    assert diff is None, diff


def test_the_expected_values_are_what_root_reads_of_its_file():
    assert_same(EXPECTED, root_reads(ROOT_FILE))


def test_we_read_roots_attribute_sets_as_root_does():
    with rntuple.open(ROOT_FILE) as f:
        assert f.keys() == ["Events;1"]  # the attribute RNTuples are in unlisted keys
        events = f["Events"]
        assert events.attribute_sets == ["runs", "flags"]
        assert_same(EXPECTED, our_reading(events))


def test_an_attribute_set_reads_like_an_rntuple():
    with rntuple.open(ROOT_FILE) as f:
        events = f["Events"]
        runs = events.attribute_set("runs")
        assert isinstance(runs, rntuple.AttributeSet) and isinstance(runs, rntuple.RNTuple)
        assert runs.keys() == ["run", "tag", "weights"]
        assert runs.typenames() == {"run": "std::int32_t", "tag": "std::string", "weights": "std::vector<float>"}
        assert runs.num_entries == len(runs) == 2
        assert runs.entry_ranges == [range(0, 3), range(3, 6)]
        assert runs.arrays("weights", entry_start=1)["weights"].to_list() == [[1.5, 2.5]]
        np.testing.assert_array_equal(runs.arrays(library="np")["run"], np.array([1, 2], dtype=np.int32))
        assert runs.arrays(["tag"], library="pd")["tag"].tolist() == ["first", "second"]
        assert runs.arrays(library="pa").column("run").to_pylist() == [1, 2]
        assert str(runs.arrays(["run"]).type) == "2 * {run: int32}"
        assert runs.attribute_sets == []
        flags = events.attribute_set("flags")
        assert flags.entry_ranges == [range(3, 3), range(0, 4), range(4, 6)]
        assert flags.entries() == [1, 0, 2]
        assert flags.entries_containing(4) == [2]
        assert flags.entries_containing_range(3, 5) == []
        assert flags.entries_in_range(0, 6) == [1, 2]
        assert "'flags' of 'Events'" in repr(flags)
        with pytest.raises(KeyError, match="nope"):
            events.attribute_set("nope")
        with pytest.raises(ValueError):
            flags.entries_containing(-1)


def write_reference_content(path: str) -> None:
    """What attributes_root.py writes, through our Python API (ROOT's order of calls)."""
    with rntuple.recreate(path) as f, f.mkrntuple("Events", {"px": np.float32}) as events:
        runs = events.create_attribute_set("runs", {"run": np.int32, "tag": "string", "weights": "var * float32"})
        flags = events.create_attribute_set("flags", {"flag": np.uint16})
        run1 = runs.begin_range()
        flag_a = flags.begin_range()
        events.extend({"px": np.array([0.0, 0.5, 1.0], dtype=np.float32)})
        assert runs.commit_range(run1, {"run": 1, "tag": "first", "weights": [0.5]}) == range(0, 3)
        run2 = runs.begin_range()
        assert flags.commit_range(flags.begin_range(), {"flag": 7}) == range(3, 3)
        events.extend({"px": np.array([1.5], dtype=np.float32)})
        flags.commit_range(flag_a, {"flag": 9})
        events.extend({"px": np.array([2.0, 2.5], dtype=np.float32)})
        # columnar: several attribute entries at once, ranges given
        flags.extend({"flag": np.array([11], dtype=np.uint16)}, [range(4, 6)])
        runs.commit_range(run2, {"run": 2, "tag": "second", "weights": [1.5, 2.5]})


def test_root_and_uproot_read_the_attribute_sets_we_write(tmp_path):
    path = str(tmp_path / "ours.root")
    write_reference_content(path)
    with rntuple.open(path) as f:
        assert f.keys() == ["Events;1"]
        assert_same(EXPECTED, our_reading(f["Events"]))
    assert_same(EXPECTED, root_reads(path))
    uproot = pytest.importorskip("uproot")
    with uproot.open(path) as f:
        assert f.keys() == ["Events;1"]
        assert f["Events"].arrays()["px"].to_list() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]


def test_extend_with_many_entries_and_casts(tmp_path):
    path = str(tmp_path / "many.root")
    with rntuple.recreate(path) as f, f.mkrntuple("Events", {"x": np.int64}) as events:
        lumi = events.create_attribute_set("lumi", pa.schema([("block", pa.int64()), ("good", pa.bool_())]))
        events.extend({"x": np.arange(10)})
        # int32 data for an int64 field: cast; ranges as tuples
        lumi.extend(
            {"block": np.arange(5, dtype=np.int32), "good": [True, False] * 2 + [True]},
            [(2 * i, 2 * i + 2) for i in range(5)],
        )
    with rntuple.open(path) as f:
        lumi = f["Events"].attribute_set("lumi")
        assert lumi.arrays().to_list() == [{"block": i, "good": i % 2 == 0} for i in range(5)]
        assert lumi.entry_ranges == [range(2 * i, 2 * i + 2) for i in range(5)]
        assert lumi.entries_containing(7) == [3]


def test_refusals_leave_the_writer_usable(tmp_path):
    path = str(tmp_path / "refusals.root")
    with rntuple.recreate(path) as f, f.mkrntuple("Events", {"x": np.int64}) as events:
        for bad in ["", "__x", "a.b", "a/b"]:
            with pytest.raises(rntuple.WriteError):
                events.create_attribute_set(bad, {"v": np.int32})
        tags = events.create_attribute_set("tags", {"v": np.int32})
        with pytest.raises(rntuple.WriteError, match="already"):
            events.create_attribute_set("tags", {"v": np.int32})
        events.extend({"x": np.arange(3)})
        with pytest.raises(ValueError, match="range start"):
            tags.commit_range(4, {"v": 1})
        with pytest.raises(rntuple.WriteError, match="missing"):
            tags.commit_range(0, {"w": 1})
        with pytest.raises(rntuple.WriteError, match="past the 3 entries"):
            tags.extend({"v": np.array([1], dtype=np.int32)}, [range(2, 5)])
        with pytest.raises(ValueError, match="1 ranges for 2"):
            tags.extend({"v": np.array([1, 2], dtype=np.int32)}, [range(0, 1)])
        assert events.state == "open"
        tags.commit_range(1, {"v": 42})
    with rntuple.open(path) as f:
        tags = f["Events"].attribute_set("tags")
        assert tags.arrays().to_list() == [{"v": 42}]
        assert tags.entry_ranges == [range(1, 3)]
