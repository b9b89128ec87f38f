"""Start-up of the first read of a wide RNTuple (issue 15: open a 2,000-field RNTuple and get a
first awkward array within 50 ms of ``import awkward``; measured by ``bench/startup.py``).

What keeps it short is checked here without timing: the first array imports no third-party
package beyond the ones awkward brings (no pandas, dask, uproot, matplotlib, pyarrow.dataset...),
and it works out the field tree's display paths once per field rather than walking up the tree
from every field several times over."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import rntuple
from rntuple import _fields

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
SCALARS, COLLECTIONS, MEMBERS = 600, 100, 10
# Packages a first read must not import (each is an optional integration or a competitor).
HEAVY = ("pandas", "dask", "dask_awkward", "distributed", "matplotlib", "uproot", "hist", "fsspec", "ROOT", "numba")
HEAVY_SUBMODULES = ("pyarrow.dataset", "pyarrow.parquet", "pyarrow.compute", "pyarrow.csv", "pyarrow.fs")


@pytest.fixture(scope="module")
def wide_file(tmp_path_factory) -> Path:
    """600 scalars and 100 collections of records (10 scalars and a vector each): 2,000 fields."""
    path = tmp_path_factory.mktemp("startup") / "wide.root"
    rng = np.random.default_rng(15)
    n = 20
    data: dict[str, object] = {f"x{i:03d}": rng.integers(0, 100, n).astype(np.int32) for i in range(SCALARS)}
    for c in range(COLLECTIONS):
        counts = rng.integers(0, 4, n)
        total = int(counts.sum())
        members = {f"m{m}": rng.random(total).astype(np.float32) for m in range(MEMBERS)}
        members["hits"] = ak.unflatten(rng.random(2 * total), np.full(total, 2))
        data[f"coll{c:03d}"] = ak.unflatten(ak.zip(members, depth_limit=1), counts)
    with rntuple.recreate(path) as f:
        f["Events"] = data
    return path


def _count(fields: list[_fields.Field]) -> int:
    return sum(1 for _ in _fields.iter_fields(fields))


def test_the_wide_file_has_2000_fields(wide_file: Path) -> None:
    with rntuple.open(wide_file) as f:
        # per collection: itself, its record, 10 members, the vector and its item
        assert _count(f["Events"].fields) == SCALARS + COLLECTIONS * (2 + MEMBERS + 2) == 2000


_FIRST_READ = """
import json, sys
import awkward
before = set(sys.modules)
import rntuple
array = rntuple.open(sys.argv[1])["Events"][sys.argv[2]].array()
print(json.dumps({"modules": sorted(set(sys.modules) - before), "values": array.tolist()}))
"""


@pytest.mark.parametrize("field", ["x007", "coll042"])
def test_first_array_imports_nothing_heavy(wide_file: Path, field: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _FIRST_READ, str(wide_file), field], check=True, capture_output=True, text=True
    )
    out = json.loads(proc.stdout)
    with rntuple.open(wide_file) as f:
        assert out["values"] == f["Events"].arrays([field])[field].tolist()
    new = out["modules"]
    assert not [m for m in new if m.split(".")[0] in HEAVY], new
    assert not [m for m in new if m.startswith(HEAVY_SUBMODULES)], new
    # beyond rntuple's own modules, only the standard library and what the read is made of
    allowed = set(sys.stdlib_module_names) | {"rntuple", "awkward", "numpy", "pyarrow"}
    assert not [m for m in new if m.split(".")[0] not in allowed], new


def test_first_array_works_out_each_display_path_once(wide_file: Path, monkeypatch) -> None:
    calls = [0]
    walk = _fields.Field.is_transparent.fget

    def counted(self: _fields.Field) -> bool:
        calls[0] += 1
        return walk(self)

    monkeypatch.setattr(_fields.Field, "is_transparent", property(counted))
    with rntuple.open(wide_file) as f:
        ntuple = f["Events"]
        array = ntuple["coll042"].array()
        assert len(array) == 20
        # one question per field while the tree is built, then only about the fields read (the walk
        # up from every field, as display_path did, asks it about 9 times per field of this file)
        assert calls[0] < 2 * _count(ntuple.fields)


@pytest.mark.parametrize(
    "name",
    [
        "test_class_inheritance_rntuple_v1-0-0-1.root",
        "test_stl_containers_rntuple_v1-0-0-0.root",
        "test_nested_structs_rntuple_v1-0-0-0.root",
        "test_emptystruct_invalidvar_rntuple_v1-0-0-0.root",
        "uproot-physlite-rntuple_v1-0-0-0.root",
    ],
)
def test_display_paths_worked_out_at_build_are_those_of_the_walk(name: str) -> None:
    """Base classes, tuples, variants, collections of records: the paths ``build_fields`` stores
    are those the walk up the tree gives (``Field.display_path`` of a field built by hand)."""
    with rntuple.open(DATA / name) as f:
        for key in f.rntuple_names():
            every = list(_fields.iter_fields(f[key].fields))
            stored = [x.display_path for x in every]
            for x in every:
                x._display_path = _fields._UNKNOWN
            walked = [x.display_path for x in every]
            assert stored == walked
