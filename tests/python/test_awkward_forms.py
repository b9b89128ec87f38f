"""rntuple's awkward arrays have the forms and values uproot gives for the same RNTuples.

Every RNTuple of every file in ``tests/data/`` (copies of ROOT-written files from
scikit-hep-testdata; the shared test-data folder ``../shared`` beside the checkout
when the copies are absent) and of the files ``tests/reference/generate.py`` writes
with ROOT is read by both; uproot is the reference. Fields uproot cannot read are
compared one by one; an RNTuple uproot reads none of must be listed in UPROOT_READS_NONE.

The cases of the generated files come from the generator's plan (as conftest.py's
do), not from the files: the same tests are collected on a fresh machine as on one
whose cache holds the files, and collection generates nothing (the
``generated_dir`` fixture does, when a test runs).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import generated_cases

ak = pytest.importorskip("awkward")
pa = pytest.importorskip("pyarrow")
uproot = pytest.importorskip("uproot")
rntuple = pytest.importorskip("rntuple")

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "testdata" / "root-written"

# Entries compared value by value; longer RNTuples are compared on their head and tail.
MAX_ENTRIES = 20_000


def _data_files() -> list[Path]:
    local = sorted(p for p in (REPO / "tests" / "data").glob("*.root") if p.is_file())
    return local or (sorted(SHARED.glob("*.root")) if SHARED.is_dir() else [])


def _cases() -> list[tuple[Path, str]]:
    cases = []
    for path in _data_files():
        try:
            with rntuple.open(path) as f:
                names = f.keys(filter_classname="ROOT::RNTuple", cycle=False)
        except Exception:  # a file rntuple cannot open is another test's business
            continue
        cases.extend((path, name) for name in dict.fromkeys(names))
    return cases


# RNTuples of the checked-in files, opened at collection time (they are part of the checkout) ...
CASES = _cases()
# ... and of the generated files, by name: (file name, RNTuple name) from the generator's plan.
GENERATED = [(c.file, c.ntuple) for c in generated_cases()]
# The generated RNTuples with more than one cluster and at most 10 * MAX_ENTRIES entries (the
# entry-range cases); test_multi_cluster_generated_is_current checks this list against the files.
MULTI_GENERATED = {
    "clusters.root:clusters",
    "columns_c0.root:columns",
    "columns_c101.root:columns",
    "columns_c109.root:columns",
    "columns_c207.root:columns",
    "columns_c404.root:columns",
    "columns_c505.root:columns",
    "extension.root:extension",
    "multirep.root:multirep",
    "projections.root:projections",
    "types.root:types",
}


def _path(request: pytest.FixtureRequest, origin: str, file: str) -> Path:
    """The file of a case: a checked-in file as is, a generated one in the generated directory
    (generated on demand by the session fixture)."""
    if origin == "data":
        return Path(file)
    return Path(request.getfixturevalue("generated_dir")) / file


ALL = [("data", str(p), n) for p, n in CASES] + [("generated", f, n) for f, n in GENERATED]
ALL_IDS = [f"{Path(f).name}:{n}" for _, f, n in ALL]


def _form(array: ak.Array) -> dict:
    """The form as a dict without form keys (uproot sets them, rntuple does not)."""

    def strip(node: object) -> object:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "form_key"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(array.layout.form.to_dict())


def _same(a: object, b: object) -> bool:
    """Equality of ``ak.to_list`` results, with NaN equal to NaN and tuples equal to lists."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _assert_same(ours: ak.Array, theirs: ak.Array, what: str) -> None:
    assert _form(ours) == _form(theirs), f"{what}: forms differ\nours:   {ours.type}\nuproot: {theirs.type}"
    assert len(ours) == len(theirs), what
    for i, (x, y) in enumerate(zip(ours.to_list(), theirs.to_list(), strict=True)):
        assert _same(x, y), f"{what}: entry {i} differs\nours:   {x}\nuproot: {y}"


