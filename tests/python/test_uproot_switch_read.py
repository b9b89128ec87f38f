"""Issue 11, reading: uproot habits next to ours on the bundled files.

``open("f.root:Events")``, ``open(file_like)``, ``arrays(expressions=, cut=, aliases=)``, short
``KeyError``s, ``items()``, ``f["Events/Muon_pt"]``, ``ntuple["run"].array()``,
``num_entries_for``, ``how=``, ``iterate(report=True)``, recursive ``keys()``, ``typenames()``.
"""

from __future__ import annotations

import io
import os
import pickle

import awkward as ak
import numpy as np
import pytest
import rntuple
import uproot
from conftest import DATA
from rntuple._computed import compile_selection

MUONS = os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")
NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")


def test_open_file_colon_name_returns_the_rntuple_as_uproot():
    theirs = uproot.open(MUONS + ":Events")
    ours = rntuple.open(MUONS + ":Events")
    assert isinstance(ours, rntuple.RNTuple) and ours.name == "Events"
    assert ours.num_entries == theirs.num_entries == 1000
    assert ours.arrays(["nMuon"]).nMuon.tolist() == theirs.arrays(["nMuon"]).nMuon.tolist()
    assert isinstance(rntuple.open("file://" + MUONS + ":Events"), rntuple.RNTuple)
    with pytest.raises(KeyError, match="did you mean 'Events'"):
        rntuple.open(MUONS + ":Event")
    assert isinstance(rntuple.open(MUONS), rntuple.File)


