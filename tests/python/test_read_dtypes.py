"""The dtypes reads give: decoded in Rust in the types uproot's forms use (no narrowing in Python),
a ``double`` stored as Real32Quant as ROOT reads it, and class versions / checksums written from
Python as ROOT 6.40 reads them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import awkward as ak
import numpy as np
import pyarrow as pa
import pytest
import rntuple
from conftest import root_python
from rntuple import _lib

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"

QUANT_FILE = DATA / "double_real32quant_rntuple_v1-0-2-0.root"

# ROOT reads the double fields x (32 bits in [-10, 25]) and y (20 bits in [-1, 1]) dequantised in
# double precision (tests/reference/make_quant_double.py wrote the file and prints the same values).
_ROOT_QUANT = """
import json, os, sys
import ROOT
reader = ROOT.RNTupleReader.Open("quant", sys.argv[1])
views = [reader.GetView["double"](name) for name in ("x", "y")]
print(json.dumps([[v(i) for i in range(reader.GetNEntries())] for v in views]), flush=True)
os._exit(0)  # PyROOT crashes tearing down views that outlive their reader
"""


def _run_root(script: str, *args: str) -> object:
    proc = subprocess.run([root_python(), "-c", script, *args], capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and "No module named 'ROOT'" in proc.stderr:
        pytest.skip("ROOT is not installed")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def root_quant() -> dict[str, list[float]]:
    x, y = _run_root(_ROOT_QUANT, str(QUANT_FILE))  # type: ignore[misc]
    return {"x": x, "y": y}


def _quant() -> rntuple.RNTuple:
    return rntuple.open(QUANT_FILE)["quant"]


def test_double_real32quant_reads_as_root_through_numpy(root_quant: dict[str, list[float]]) -> None:
    arrays = _quant().arrays(library="np")
    assert arrays["x"].dtype == np.float64
    assert arrays["x"][0] != 2.0  # ROOT's value of 2.0 quantised with 32 bits is 1.9999999965075403
    assert arrays["x"].tolist() == root_quant["x"]
    assert arrays["y"].tolist() == root_quant["y"]


def test_double_real32quant_reads_as_root_through_awkward(root_quant: dict[str, list[float]]) -> None:
    array = _quant().arrays()
    assert str(array.type.content) == "{x: float64, y: float64}"
    assert ak.to_list(array.x) == root_quant["x"]
    assert ak.to_list(array.y) == root_quant["y"]


@pytest.fixture(scope="module")
def index32_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dtypes") / "index32.root"
    data = {
        "flag": np.array([True, False, True]),
        "v": ak.Array([[1.5], [], [2.5, 3.5]]),
        "c": np.array([-1, 1, 65], np.int8),
    }
    with rntuple.recreate(path, index32=True) as f:
        f.mkrntuple("t", data, types={"c": "char"})
    return path


def test_the_reader_gives_uproots_dtypes(index32_file: Path) -> None:
    """The binding's ``uproot_dtypes`` read: booleans one byte each, 32-bit offsets for Index32
    columns, ``char`` in its column's type (uint8); the default read keeps the C++ types."""
    inner = _lib.File(str(index32_file)).rntuple("t")
    shaped = pa.record_batch(inner.read(None, 0, None, None, True)[0])
    assert shaped.schema.field("flag").type == pa.uint8()
    assert shaped.schema.field("v").type == pa.list_(pa.field("_0", pa.float64(), nullable=False))
    assert shaped.schema.field("c").type == pa.uint8()
    assert shaped.column("c").to_pylist() == [255, 1, 65]
    plain = pa.record_batch(inner.read(None, 0, None, None)[0])
    assert plain.schema.field("flag").type == pa.bool_()
    assert pa.types.is_large_list(plain.schema.field("v").type)
    assert plain.schema.field("c").type == pa.int8()


def test_awkward_wraps_the_readers_buffers(index32_file: Path) -> None:
    array = rntuple.open(index32_file)["t"].arrays()
    assert array.layout.content("flag").data.dtype == np.bool_
    assert array.layout.content("v").offsets.dtype == np.int32
    assert array.layout.content("c").data.dtype == np.uint8
    assert ak.to_list(array.flag) == [True, False, True]
    assert ak.to_list(array.v) == [[1.5], [], [2.5, 3.5]]
    # library="pa" keeps the Arrow types of the C++ types.
    table = rntuple.open(index32_file)["t"].arrays(library="pa")
    assert table.schema.field("flag").type == pa.bool_()


_ROOT_TYPE_VERSION = """
import json, os, sys
import ROOT
reader = ROOT.RNTupleReader.Open(sys.argv[2], sys.argv[1])
desc = reader.GetDescriptor()
f = desc.GetFieldDescriptor(desc.FindFieldId("k"))
checksum = f.GetTypeChecksum()  # std::optional<std::uint32_t>
checksum = checksum.value() if checksum.has_value() else None
print(json.dumps([str(f.GetTypeName()), f.GetTypeVersion(), checksum]), flush=True)
os._exit(0)
"""


def test_type_version_and_checksum_reach_root(tmp_path: Path) -> None:
    path = tmp_path / "klass.root"
    data = ak.Array([{"k": {"a": 1, "b": 2.5}}, {"k": {"a": 2, "b": 3.5}}])
    types = {"k": {"type": "Klass", "type_version": 3, "type_checksum": 840875}}
    with rntuple.recreate(path) as f:
        f.mkrntuple("nt", data, types=types)
    ours = rntuple.open(path)["nt"]["k"]
    assert (ours.type_name, ours.type_version, ours.type_checksum) == ("Klass", 3, 840875)
    info = _lib.File(str(path)).rntuple("nt").fields()[0]
    assert isinstance(info, _lib.FieldInfo)
    assert (info.type_version, info.type_checksum, info.kind) == (3, 840875, "record")
    assert [c.name for c in info.children] == ["a", "b"]
    assert [[c.column_type for c in rep] for rep in info.children[1].columns] == [["SplitReal64"]]
    assert _run_root(_ROOT_TYPE_VERSION, str(path), "nt") == ["Klass", 3, 840875]


def test_types_reject_unknown_keys(tmp_path: Path) -> None:
    data = {"x": np.arange(3)}
    with rntuple.recreate(tmp_path / "bad.root") as f, pytest.raises(TypeError, match="type_version"):
        f.mkrntuple("nt", data, types={"x": {"type": "std::int64_t", "version": 3}})
