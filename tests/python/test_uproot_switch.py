"""Issue 11: what a user switching from uproot does, with uproot's behaviour next to ours.

Writing: ``mkrntuple(name, data)`` writes ``data``; files left open are completed at exit and
when collected; ``compression="zstd:9"``; pandas indexes, DataFrames read with ``library="pd"``,
float16 (Real16, read by ROOT) and datetime64 columns. (Reading: ``test_uproot_switch_read.py``.)
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import rntuple
import uproot
from conftest import DATA, root_python

MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")


def _entries(path, name="T"):
    return rntuple.open(path)[name].num_entries


# ---------------------------------------------------------------------------
# mkrntuple(name, data) writes data
# ---------------------------------------------------------------------------


def test_mkrntuple_with_data_writes_it_as_uproot_does(tmp_path):
    data = {"x": np.arange(5, dtype=np.int32), "v": ak.Array([[1.0], [], [2.0, 3.0], [], [4.0]])}
    theirs, ours = tmp_path / "uproot.root", tmp_path / "ours.root"
    with uproot.recreate(theirs) as f:
        f.mkrntuple("T", data).extend(data)
    with rntuple.recreate(ours) as f:
        f.mkrntuple("T", data).extend(data)
    assert uproot.open(theirs)["T"].num_entries == 10  # uproot writes the data given to mkrntuple
    assert _entries(ours) == 10
    assert rntuple.open(ours)["T"].arrays().x.tolist() == [0, 1, 2, 3, 4] * 2
    assert rntuple.open(ours)["T"].arrays().tolist() == uproot.open(theirs)["T"].arrays().tolist()


def test_a_dict_of_types_or_a_schema_stays_schema_only(tmp_path):
    types = {"x": np.int32, "v": "var * float64"}
    theirs, ours = tmp_path / "uproot.root", tmp_path / "ours.root"
    with uproot.recreate(theirs) as f:
        f.mkrntuple("T", types).extend({"x": np.arange(2, dtype=np.int32), "v": ak.Array([[1.0], []])})
    with rntuple.recreate(ours) as f:
        f.mkrntuple("T", types).extend({"x": np.arange(2, dtype=np.int32), "v": ak.Array([[1.0], []])})
        f.mkrntuple("S", rntuple.schema_of({"x": np.arange(7)})).extend({"x": np.arange(3)})
    assert uproot.open(theirs)["T"].num_entries == 2
    assert _entries(ours) == 2
    assert _entries(ours, "S") == 3
    doc = " ".join(rntuple.WritableFile.mkrntuple.__doc__.split())
    assert "a dict of types" in doc and "which write nothing" in doc
    assert "written as the first entries, as uproot's ``mkrntuple`` does" in doc


def test_setitem_writes_once(tmp_path):
    with rntuple.recreate(tmp_path / "s.root") as f:
        f["T"] = {"x": np.arange(4)}
    assert _entries(tmp_path / "s.root") == 4


# ---------------------------------------------------------------------------
# files left open
# ---------------------------------------------------------------------------

_LEFT_OPEN = """
import sys
import numpy as np
import {module}
f = {module}.recreate(sys.argv[1])
f[{name!r}] = {{"x": np.arange(10)}}
# no close, no with: the interpreter exits normally
"""


@pytest.mark.parametrize("module", ["uproot", "rntuple"])
def test_file_left_open_at_exit_is_complete(tmp_path, module):
    path = tmp_path / f"{module}.root"
    script = _LEFT_OPEN.format(module=module, name="T")
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert uproot.open(path)["T"].arrays().x.tolist() == list(range(10))
    assert rntuple.open(path)["T"].arrays().x.tolist() == list(range(10))


def test_file_collected_is_complete(tmp_path):
    path = tmp_path / "c.root"
    f = rntuple.recreate(path)
    w = f.mkrntuple("T", {"x": np.int64})
    w.extend({"x": np.arange(3)})
    del f, w
    gc.collect()
    assert rntuple.open(path)["T"].arrays().x.tolist() == [0, 1, 2]
    assert uproot.open(path)["T"].num_entries == 3


def test_exception_inside_with_still_abandons(tmp_path):
    path = tmp_path / "x.root"
    with pytest.raises(RuntimeError), rntuple.recreate(path) as f:
        f["T"] = {"x": np.arange(3)}
        raise RuntimeError("boom")
    del f
    gc.collect()
    with pytest.raises(rntuple.FormatError, match="not completed"):
        rntuple.open(path)


# ---------------------------------------------------------------------------
# compression names: one parser
# ---------------------------------------------------------------------------


def test_compression_names_as_the_command_line(tmp_path):
    path = tmp_path / "z.root"
    with rntuple.recreate(path, compression="zstd:9") as f:
        f["T"] = {"x": np.arange(100)}
        f.mkrntuple("L", {"x": np.arange(5)}, compression="lz4:4")
    assert rntuple.compression_setting("zstd:7") == 507  # what `rntuple merge -c zstd:7` takes
    with uproot.open(path) as u:  # uproot reads the settings of the pages: zstd (5) level 9
        for name, setting in [("T", 509), ("L", 404)]:
            assert {c.compression_settings for cl in u[name].page_link_list for c in cl} == {setting}, name
    assert rntuple.open(path)["T"].arrays().x.tolist() == list(range(100))
    assert rntuple.open(path)["L"].arrays().x.tolist() == list(range(5))


# ---------------------------------------------------------------------------
# pandas
# ---------------------------------------------------------------------------


def test_pandas_index_is_written_as_pyarrow_writes_it(tmp_path):
    frames = {
        "named": pd.DataFrame({"a": [1.5, 2.5]}, index=pd.Index([7, 9], name="event")),
        "unnamed": pd.DataFrame({"a": [1.5, 2.5]}, index=pd.Index([7, 9])),
        "range": pd.DataFrame({"a": [1.5, 2.5]}, index=pd.RangeIndex(10, 12)),
        "multi": pd.DataFrame({"a": [1.5, 2.5]}, index=pd.MultiIndex.from_tuples([(1, 2), (3, 4)], names=["r", "l"])),
    }
    path = tmp_path / "pd.root"
    with rntuple.recreate(path) as f:
        for name, frame in frames.items():
            f[name] = frame
    r = rntuple.open(path)
    for name, frame in frames.items():
        assert r[name].keys() == pa.Table.from_pandas(frame).schema.names, name  # pyarrow's columns
    assert r["named"].arrays().event.tolist() == [7, 9]
    assert r["unnamed"].arrays()["__index_level_0__"].tolist() == [7, 9]
    assert r["multi"].arrays(library="pd")[["r", "l"]].values.tolist() == [[1, 2], [3, 4]]


def test_dataframe_read_with_library_pd_writes_back(tmp_path):
    source = rntuple.open(MUONS)["Events"]
    frame = source.arrays(library="pd")
    assert frame["Muon_pt"].dtype == object  # jagged columns hold one numpy array per entry
    path = tmp_path / "back.root"
    with rntuple.recreate(path) as f:
        f["Events"] = frame
    back = rntuple.open(path)["Events"].arrays()
    original = source.arrays()
    for name in ("nMuon", "Muon_pt", "Muon_charge"):
        assert back[name].tolist() == original[name].tolist(), name
    assert back["_collection0"].Muon_eta.tolist() == original["_collection0"].Muon_eta.tolist()
    assert uproot.open(path)["Events"]["Muon_pt"].array().tolist() == original["Muon_pt"].tolist()


# ---------------------------------------------------------------------------
# float16 and datetime64
# ---------------------------------------------------------------------------

_ROOT_READS = """
import json, os, sys
import ROOT
reader = ROOT.RNTupleReader.Open("T", sys.argv[1])
view = reader.GetView["float"]("h")
desc = reader.GetDescriptor()
column = desc.GetColumnDescriptor(desc.FindPhysicalColumnId(desc.FindFieldId("h"), 0, 0))
print(json.dumps({"values": [view(i) for i in range(reader.GetNEntries())],
                  "column": str(ROOT.ROOT.Internal.RColumnElementBase.GetColumnTypeName(column.GetType()))}))
