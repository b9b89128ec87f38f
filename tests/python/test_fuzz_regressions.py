"""Findings of the atheris fuzz target of the Python write inputs (``fuzz/python/``, issue 16).

Every input in ``fuzz/python/regressions/`` once made ``fuzz/python/fuzz_write_inputs.py``
report a bug; it is replayed through the same check. Each finding also has a plain test
with the input written out, which does not depend on how the harness decodes bytes.
"""

from __future__ import annotations

import pathlib
import sys

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import rntuple

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGRESSIONS = sorted((ROOT / "fuzz" / "python" / "regressions").iterdir())

pytest.importorskip("atheris")


@pytest.fixture(scope="module")
def harness():
    sys.path.insert(0, str(ROOT / "fuzz" / "python"))
    try:
        import fuzz_write_inputs
    finally:
        sys.path.pop(0)
    return fuzz_write_inputs


def test_every_regression_is_listed():
    """The folder holds inputs only (a README would be replayed as an input)."""
    assert REGRESSIONS, "fuzz/python/regressions is empty"
    assert all(p.is_file() and p.stat().st_size > 0 for p in REGRESSIONS)


@pytest.mark.parametrize("path", REGRESSIONS, ids=[p.name for p in REGRESSIONS])
def test_fuzz_regression(harness, path):
    harness.check(path.read_bytes())


def _write_read(tmp_path, data):
    path = tmp_path / "out.root"
    with rntuple.recreate(path) as f:
        f["Events"] = data
    with rntuple.open(path) as f:
        return f["Events"].num_entries, f["Events"].arrays()


def test_dataframe_without_columns_keeps_its_entries(tmp_path):
    """pandas_index_without_columns: a DataFrame with 5 rows and no columns was written with 0 entries."""
    entries, array = _write_read(tmp_path, pd.DataFrame(index=pd.RangeIndex(5, 15, 2)))
    assert entries == 5
    assert len(array) == 5
    assert array.fields == []


def test_list_view_next_to_other_kinds_is_a_write_error(tmp_path):
    """list_view_in_dict: a pyarrow list_view column in a dict with numpy columns raised awkward's
    AssertionError; it is a WriteError naming the column and the type."""
    view = pa.ListViewArray.from_arrays(
        pa.array([0, 1], pa.int32()), pa.array([1, 1], pa.int32()), pa.array([1.0, 2.0])
    )
    with pytest.raises(rntuple.WriteError, match=r"column 'v'.*list_view"):
        _write_read(tmp_path, {"n": np.arange(2), "v": view})


def test_dict_column_of_mixed_depths(tmp_path):
    """dict_union_column_zipped_to_record: ak.zip made a single ak.Record of a dict whose column is a
    union of lists and numbers, and ``.ndim`` raised AttributeError; now the columns are the fields
    and the untyped union is refused as such."""
    data = {"u": [[[None], -5, ("x", None)], None, None]}
    with pytest.raises(rntuple.WriteError, match="field 'u' has no type"):
        _write_read(tmp_path, data)
    entries, array = _write_read(tmp_path, {"u": [[1, [2]], None, [3]], "n": [1, 2, 3]})
    assert entries == 3
    assert array.tolist() == [{"u": [1, [2]], "n": 1}, {"u": None, "n": 2}, {"u": [3], "n": 3}]


@pytest.mark.parametrize(
    "data",
    [
        ak.Array({"x": [None, None, [1.0]]})[:2],
        ak.Array({"x": ak.Array([[1.0, 2.0, 3.0], None, [4.0]])[1:2]}),
    ],
    ids=["slice-of-missing", "middle-missing"],
)
def test_all_missing_option_of_lists(tmp_path, data):
    """awkward_all_missing_option_list: an option of lists whose entries are all missing (a slice of
    events) raised IndexError in awkward's Arrow conversion after packing; it is written."""
    entries, array = _write_read(tmp_path, data)
    assert entries == len(data)
    assert array.x.tolist() == [None] * len(data)


