"""Selecting fields by name or dotted path (``arrays(["MET_pt", "Muon.pt"])``), judged by uproot on
files ROOT wrote: the fields, forms and values uproot gives, also where a name matches subfields
of other fields; and a read of a few names of a wide RNTuple builds the trees of those fields only
(issue 15: Python's overhead over the Rust API on a 2,000-field schema)."""

from __future__ import annotations

import os

import awkward as ak
import pytest
import rntuple
import uproot
from conftest import DATA

NANO = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")
LVS = os.path.join(DATA, "test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root")
PHYSLITE = os.path.join(DATA, "uproot-physlite-rntuple_v1-0-0-0.root")


def _as_expressions(theirs: ak.Array, names: list[str]) -> ak.Array:
    """uproot's ``arrays(filter_name=names)`` as our ``arrays(names)`` gives it: the top-level
    fields ``names`` start with, in their order (docs/reading.md, "Selecting fields")."""
    tops = list(dict.fromkeys(n.split(".", 1)[0] for n in names))
    return ak.zip({t: theirs[t] for t in tops}, depth_limit=1)


def _same(ours: ak.Array, theirs: ak.Array) -> None:
    assert ours.fields == theirs.fields
    assert str(ours.type) == str(theirs.type)
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize(
    "names",
    [
        ["one_integers", "four_v_LVs.pt", "three_LV.eta"],  # a sub-field of a collection of records
        ["four_v_LVs.pt", "four_v_LVs.mass"],
        ["four_v_LVs"],
        ["three_LV.eta", "three_LV"],  # the whole record wins
    ],
)
def test_subfields_of_record_collections_as_uproot(names):
    """ROOT wrote ``four_v_LVs`` (``std::vector<ROOT::Math::PtEtaPhiMVector>``): ``"four_v_LVs.pt"``
    gives a jagged array of floats inside the collection's records, as uproot reads it."""
    ours = rntuple.open(LVS)["ntuple"]
    theirs = uproot.open(LVS)["ntuple"]
    _same(ours.arrays(names), _as_expressions(theirs.arrays(filter_name=names), names))
    _same(ours.arrays(filter_name=names), theirs.arrays(filter_name=names))
    some = {"entry_start": 1, "entry_stop": 4}
    _same(ours.arrays(names, **some), _as_expressions(theirs.arrays(filter_name=names, **some), names))


def test_collection_subfield_values_are_those_root_wrote():
    """The values of ``four_v_LVs.pt`` against uproot's read of the whole collection."""
    pt = rntuple.open(LVS)["ntuple"].arrays(["four_v_LVs.pt"]).four_v_LVs.pt
    whole = uproot.open(LVS)["ntuple"].arrays(filter_name=["four_v_LVs"]).four_v_LVs
    assert str(pt.type) == str(whole.pt.type) and "var * float" in str(pt.type)
    assert pt.tolist() == whole.pt.tolist() and ak.sum(ak.num(pt)) > 0


def test_a_name_also_selects_subfields_of_that_name_as_uproot(tmp_path):
    """uproot's name filter matches names at any depth: ``"x"`` brings ``r.x`` and ``v.x`` too.
    The read of a few names keeps that (it looks at the other trees' names)."""
    path = str(tmp_path / "names.root")
    data = ak.Array(
        {
            "x": [1, 2],
            "y": [5, 6],
            "r": [{"x": 1.5, "y0": 2}, {"x": 3.5, "y0": 4}],
            "v": [[{"x": 1, "z": 2}], []],
            "t": [(1, 2.5), (3, 4.5)],
        }
    )
    with rntuple.recreate(path) as f:
        f["Events"] = data
    ours = rntuple.open(path)["Events"]
    theirs = uproot.open(path)["Events"]
    for names in (["x"], ["y"], ["r.x"], ["v.z", "y"], ["t.0"], ["t"], ["r", "x"]):
        _same(ours.arrays(filter_name=names), theirs.arrays(filter_name=names))
        _same(ours.arrays(names), _as_expressions(theirs.arrays(filter_name=names), names))
    assert ours.arrays(filter_name=["x"]).fields == ["x", "r", "v"]
    assert ours.arrays(["x"]).fields == ["x"]  # an expression is a name or a path, exactly


def test_a_few_names_of_a_wide_rntuple_build_their_trees_only():
    """PHYSLITE's ``EventData`` has 854 top-level fields: reading two of them (a name and a dotted
    path) builds neither the whole field tree nor the list of every path; the arrays are uproot's."""
    ours = rntuple.open(PHYSLITE)["EventData"]
    theirs = uproot.open(PHYSLITE)["EventData"]
    names = ["index_ref", "xTrigDecisionAux:.smk"]
    got = ours.arrays(names)
    assert ours._fields is None  # the whole tree was never built
    _same(got, theirs.arrays(filter_name=names))
    # the general way (a glob) gives the same, building the whole tree
    _same(ours.arrays(filter_name=["index_re?", "xTrigDecisionAux:.sm?"]), got)
    assert ours._fields is not None


def test_a_name_of_imported_nanoaod_as_filter_also_selects_the_collection_member_of_that_name():
    """ROOT's importer stores ``Muon_pt`` both as a top-level projected field and as a member of
    ``_collection15``: uproot's filter brings both, and so does ``filter_name``, building those
    two trees only; as an expression, ``Muon_pt`` is that field alone."""
    ours = rntuple.open(NANO)["Events"]
    theirs = uproot.open(NANO)["Events"]
    names = ["Muon_pt", "nMuon"]
    got = ours.arrays(filter_name=names)
    assert ours._fields is None
    assert got.fields == ["_collection15", "Muon_pt", "nMuon"]
    _same(got, theirs.arrays(filter_name=names))
    assert ours.arrays(["nMuon", "Muon_pt"]).fields == ["nMuon", "Muon_pt"]
    assert ours._fields is None


def test_a_cut_never_changes_which_fields_come_back():
    """Issue 27: with ``cut=`` the same fields as without, in the same order, only fewer entries."""
    nt = rntuple.open(NANO)["Events"]
    for kwargs in ({"expressions": ["nMuon", "Muon_pt"]}, {"filter_name": ["nMuon", "Muon_pt"]}):
        plain = nt.arrays(**kwargs)
        cut = nt.arrays(**kwargs, cut="nMuon > 0")
        assert cut.fields == plain.fields
        assert cut.tolist() == plain[plain.nMuon > 0].tolist()
        assert 0 < len(cut) < len(plain)
    assert nt.arrays(["Muon_pt", "nMuon"], cut="nMuon > 0", how="zip").fields == ["nMuon", "Muon"]