sys.stdout.flush()
os._exit(0)
"""


def test_float16_is_a_float_field_with_a_real16_column_that_root_reads(tmp_path):
    values = np.array([0.5, -1.25, 65504.0, 1e-3, np.nan], dtype=np.float16)
    path = tmp_path / "half.root"
    with rntuple.recreate(path) as f:
        f["T"] = {"h": values}
    r = rntuple.open(path)["T"]
    assert r["h"].type_name == "float"
    assert [c.type for c in r.columns] == ["Real16"]  # spec "Column Types": 0x0F, IEEE half
    got = r.arrays().h.to_numpy()
    theirs = uproot.open(path)["T"]["h"].array().to_numpy()
    assert got.dtype == theirs.dtype == np.float16  # uproot's form: the column's type
    np.testing.assert_array_equal(got, values)
    np.testing.assert_array_equal(theirs, values)
    assert r.arrays(library="pa").schema.field("h").type == pa.float32()  # the C++ type, float
    proc = subprocess.run([root_python(), "-c", _ROOT_READS, str(path)], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "No module named 'ROOT'" in proc.stderr:
        pytest.skip("ROOT is not installed")
    assert proc.returncode == 0, proc.stderr[-2000:]
    root = json.loads(proc.stdout.strip().splitlines()[-1])
    assert root["column"] == "Real16"
    np.testing.assert_array_equal(np.array(root["values"], np.float32), values.astype(np.float32))


def test_datetime64_is_an_int64_with_its_unit_recorded(tmp_path):
    stamps = np.array(["2024-01-01T00:00:00", "2024-06-30T12:34:56.789", "1969-12-31T23:59:59"], "datetime64[ms]")
    path = tmp_path / "dt.root"
    with rntuple.recreate(path) as f:
        f["T"] = {"t": stamps, "x": np.arange(3)}
        f["P"] = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2021-01-01"])})
    r = rntuple.open(path)["T"]
    assert r["t"].type_name == "std::int64_t"
    assert r["t"].description.startswith("datetime64[ms]")
    # uproot (and ROOT) see the integers: milliseconds since 1970
    assert uproot.open(path)["T"]["t"].array().tolist() == stamps.astype(np.int64).tolist()
    assert r.arrays(library="np")["t"].dtype == np.dtype("datetime64[ms]")
    np.testing.assert_array_equal(r.arrays(library="np")["t"], stamps)
    assert r.arrays(library="pa").schema.field("t").type == pa.timestamp("ms")
    frame = rntuple.open(path)["P"].arrays(library="pd")
    assert frame["t"].tolist() == list(pd.to_datetime(["2020-01-01", "2021-01-01"]))


def test_documented_write_behaviour_is_in_the_docstrings():
    doc = " ".join(rntuple.WritableFile.mkrntuple.__doc__.split())
    for words in ("RangeIndex", "float16", "Real16", "datetime64", "description"):
        assert words in doc, words