def test_open_file_like_objects_as_uproot():
    with open(MUONS, "rb") as fh:
        data = fh.read()
    theirs = uproot.open(io.BytesIO(data))["Events"].arrays(["Muon_pt"])
    for source in (io.BytesIO(data), open(MUONS, "rb")):  # noqa: SIM115 - closed below
        with rntuple.open(source) as f:
            assert f.rntuple_names() == ["Events"]
            ours = f["Events"].arrays(["Muon_pt"], threads=2)
            assert ours.Muon_pt.tolist() == theirs.Muon_pt.tolist()
            with pytest.raises(TypeError, match="file-like"):
                pickle.dumps(f)
        source.close()
    truncated = io.BytesIO(data[: len(data) // 2])
    with pytest.raises(rntuple.RNTupleError):
        rntuple.open(truncated)["Events"].arrays()


def _uproot_events():
    return uproot.open(MUONS)["Events"]


@pytest.fixture(scope="module")
def uproot_ttree(tmp_path_factory):
    """The Muon fields as a TTree written by uproot: uproot evaluates expressions, cuts and aliases
    for TTrees (its RNTuple ``arrays`` says "not implemented yet" for them)."""
    events = rntuple.open(MUONS)["Events"].arrays(["Muon_pt", "Muon_eta"])
    muons = {"Muon": ak.zip({"pt": events.Muon_pt, "eta": events.Muon_eta})}  # branches nMuon, Muon_pt, Muon_eta
    path = tmp_path_factory.mktemp("ttree") / "muons_ttree.root"
    with uproot.recreate(path) as f:
        f.mktree("Events", {"Muon": muons["Muon"].type.content})
        f["Events"].extend(muons)
    tree = uproot.open(path)["Events"]
    assert tree.classname == "TTree" and tree.keys() == ["nMuon", "Muon_pt", "Muon_eta"]
    return tree


def test_arrays_with_expressions_cut_and_aliases_as_uproot(uproot_ttree):
    ours = rntuple.open(MUONS)["Events"]
    theirs = uproot_ttree
    kwargs = {"cut": "nMuon > 1", "aliases": {"pt2": "Muon_pt * 2"}}
    got = ours.arrays(["nMuon", "pt2", "Muon_pt + Muon_eta"], **kwargs)
    want = theirs.arrays(["nMuon", "pt2", "Muon_pt + Muon_eta"], **kwargs)
    assert got.fields == want.fields == ["nMuon", "pt2", "Muon_pt + Muon_eta"]
    for name in want.fields:
        assert ak.almost_equal(got[name], want[name], dtype_exact=False), name
    # a cut without expressions: the filtered fields, entries where the cut holds
    got = ours.arrays(filter_name="Muon_pt", cut="nMuon == 1")
    want = theirs.arrays(filter_name="Muon_pt", cut="nMuon == 1")
    assert want.fields == ["Muon_pt"]
    assert got.fields == _uproot_events().arrays(filter_name="Muon_pt").fields  # what the filter selects
    assert got.Muon_pt.tolist() == want.Muon_pt.tolist()
    # numpy and pandas: pandas keeps the entry numbers of the entries that pass
    frame = ours.arrays(["nMuon"], cut="nMuon > 3", library="pd")
    assert frame.index.tolist() == np.nonzero(theirs["nMuon"].array(library="np") > 3)[0].tolist()
    got = ours.arrays("nMuon * 2", library="np")["nMuon * 2"]
    assert got.tolist() == theirs.arrays("nMuon * 2", library="np")["nMuon * 2"].tolist()
    # uproot's RNTuple reader does not evaluate them yet: it returns the named fields only
    assert _uproot_events().arrays(["nMuon", "pt2"], aliases={"pt2": "nMuon * 2"}).fields == ["nMuon"]


def test_expressions_are_never_evaluated_by_python():
    r = rntuple.open(MUONS)["Events"]
    for bad in ("__import__('os').system('true')", "nMuon.__class__", "[x for x in nMuon]"):
        with pytest.raises(ValueError, match="not allowed|no member|unknown function"):
            r.arrays([bad])
    with pytest.raises(ValueError, match="one value per entry"):
        r.arrays(["nMuon"], cut="Muon_pt > 10")
    with pytest.raises(ValueError, match="circle"):
        r.arrays(["a"], aliases={"a": "b + 1", "b": "a * 2"})


def test_the_selection_helper_is_one_function():
    sel = compile_selection(["pt2"], "nMuon > 0", {"pt2": "Muon_pt * 2"}, fields=["nMuon", "Muon_pt", "x"])
    assert sel.fields == ["Muon_pt", "nMuon"]
    array = ak.Array({"nMuon": [0, 2], "Muon_pt": [[], [1.0, 2.0]]})
    assert sel.apply(array).tolist() == [{"pt2": [2.0, 4.0]}]


def test_typo_in_a_field_name_names_the_closest_fields():
    r = rntuple.open(NANO)["Events"]
    with pytest.raises(KeyError) as caught:
        r.arrays(["Muon_ptt"])
    message = str(caught.value)
    assert "'Muon_ptt'" in message and "'Muon_pt'" in message
    assert len(message) < 300  # not the 25,000-character schema
    with pytest.raises(KeyError, match="Muon_pt"):
        r["Muon_ptt"]
    with pytest.raises(KeyError, match="did you mean 'Events'"):
        rntuple.open(NANO)["Evnts"]
    with pytest.raises(KeyError, match="Muon_ptt"):  # uproot's KeyError for a TTree branch
        uproot.open(os.path.join(DATA, "nanoAOD_2015_CMS_Open_Data_ttbar.root"))["Events"].arrays(["Muon_ptt"])


def test_file_items_and_field_paths_as_uproot():
    theirs = uproot.open(MUONS)
    ours = rntuple.open(MUONS)
    assert [k for k, _ in ours.items()] == [k for k, v in theirs.items() if v.classname == "ROOT::RNTuple"]
    assert all(isinstance(v, rntuple.RNTuple) for v in ours.values())
    field = ours["Events/Muon_pt"]
    assert field.name == "Muon_pt"
    assert field.array().tolist() == theirs["Events/Muon_pt"].array().tolist()
    assert ours["Events"]["nMuon"].array(library="np").tolist() == theirs["Events"]["nMuon"].array().tolist()
    assert ours["Events"]["nMuon"].array(10, 20).tolist() == theirs["Events"]["nMuon"].array(10, 20).tolist()


def test_num_entries_for_a_memory_size():
    r = rntuple.open(MUONS)["Events"]
    n = r.num_entries_for("10 kB", filter_name="Muon_pt")
    assert 0 < n < 1000
    size = ak.to_arrow_table(r.arrays(filter_name="Muon_pt", entry_stop=n)).nbytes
    assert size <= 12_000
    assert r.num_entries_for("1 GB") == 1000  # at most the entries there are (uproot's estimate is not bounded)
    assert _uproot_events().num_entries_for("1 GB") > 1000


def test_how_tuple_dict_zip_as_uproot(uproot_ttree):
    # Expressions are exact names, in the order given (docs/reading.md "Which fields come back"):
    # as uproot's TTree reader gives them. uproot's RNTuple reader matches names instead and also
    # brings the projections' source record, `_collection0`; `filter_name=` does that here too.
    ours = rntuple.open(MUONS)["Events"]
    theirs = _uproot_events()
    names = ["Muon_pt", "Muon_eta", "nMuon"]
    for how in (tuple, dict):
        got, want = ours.arrays(names, how=how), uproot_ttree.arrays(names, how=how)
        assert type(got) is type(want) is how
        if how is dict:
            assert list(got) == list(want) == names
        items = zip(got, want, strict=True) if how is tuple else ((got[k], want[k]) for k in want)
        for a, b in items:
            assert a.tolist() == b.tolist()
    assert ours.arrays(names).fields == names
    assert theirs.arrays(names).fields == ["_collection0", *names]
    # uproot's RNTuple reader fails on how="zip" (TypeError in uproot 5.7.7); its TTree reader zips
    got, want = ours.arrays(names, how="zip"), uproot_ttree.arrays(names, how="zip")
    assert got.fields == want.fields == ["nMuon", "Muon"]
    assert got.Muon.fields == want.Muon.fields
    assert got.Muon.tolist() == want.Muon.tolist()


def test_iterate_report_as_uproot():
    ours = rntuple.open(MUONS)["Events"]
    theirs = _uproot_events()
    got = [(len(a), r.start, r.stop) for a, r in ours.iterate(["nMuon"], step_size=300, report=True)]
    want = [(len(a), r.start, r.stop) for a, r in theirs.iterate(["nMuon"], step_size=300, report=True)]
    # The reports name the ranges as uproot's do; the ranges follow rntuple.iterate's one rule (the
    # file's one 1,000-entry cluster in the fewest pieces of at most 300, sizes within one entry),
    # where uproot cuts fixed steps of 300.
    assert got == [(250, 0, 250), (250, 250, 500), (250, 500, 750), (250, 750, 1000)]
    assert want == [(300, 0, 300), (300, 300, 600), (300, 600, 900), (100, 900, 1000)]
    _, report = next(iter(ours.iterate(step_size=100, report=True, cut="nMuon > 0")))
    assert (report.tree_entry_start, report.tree_entry_stop, report.file_path) == (0, 100, MUONS)


def test_recursive_keys_and_typenames_as_uproot():
    ours = rntuple.open(NANO)["Events"]
    theirs = uproot.open(NANO)["Events"]
    assert len(theirs.keys()) == len(ours.keys()) == 1313  # uproot's keys() are recursive
    assert ours.keys() == theirs.keys()
    assert len(ours.keys(recursive=False)) == 969
    assert ours.typenames() == theirs.typenames()
    assert ours.typenames()["Muon_pt"] == theirs.typenames()["Muon_pt"] == "ROOT::VecOps::RVec<float>"
    assert [k for k, _ in ours.items()] == ours.keys()
