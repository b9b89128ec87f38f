"""Streamer fields written (``mkrntuple(..., streamer=[...])``) and read back by ROOT 6.40
through a compiled dictionary of the classes (``tests/reference/streamer_write_root.py``), by
this package, and compared byte for byte with what ROOT writes for the same values.

Classes (``tests/reference/streamer/streamer_write_classes.hxx``): ``WHit { float x, y; int id;
std::vector<float> samples; std::string label; }``, ``WBase { double w; std::vector<int> tags; }``,
``WDerived : WBase { WHit h; std::vector<WHit> more; long long big; std::string name; bool ok; }``.
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
from rntuple._errors import RNTupleError

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(TESTS, "reference")

HIT_TYPE = pa.struct(
    [
        ("x", pa.float32()),
        ("y", pa.float32()),
        ("id", pa.int32()),
        ("samples", pa.list_(pa.float32())),
        ("label", pa.string()),
    ]
)
DER_TYPE = pa.struct(
    [
        (":_0", pa.struct([("w", pa.float64()), ("tags", pa.list_(pa.int32()))])),
        ("h", HIT_TYPE),
        ("more", pa.list_(HIT_TYPE)),
        ("big", pa.int64()),
        ("name", pa.string()),
        ("ok", pa.bool_()),
    ]
)
TYPES = {
    "hit": "WHit",
    "hits": "std::vector<WHit>",
    "der": "WDerived",
    "der.:_0": "WBase",
    "der.h": "WHit",
    "der.more": "std::vector<WHit>",
}


def hit(e: int, k: int = 0) -> dict:
    return {
        "x": e + 0.5,
        "y": -float(e),
        "id": 10 * e + k,
        "samples": [0.25 * k] * k if k else [1.5 * e] * e,
        "label": chr(ord("a") + e) * e + ("é" if e == 2 else ""),
    }


def rows(n: int = 5) -> list[dict]:
    out = []
    for e in range(n):
        hits = [hit(e, k) for k in range(e)]
        out.append(
            {
                "hit": hit(e),
                "hits": hits,
                "der": {
                    ":_0": {"w": e * 3.25, "tags": list(range(e))},
                    "h": hit(e),
                    "more": hits,
                    "big": 1 << (30 + e),
                    "name": "x" * (300 if e == 4 else e),  # 300 bytes: the long string form
                    "ok": e % 2 == 1,
                },
            }
        )
    return out


def table(n: int = 5) -> pa.Table:
    schema = pa.schema([("hit", HIT_TYPE, False), ("hits", pa.list_(HIT_TYPE), False), ("der", DER_TYPE, False)])
    return pa.Table.from_pylist(rows(n), schema=schema)


def write(path: str, n: int = 5, **options) -> None:
    with rntuple.recreate(path) as f:
        f.mkrntuple("Events", table(n), types=TYPES, streamer=["hit", "hits", "der"], **options)


def root_reads(path: str) -> list[dict]:
    root_python = os.environ.get("RNTUPLE_ROOT_PYTHON", sys.executable)
    script = os.path.join(REFERENCE, "streamer_write_root.py")
    r = subprocess.run([root_python, script, path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    # No schema-evolution or checksum complaints: the streamer infos are those of the dictionary.
    complaints = [line for line in r.stderr.splitlines() if "Warning" in line or "Error" in line]
    assert not complaints, complaints
    return json.loads(r.stdout)


@pytest.mark.parametrize("compression", [0, 505])
def test_root_reads_our_streamer_fields(tmp_path, compression):
    path = str(tmp_path / "w.root")
    write(path, compression=compression)
    assert root_reads(path) == rows()


def test_field_records_and_streamer_info(tmp_path):
    path = str(tmp_path / "w.root")
    write(path)
    nt = rntuple.open(path)["Events"]
    fields = {f.name: f for f in nt.fields}
    assert {n: (f.kind, f.type_name) for n, f in fields.items()} == {
        "hit": ("streamer", "WHit"),
        "hits": ("streamer", "std::vector<WHit>"),
        "der": ("streamer", "WDerived"),
    }


def test_our_reader_reads_them_back(tmp_path):
    path = str(tmp_path / "w.root")
    write(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rntuple.open(path)["Events"].arrays(library="pa").to_pylist()
    assert got == rows()


def test_unwritable_members_are_refused_with_the_field_and_reason(tmp_path):
    schema = pa.schema([("m", pa.struct([("kv", pa.map_(pa.string(), pa.float32()))]), False)])
    with rntuple.recreate(str(tmp_path / "bad.root")) as f:
        with pytest.raises(RNTupleError, match=r"field 'm' as a streamer field: .*m\.kv"):
            f.mkrntuple("Events", schema, types={"m": "Klass"}, streamer=["m"])
    with rntuple.recreate(str(tmp_path / "bad2.root")) as f:
        with pytest.raises(RNTupleError, match=r"not a class or a std::vector of a class"):
            f.mkrntuple("Events", pa.schema([("x", pa.float32(), False)]), streamer=["x"])


def test_bytes_equal_what_root_writes(tmp_path):
    # ROOT's own `hit` (Hit) and `hits` (std::vector<Hit>) of streamer_root640.root, decoded and
    # written back as streamer fields: every entry's bytes, the field records and the stored
    # streamer info of Hit equal ROOT's.
    root = rntuple.open(os.path.join(TESTS, "data", "streamer_root640.root"))["Events"]
    values = root.arrays(filter_name=["hit", "hits"], library="pa")
    path = str(tmp_path / "again.root")
    with rntuple.recreate(path) as f:
        f.mkrntuple("Events", values, types={"hit": "Hit", "hits": "std::vector<Hit>"}, streamer=["hit", "hits"])
    ours = rntuple.open(path)["Events"]
    stored = [nt._inner.read(["hit", "hits"], 0, 4, None, True, streamer_bytes=True)[0] for nt in (root, ours)]
    raw = [pa.record_batch(b) for b in stored]
    assert raw[1].to_pylist() == raw[0].to_pylist()
    records = [[(f.name, f.type_name, f.type_version, f.type_checksum) for f in nt.fields[:2]] for nt in (root, ours)]
    assert records[1] == records[0]


KILLED_WRITER = r"""
import sys
import rntuple
from test_streamer_write import TYPES, table

with rntuple.recreate(sys.argv[1]) as f:
    w = f.mkrntuple("Events", table(0), types=TYPES, streamer=["hit", "hits", "der"])
    for _ in range(3):
        w.extend(table(5))
        w.commit_cluster()
"""


def recovered(directory) -> str:
    """The file of a writer of streamer fields killed before its footer (``RNTUPLE_CRASH_AT=footer:1``,
    the hook of test_recover.py) after three clusters of ``rows()``, recovered by ``rntuple.recover``."""
    broken, fixed = str(directory / "killed.root"), str(directory / "recovered.root")
    env = dict(os.environ, RNTUPLE_CRASH_AT="footer:1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(__file__)), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, broken], env=env, capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr[-3000:]
    assert rntuple.recover(broken, fixed)["entries"] == 15
    return fixed


def test_a_killed_writers_streamer_fields_are_recovered_with_their_classes(tmp_path):
    """The recovered file keeps the streamer infos of the classes (journaled with each cluster, as
    the footer would have had them): our reader decodes the objects with no warning and ROOT reads
    them (test_jsroot_classes.py: JSROOT finds the classes in the file's streamer-info record)."""
    fixed = recovered(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = rntuple.open(fixed)["Events"].arrays(library="pa").to_pylist()
    assert got == rows() * 3
    assert root_reads(fixed) == rows() * 3