def _ranges(num_entries: int) -> list[tuple[int | None, int | None]]:
    if num_entries <= MAX_ENTRIES:
        return [(None, None)]
    return [(None, MAX_ENTRIES // 2), (num_entries - MAX_ENTRIES // 2, None)]


def _only(name: str):
    """``filter_field`` (for uproot and rntuple alike) selecting the top-level field ``name`` and its subfields."""
    return lambda field: field.top_level and field.name == name


def _subtree(field: rntuple.Field):
    yield field
    for child in field.children:
        yield from _subtree(child)


UNIQUE_PTR = "std::unique_ptr: uproot gives a list of 0 or 1 items, ROOT an optional value"
QUANT_DOUBLE = (
    "double stored as Real32Quant: uproot dequantizes into float32, rntuple into float64 as ROOT does "
    "(compared with ROOT's values in test_read_dtypes.py)"
)


def _uproot_misreads(nt: rntuple.RNTuple, field: rntuple.Field, start: int, stop: int) -> str | None:
    """Why uproot 5.7 reads wrong values for ``field`` in entries [start, stop), if it does.

    Each case was checked against ROOT (tests/reference/root_dump.py): rntuple agrees with ROOT.
    """
    # The one form where rntuple differs from uproot on purpose (docs/reading.md, "Where we differ
    # from uproot"): ROOT reads a std::unique_ptr as None or a value, uproot as a list of 0 or 1.
    if field.type_name.startswith("std::unique_ptr<"):
        return UNIQUE_PTR
    if any(f.type_name.startswith("std::unique_ptr<") for f in _subtree(field)):
        return "std::unique_ptr inside: uproot gives a list of 0 or 1 items where ROOT gives an optional"
    doubles = [f for f in _subtree(field) if f.type_name == "double"]
    quant = [rep and rep[0][1] == "Real32Quant" for f in doubles for rep in f.columns]
    if any(quant):
        return QUANT_DOUBLE
    if any(len(f.columns) > 1 for f in _subtree(field)):
        return "multiple column representations: uproot decodes every cluster with the first one"
    if any(f.kind == "variant" for f in _subtree(field)):
        firsts = [c.first_entry for c in nt.clusters]
        if any(start < first < stop for first in firsts):
            return "variant across clusters: uproot does not offset the cluster-relative variant indices"
    return None


def _cluster_pieces(nt: rntuple.RNTuple, start: int, stop: int) -> list[tuple[int, int]]:
    cuts = sorted({start, stop, *(c.first_entry for c in nt.clusters if start < c.first_entry < stop)})
    return list(zip(cuts[:-1], cuts[1:], strict=True))


# RNTuples whose every field uproot refuses, with where our values are checked instead.
UPROOT_READS_NONE = {
    # streamer fields only (uproot: "probably never"); test_streamer.py compares with ROOT's reader
    ("streamer_root640.root", "Events"),
    ("streamer_gaps_root640.root", "Events"),
    # streamer fields below the top level: test_streamer_nested.py compares with ROOT's reader
    ("streamer_nested_root640.root", "Events"),
}


def _compare(path: Path, name: str, entry_start=None, entry_stop=None) -> list[str]:
    """Compares every field rntuple reads; returns notes on fields compared in a weaker way, or not at all."""
    ours_nt = rntuple.open(path)[name]
    theirs_nt = uproot.open(path)[name]
    what = f"{path.name}:{name}[{entry_start}:{entry_stop}]"
    start, stop = slice(entry_start, entry_stop).indices(ours_nt.num_entries)[:2]
    stop = max(start, stop)
    readable = [f for f in ours_nt.fields if f.readable]
    misread = {f.name: _uproot_misreads(ours_nt, f, start, stop) for f in readable}
    plain = [f.name for f in readable if misread[f.name] is None]
    kwargs = {"entry_start": entry_start, "entry_stop": entry_stop}
    # Fast path: all fields at once.
    try:
        theirs = theirs_nt.arrays(filter_field=lambda f: f.top_level and f.name in plain, **kwargs)
        ours = ours_nt.arrays(filter_field=lambda f: f.top_level and f.name in plain, **kwargs)
        _assert_same(ours, theirs, what)
        one_by_one = [f for f in readable if misread[f.name] is not None]
    except Exception:
        one_by_one = readable
    notes = []
    for field in one_by_one:
        note = _compare_field(ours_nt, theirs_nt, field, misread[field.name], start, stop, f"{what}.{field.name}")
        if note:
            notes.append(f"{field.name}: {note}")
    if readable and len([n for n in notes if "uproot fails" in n]) == len(readable):
        # Only where uproot is known to read none of the fields (our values are checked against
        # ROOT's reader there instead); anywhere else it is a failure, never a skip.
        assert (path.name, name) in UPROOT_READS_NONE, f"uproot reads none of the fields of {what}: {notes[:3]}"
    return notes


def _compare_field(ours_nt, theirs_nt, field, reason: str | None, start: int, stop: int, what: str) -> str | None:
    only = _only(field.name)
    try:
        theirs = theirs_nt.arrays(filter_field=only, entry_start=start, entry_stop=stop)
    except Exception as err:
        return f"uproot fails: {type(err).__name__}: {str(err)[:120]}"
    ours = ours_nt.arrays(filter_field=only, entry_start=start, entry_stop=stop)
    if reason == UNIQUE_PTR:
        # uproot's list of 0 or 1 items as the optional value ROOT reads (the only form change).
        theirs = ak.zip({field.name: ak.firsts(theirs[field.name], axis=1)}, depth_limit=1)
        reason = None
    elif reason is not None and ("unique_ptr" in reason or reason == QUANT_DOUBLE):
        return f"values not compared ({reason})"
    assert _form(ours) == _form(theirs), f"{what}: forms differ\nours:   {ours.type}\nuproot: {theirs.type}"
    try:
        _assert_same(ours, theirs, what)
        return None
    except AssertionError:
        if reason is None and (start, stop) == (0, ours_nt.num_entries):
            raise
    if reason is None:
        # uproot reads some fields wrong when a range starts in a later cluster (for
        # example nested std::array members); its own full read is then the reference.
        theirs_full = theirs_nt.arrays(filter_field=only)[start:stop]
        _assert_same(ours, theirs_full, what + " (uproot's full read)")
        return "compared with uproot's full read (its ranged read differs from it)"
    if reason.startswith("variant"):
        # uproot is right within one cluster
        for lo, hi in _cluster_pieces(ours_nt, start, stop):
            piece = {"filter_field": only, "entry_start": lo, "entry_stop": hi}
            _assert_same(ours_nt.arrays(**piece), theirs_nt.arrays(**piece), f"{what}[{lo}:{hi}]")
        return "compared cluster by cluster (" + reason + ")"
    return f"values not compared ({reason})"


@pytest.mark.parametrize(("origin", "file", "name"), ALL, ids=ALL_IDS)
def test_same_as_uproot(request: pytest.FixtureRequest, origin: str, file: str, name: str) -> None:
    path = _path(request, origin, file)
    num_entries = rntuple.open(path)[name].num_entries
    for start, stop in _ranges(num_entries):
        notes = _compare(path, name, start, stop)
    if notes:
        print(f"{path.name}:{name}: {notes}")


def _is_multi(path: Path, name: str) -> bool:
    nt = rntuple.open(path)[name]
    return len(nt.clusters) > 1 and nt.num_entries <= 10 * MAX_ENTRIES


MULTI = [("data", str(p), n) for p, n in CASES if _is_multi(p, n)] + [
    ("generated", f, n) for f, n in GENERATED if f"{f}:{n}" in MULTI_GENERATED
]


def test_multi_cluster_generated_is_current(generated_dir: str) -> None:
    found = {f"{f}:{n}" for f, n in GENERATED if _is_multi(Path(generated_dir) / f, n)}
    assert found == MULTI_GENERATED, "update MULTI_GENERATED to the generated files' multi-cluster RNTuples"


@pytest.mark.parametrize(("origin", "file", "name"), MULTI, ids=[f"{Path(f).name}:{n}" for _, f, n in MULTI])
def test_entry_ranges_across_clusters(request: pytest.FixtureRequest, origin: str, file: str, name: str) -> None:
    path = _path(request, origin, file)
    nt = rntuple.open(path)[name]
    n = nt.num_entries
    boundary = nt.clusters[1].first_entry
    last = nt.clusters[-1].first_entry
    ranges = [
        (boundary - 3, boundary + 3),
        (boundary, boundary + 1),
        (boundary - 1, boundary),
        (max(0, boundary - 5), min(n, last + 5)),
        (-7, None),
        (None, -(n // 3)),
        (n // 2, n // 2 - 1),  # empty
        (n + 10, None),  # empty
        (-(n + 10), 2),
    ]
    for start, stop in ranges:
        if start is not None and stop is not None and abs(stop - (start or 0)) > MAX_ENTRIES:
            continue
        _compare(path, name, start, stop)


def _first_case_with(predicate) -> tuple[Path, str]:
    for path, name in CASES:
        if predicate(path, name):
            return path, name
    pytest.skip("no test file has what this test needs")


def _run2012() -> tuple[Path, str]:
    return _first_case_with(lambda p, n: p.name.startswith("Run2012BC_DoubleMuParked_Muons"))


@pytest.mark.parametrize(
    "filter_name",
    [
        "nMuon",
        "Muon_*",
        "/^Muon_(pt|eta)$/",
        "/^MUON_P.*/i",
        ["nMuon", "Muon_pt"],
        ("Muon_ph?", "n*"),
        lambda name: name.endswith("_mass"),
        "_collection0",
        "_collection0.Muon_pt",
        "nothing*",
    ],
    ids=repr,
)
def test_filter_name_like_uproot(filter_name) -> None:
    path, name = _run2012()
    ours = rntuple.open(path)[name].arrays(filter_name=filter_name)
    theirs = uproot.open(path)[name].arrays(filter_name=filter_name)
    assert ours.fields == theirs.fields
    _assert_same(ours, theirs, f"filter_name={filter_name!r}")


def test_filter_name_on_nested_members() -> None:
    path, name = _first_case_with(lambda p, n: p.name.startswith("test_nested_structs"))
    for filter_name in ["my_struct.sub_struct.i", "*sub_sub_struct*", "v", ".my_struct.i"]:
        ours = rntuple.open(path)[name].arrays(filter_name=filter_name)
        theirs = uproot.open(path)[name].arrays(filter_name=filter_name)
        _assert_same(ours, theirs, f"filter_name={filter_name!r}")


def test_expressions_select_and_order() -> None:
    path, name = _run2012()
    nt = rntuple.open(path)[name]
    assert nt.arrays("nMuon").fields == ["nMuon"]
    # expressions name what to read, in their order; filter_name matches names as uproot
    # does: there the member of _collection0 named Muon_pt comes along (with its parent)
    assert nt.arrays(["nMuon", "Muon_pt"]).fields == ["nMuon", "Muon_pt"]
    assert nt.arrays(["Muon_pt", "nMuon"], how="zip").fields == ["nMuon", "Muon"]  # the muons once
    assert nt.arrays(filter_name=["nMuon", "Muon_pt"]).fields == ["_collection0", "Muon_pt", "nMuon"]
    theirs = uproot.open(path)[name]
    _assert_same(nt.arrays("_collection0.Muon_eta"), theirs.arrays("_collection0.Muon_eta"), "a path")
    for expressions in [["Muon_pt", "nMuon"], ["nMuon", "Muon_pt"]]:
        got = nt.arrays(expressions)
        for n in expressions:
            _assert_same(got[n], theirs.arrays(n)[n], n)
    with pytest.raises(KeyError):
        nt.arrays(["nMuon", "no_such_field"])
    with pytest.raises(ValueError):
        nt.arrays("nMuon", filter_name="Muon_*")


def _stl() -> tuple[Path, str]:
    return _first_case_with(lambda p, n: p.name.startswith("test_stl_containers"))


def _assert_numpy_like(ours: object, theirs: object, what: str) -> None:
    """Same types, dtypes, shapes and values, recursively (object arrays, structured arrays, 0-d arrays)."""
    assert type(ours) is type(theirs), f"{what}: {type(ours)} != {type(theirs)}"
    if isinstance(theirs, np.ndarray | np.void):
        assert ours.dtype == theirs.dtype, f"{what}: {ours.dtype} != {theirs.dtype}"
        assert ours.shape == theirs.shape, what
        if theirs.dtype.names is not None:
            for name in theirs.dtype.names:
                _assert_numpy_like(ours[name], theirs[name], f"{what}.{name}")
        elif theirs.dtype == object:
            for x, y in zip(np.ravel(ours), np.ravel(theirs), strict=True):
                _assert_numpy_like(x, y, what)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=what)
    elif isinstance(theirs, ak.Record | ak.Array):
        assert _same(ours.to_list(), theirs.to_list()), what
    else:
        assert ours == theirs, what


@pytest.mark.parametrize("case", ["stl", "run2012", "vfloat_tlv", "emptystruct", "bitset", "nested"])
def test_library_np_like_uproot(case: str) -> None:
    prefix = {
        "stl": "test_stl_containers",
        "run2012": "Run2012BC_DoubleMuParked",
        "vfloat_tlv": "test_int_vfloat_tlv_vtlv",
        "emptystruct": "test_emptystruct_invalidvar",
        "bitset": "test_atomic_bitset",
        "nested": "test_nested_structs",
    }[case]
    path, name = _first_case_with(lambda p, n: p.name.startswith(prefix))
    ours = rntuple.open(path)[name].arrays(library="np", entry_stop=100)
    theirs = uproot.open(path)[name].arrays(library="np", entry_stop=100)
    assert isinstance(ours, dict)
    assert list(ours) == list(theirs)
    for key in theirs:
        _assert_numpy_like(ours[key], theirs[key], key)


def test_library_pd_like_uproot() -> None:
    pd = pytest.importorskip("pandas")
    path, name = _run2012()
    kwargs = {"filter_name": ["nMuon", "Muon_pt", "_collection0"], "entry_start": 10, "entry_stop": 60}
    ours = rntuple.open(path)[name].arrays(library="pd", **kwargs)
    theirs = uproot.open(path)[name].arrays(library="pd", **kwargs)
    assert isinstance(ours, pd.DataFrame)
    assert list(ours.columns) == list(theirs.columns)
    assert ours.index.equals(theirs.index)
    assert (ours.dtypes == theirs.dtypes).all()
    for column in ours.columns:
        for x, y in zip(ours[column], theirs[column], strict=True):
            assert np.array_equal(x, y), column


def test_library_pd_fixed_size_arrays_become_object_columns() -> None:
    pytest.importorskip("pandas")
    path, name = _stl()
    df = rntuple.open(path)[name].arrays(["array_float", "string", "vector_int32"], library="pd")
    assert list(df.columns) == ["array_float", "string", "vector_int32"]  # the expressions' order
    assert df["array_float"].dtype == object
    assert df["array_float"].iloc[1].tolist() == [2.0, 2.0, 2.0]


def test_library_pa_table() -> None:
    path, name = _stl()
    nt = rntuple.open(path)[name]
    table = nt.arrays(library="pa", entry_start=1, entry_stop=4)
    assert isinstance(table, pa.Table)
    assert table.num_rows == 3
    assert table.column_names == [f.name for f in nt.fields if f.readable]
    assert pa.types.is_large_list(table.schema.field("vector_int32").type)
    assert pa.types.is_fixed_size_list(table.schema.field("array_float").type)
    assert table.column("string").to_pylist() == nt.arrays(["string"], entry_start=1, entry_stop=4)["string"].tolist()


@pytest.mark.parametrize("library", ["ak", "np", "pd", "pa"])
def test_iterate_concatenates_to_arrays(library: str) -> None:
    if library == "pd":
        pytest.importorskip("pandas")
    path, name = _first_case_with(lambda p, n: p.name.startswith("test_multiple_cluster_groups"))
    nt = rntuple.open(path)[name]
    whole = nt.arrays(entry_start=5, entry_stop=-5)
    batches = list(nt.iterate(step_size=97, entry_start=5, entry_stop=-5, library=library))
    # clusters of 100, 100, 100, 100, 50, 50, 100, 100, 50, 50, 100, 100 entries, cut to [5, 995):
    # 95 | 50 50 | 50 50 | 50 50 | 50 | 50 | 50 50 | 50 50 | 50 | 50 | 50 50 | 95
    sizes = [len(next(iter(b.values()))) if library == "np" else len(b) for b in batches]
    assert sizes == [95, *[50] * 16, 95]
    if library == "ak":
        joined = ak.concatenate(batches)
    elif library == "np":
        joined = ak.Array({k: ak.from_iter(np.concatenate([b[k] for b in batches])) for k in batches[0]})
    elif library == "pd":
        import pandas as pd

        frame = pd.concat(batches)
        assert frame.index[0] == 5 and frame.index[-1] == nt.num_entries - 6
        joined = ak.Array({k: ak.from_iter(frame[k].tolist()) for k in frame.columns})
    else:
        joined = ak.from_arrow(pa.concat_tables(batches))
    assert joined.to_list() == whole.to_list()


def test_iterate_by_memory_size() -> None:
    path, name = _first_case_with(lambda p, n: p.name.startswith("test_split_3e4"))
    nt = rntuple.open(path)[name]
    small = list(nt.iterate(step_size="100 kB"))
    assert len(small) > 1
    assert sum(len(b) for b in small) == nt.num_entries
    assert len(list(nt.iterate(step_size="1 GiB"))) == 1
    with pytest.raises(ValueError):
        list(nt.iterate(step_size="a lot"))


@pytest.mark.parametrize(("origin", "file", "name"), ALL, ids=ALL_IDS)
def test_recursive_keys_like_uproot(request: pytest.FixtureRequest, origin: str, file: str, name: str) -> None:
    path = _path(request, origin, file)
    ours = rntuple.open(path)[name]
    theirs = uproot.open(path)[name]
    assert ours.keys(recursive=True) == theirs.keys()
    assert ours.keys(recursive=False) == theirs.keys(recursive=False)
    assert ours.keys() == theirs.keys()  # recursive by default, as uproot's
    assert ours.typenames(recursive=True) == theirs.typenames()
