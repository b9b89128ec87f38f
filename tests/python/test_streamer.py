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
from rntuple._streamer import decode_columns

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
        arr = rntuple.open(FILE)["Events"].arrays()
    assert arr.tolist() == expected()


def test_forms_are_those_of_split_fields():
    arr = rntuple.open(FILE)["Events"].arrays()
    der = '{":_0": {w: float64, c: 3 * int16}, h: ' + HIT + ", more: var * " + HIT + ", big: int64}"
    assert str(arr.type) == f"4 * {{hit: {HIT}, hits: var * {HIT}, der: {der}}}"


def test_arrow_has_the_decoded_values():
    table = rntuple.open(FILE)["Events"].arrays(library="pa")
    assert pa.types.is_struct(table.schema.field("hit").type)
    assert table.to_pylist() == expected()


def test_undecodable_fields_stay_bytes_with_a_warning():
    nt = rntuple.open(FILE)["Events"]
    batch = pa.record_batch(nt._inner.read(["hit"], 0, 4, None, True))

    class Fake:  # a streamer field whose class the streamer info does not have
        name, kind, type_name = "hit", "streamer", "NotInTheFile"

    why = r"'hit' of class NotInTheFile: kept as bytes .*missing from the streamer info"
    with pytest.warns(UserWarning, match=why):
        out = decode_columns(nt._inner, batch, [Fake()])
    assert pa.types.is_large_binary(out.column(0).type) or pa.types.is_binary(out.column(0).type)
    with pytest.raises(ValueError, match="class NotInTheFile is missing"):
        nt._inner.decode_streamer("NotInTheFile", batch.column(0))


def test_values_equal_roots_reader_fresh(tmp_path):
    script = os.path.join(TESTS, "reference", "streamer_root.py")
    root_python = os.environ.get("RNTUPLE_ROOT_PYTHON", sys.executable)
    subprocess.run([root_python, script, str(tmp_path)], check=True, capture_output=True)
    ours = rntuple.open(str(tmp_path / "streamer_root640.root"))["Events"].arrays().tolist()
    assert ours == expected(str(tmp_path))