def test_absurd_compression_threads_are_refused(tmp_path):
    """compression_threads_2_pow_31: the writer reserved a handle per thread up front (a 51 GB
    allocation, abort); the count is refused with a WriteError naming the option."""
    with rntuple.recreate(tmp_path / "out.root") as f:
        with pytest.raises(rntuple.WriteError, match=r"compression_threads \(2147483648\) must not exceed 1024"):
            f.mkrntuple("Events", {"x": np.arange(3)}, compression_threads=2**31)
        f.mkrntuple("Events", {"x": np.arange(3)}, compression_threads=4).close()
    with rntuple.open(tmp_path / "out.root") as f:
        assert f["Events"].arrays().x.tolist() == [0, 1, 2]


def _union_with_a_null():
    """A dense union double | bool whose third entry is a null double: written as a valueless
    std::variant (switch tag 0)."""
    return pa.UnionArray.from_dense(
        pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()), [pa.array([1.5, None]), pa.array([True])]
    )


@pytest.mark.parametrize("where", ["top", "list", "struct"])
def test_valueless_variants_read_back_inside_collections(tmp_path, where):
    """valueless_variant_in_list: a file with a std::vector<std::variant<double,bool>> holding a
    valueless variant (what the writer makes of a null union value; ROOT can write it too) failed to
    read: "Non-nullable field of LargeListArray cannot contain nulls"; likewise inside a record."""
    u = _union_with_a_null()
    column = {
        "top": u,
        "list": pa.LargeListArray.from_arrays(pa.array([0, 3]), u),
        "struct": pa.StructArray.from_arrays([u], ["v"]),
    }[where]
    entries, array = _write_read(tmp_path, pa.table({"x": column}))
    want = {
        "top": [1.5, True, None],
        "list": [[1.5, True, None]],
        "struct": [{"v": 1.5}, {"v": True}, {"v": None}],
    }[where]
    assert entries == len(want)
    assert array.x.tolist() == want


def test_sliced_nested_structs_are_written(tmp_path):
    """sliced_nested_struct_panic: a slice of a table with a struct-of-struct column panicked in the
    Arrow C data import of the Rust side (pyo3_runtime.PanicException: end <= self.len())."""
    inner = pa.StructArray.from_arrays([pa.array([1, 2, 3, 4], pa.int32())], ["v"])
    table = pa.table({"s": pa.StructArray.from_arrays([inner], ["r"])}).slice(1, 2)
    entries, array = _write_read(tmp_path, table)
    assert entries == 2
    assert array.s.tolist() == [{"r": {"v": 2}}, {"r": {"v": 3}}]
    listed = pa.table({"l": pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), table.column("s").chunk(0))})
    entries, array = _write_read(tmp_path, listed)
    assert array.l.tolist() == [[{"r": {"v": 2}}, {"r": {"v": 3}}]]


def test_a_refused_table_writes_none_of_its_chunks(tmp_path):
    """refused_table_wrote_its_first_chunks: ``extend`` wrote a table chunk by chunk, so a table whose
    third chunk held a null in a non-optional field was refused after writing its earlier chunks."""
    column = pa.chunked_array([[], [-3], [None, -2], [3, 1]], pa.int16())
    with rntuple.recreate(tmp_path / "out.root") as f:
        w = f.mkrntuple("Events", pa.table({"x": pa.array([7], pa.int16())}))
        with pytest.raises(rntuple.WriteError, match="holds null values"):
            w.extend(pa.table({"x": column}))
        assert w.num_entries == 1
        w.extend(pa.table({"x": pa.chunked_array([[8], [9]], pa.int16())}))
    with rntuple.open(tmp_path / "out.root") as f:
        assert f["Events"].arrays().x.tolist() == [7, 8, 9]


@pytest.mark.parametrize("column", [[2**70, 1], np.array([2**70, 1], dtype=object)], ids=["list", "object"])
def test_ints_beyond_64_bits_are_a_write_error(tmp_path, column):
    """int_beyond_64_bits_in_list: a column with an int of 2**70 raised awkward's RuntimeError (a
    pybind11 cast error); it is a WriteError naming the column."""
    with pytest.raises(rntuple.WriteError, match=r"column 'big': awkward cannot build an array"):
        _write_read(tmp_path, {"big": column})
