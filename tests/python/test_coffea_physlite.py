"""coffea's PHYSLITESchema on an ATLAS PHYSLITE RNTuple through ``rntuple.integrations.coffea``,
in coffea's eager, virtual and dask modes. coffea on uproot cannot read this file (its schema
expects a TTree's ``AnalysisElectronsAuxDyn.pt`` branches), so the judge is uproot reading the
RNTuple's own fields (``AnalysisElectronsAuxDyn:pt``)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import awkward as ak
import dask
import numpy as np
import pytest
import rntuple
import uproot
from coffea.nanoevents import PHYSLITESchema
from conftest import DATA
from rntuple.integrations import dask as rdask
from rntuple.integrations.coffea import NanoEventsFactory

# ATLAS DAOD_PHYSLITE written as an RNTuple by Athena (uproot's test file; 100 events).
PHYSLITE = str(Path(DATA) / "uproot-physlite-rntuple_v1-0-0-0.root")
MODES = ["eager", "virtual", "dask"]

# coffea's collection and member -> the RNTuple field (or record member) it must come from.
PLAIN = {
    ("Electrons", "pt"): "AnalysisElectronsAuxDyn:pt",
    ("Electrons", "eta"): "AnalysisElectronsAuxDyn:eta",
    ("Electrons", "charge"): "AnalysisElectronsAuxDyn:charge",
    ("Muons", "pt"): "AnalysisMuonsAuxDyn:pt",
    ("Muons", "eta"): "AnalysisMuonsAuxDyn:eta",
    ("Muons", "quality"): "AnalysisMuonsAuxDyn:quality",
    ("Jets", "pt"): "AnalysisJetsAuxDyn:pt",
    ("Jets", "m"): "AnalysisJetsAuxDyn:m",
    ("Jets", "EnergyPerSampling"): "AnalysisJetsAuxDyn:EnergyPerSampling",  # a list per jet
    ("Photons", "phi"): "AnalysisPhotonsAuxDyn:phi",
    ("TauJets", "pt"): "AnalysisTauJetsAuxDyn:pt",
    ("EventInfo", "eventNumber"): "EventInfoAuxDyn:eventNumber",  # one per event
    ("EventInfo", "mcEventWeights"): "EventInfoAuxDyn:mcEventWeights",
    ("TruthElectrons", "m"): "TruthElectronsAuxDyn:m",
    ("TruthElectrons", "pdgId"): "TruthElectronsAuxDyn:pdgId",
    # members of a record "XAux:" (not an "XAuxDyn:" field of its own)
    ("AntiKt4TruthDressedWZJets", "pt"): "AntiKt4TruthDressedWZJetsAux:.pt",
    ("xTrigDecision", "smk"): "xTrigDecisionAux:.smk",
}


def _events(mode: str, **kw):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # coffea warns when it cannot zip a collection
        return NanoEventsFactory.from_root(
            {PHYSLITE: "EventData"}, mode=mode, schemaclass=PHYSLITESchema, **kw
        ).events()


def _compute(mode: str, values: dict):  # type: ignore[no-untyped-def]
    return dask.compute(values)[0] if mode == "dask" else values


# Every RNTuple field the tests compare with ("X:.m": member m of record field X:).
JUDGED = [
    *PLAIN.values(),
    "AnalysisElectronsAuxDyn:phi",
    "InDetTrackParticlesAuxDyn:qOverP",
    "InDetTrackParticlesAuxDyn:theta",
    "AnalysisElectronsAuxDyn:trackParticleLinks",
    "GSFTrackParticlesAuxDyn:z0",
    "AnalysisMuonsAuxDyn:combinedTrackParticleLink",
    "CombinedMuonTrackParticlesAuxDyn:theta",
    "AnalysisMuonsAuxDyn:inDetTrackParticleLink",
    "InDetTrackParticlesAuxDyn:d0",
    "AnalysisElectronsAuxDyn:caloClusterLinks",
    "egammaClustersAuxDyn:calE",
    "TruthElectronsAuxDyn:e",
    "TruthBosonAuxDyn:e",
    "TrigConfKeys",
    "AnalysisJetsAuxDyn:eta",
]


@pytest.fixture(scope="module")
def judge() -> dict:  # type: ignore[type-arg]
    """The fields of ``JUDGED`` read by uproot, in one call (uproot takes seconds to open this
    RNTuple's 2,400 fields)."""
    tops = sorted({f.split(".")[0] for f in JUDGED})
    arrays = uproot.open(PHYSLITE)["EventData"].arrays(tops, how=dict)
    return {f: arrays[f.split(".")[0]][f.split(".")[1]] if "." in f else arrays[f] for f in JUDGED}


@pytest.mark.parametrize("mode", MODES)
def test_collections_equal_the_rntuple_fields(mode: str, judge: dict) -> None:  # type: ignore[type-arg]
    events = _events(mode)
    got = _compute(mode, {key: events[key[0]][key[1]] for key in PLAIN})
    want = judge
    for key, field in PLAIN.items():
        assert ak.to_list(got[key]) == ak.to_list(want[field]), key
    # the file has them: the comparison is not of empty lists
    assert ak.count(want["AnalysisElectronsAuxDyn:pt"]) > 20
    assert ak.count(want["AnalysisMuonsAuxDyn:eta"]) > 20
    assert ak.count(want["AnalysisJetsAuxDyn:pt"]) > 100


@pytest.mark.parametrize("mode", MODES)
def test_schema_methods(mode: str, judge: dict) -> None:  # type: ignore[type-arg]
    """What PHYSLITESchema adds: four-vectors, the track particles' momenta from qOverP and theta,
    the muon mass."""
    events = _events(mode)
    got = _compute(
        mode,
        {
            "electron px": events.Electrons.px,
            "track pt": events.InDetTrackParticles.pt,
            "muon mass": events.Muons.mass,
            "leading jets": events.Jets[:, :2].pt,
        },
    )
    want = judge
    px = want["AnalysisElectronsAuxDyn:pt"] * np.cos(want["AnalysisElectronsAuxDyn:phi"])
    np.testing.assert_allclose(ak.flatten(got["electron px"]), ak.flatten(px), rtol=1e-6)
    track_pt = np.abs(np.sin(want["InDetTrackParticlesAuxDyn:theta"]) / want["InDetTrackParticlesAuxDyn:qOverP"])
    np.testing.assert_allclose(ak.flatten(got["track pt"]), ak.flatten(track_pt), rtol=1e-6)
    assert ak.count(track_pt) > 50
    assert ak.to_list(ak.num(got["muon mass"])) == ak.to_list(ak.num(want["AnalysisMuonsAuxDyn:pt"]))
    np.testing.assert_allclose(ak.flatten(got["muon mass"]), 105.658)
    assert ak.to_list(got["leading jets"]) == ak.to_list(want["AnalysisJetsAuxDyn:pt"][:, :2])


def _linked(links: ak.Array, target: ak.Array) -> list:  # type: ignore[type-arg]
    """Element links followed by hand: per event, ``target[event][m_persIndex]``, None where
    ``m_persKey`` is 0 (an unset link)."""

    def follow(link, row):  # type: ignore[no-untyped-def]
        if isinstance(link, list):
            return [follow(x, row) for x in link]
        return None if link["m_persKey"] == 0 else row[link["m_persIndex"]]

    return [follow(event_links, row) for event_links, row in zip(ak.to_list(links), ak.to_list(target), strict=True)]


@pytest.mark.parametrize("mode", MODES)
def test_element_links(mode: str, judge: dict) -> None:  # type: ignore[type-arg]
    """PHYSLITESchema's cross-references, built from the RNTuple's ElementLink fields."""
    events = _events(mode)
    got = _compute(
        mode,
        {
            "electron tracks": events.Electrons.trackParticles.z0,  # a list of links per electron
            "muon track": events.Muons.trackParticle.theta,  # one link per muon
            "muon ID track": events.Muons.inDetTrackParticle.d0,
            "electron clusters": events.Electrons.caloClusters.calE,
        },
    )
    f = judge
    want = {
        "electron tracks": _linked(f["AnalysisElectronsAuxDyn:trackParticleLinks"], f["GSFTrackParticlesAuxDyn:z0"]),
        "muon track": _linked(
            f["AnalysisMuonsAuxDyn:combinedTrackParticleLink"], f["CombinedMuonTrackParticlesAuxDyn:theta"]
        ),
        "muon ID track": _linked(f["AnalysisMuonsAuxDyn:inDetTrackParticleLink"], f["InDetTrackParticlesAuxDyn:d0"]),
        "electron clusters": _linked(f["AnalysisElectronsAuxDyn:caloClusterLinks"], f["egammaClustersAuxDyn:calE"]),
    }
    for key, value in want.items():
        assert ak.to_list(got[key]) == value, key
        flat = ak.flatten(ak.Array(value), axis=None)
        assert ak.count(flat) > 10 and ak.sum(ak.is_none(flat, axis=-1)) < len(flat), key  # links resolve


def test_truth_particles_keep_mass_energy_computed(judge: dict) -> None:  # type: ignore[type-arg]
    """The one field left out: a truth collection's ``e`` beside its ``m`` (coffea's four-vectors
    refuse a record with both); the energy is computed from px, py, pz and the stored mass."""
    events = _events("eager")
    assert "m" in events.TruthElectrons.fields and "e" not in events.TruthElectrons.fields
    want = judge
    assert ak.to_list(events.TruthElectrons.mass) == ak.to_list(want["TruthElectronsAuxDyn:m"])
    np.testing.assert_allclose(
        ak.flatten(events.TruthElectrons.energy), ak.flatten(want["TruthElectronsAuxDyn:e"]), rtol=1e-5
    )
    np.testing.assert_allclose(ak.flatten(events.TruthBoson.energy), ak.flatten(want["TruthBosonAuxDyn:e"]), rtol=1e-5)
    assert ak.count(want["TruthElectronsAuxDyn:e"]) > 20


def test_interface_objects_left_out(judge: dict) -> None:  # type: ignore[type-arg]
    """``AnalysisElectrons`` (the xAOD interface objects, lists of empty records beside the aux
    store) would become a nameless member of Electrons: it is not given to coffea."""
    events = _events("eager")
    assert "" not in events.Electrons.fields
    assert "" not in events.egammaClusters.fields  # egammaClusters also has a field of its own
    assert {"TrigConfKeys", "BunchConfKey", "index_ref"} <= set(events.fields)  # not interface objects
    want = judge["TrigConfKeys"]
    assert ak.to_list(events.TrigConfKeys.m_smk) == ak.to_list(want.m_smk)


def test_virtual_mode_reads_only_what_is_touched(judge: dict) -> None:  # type: ignore[type-arg]
    log: list = []
    events = _events("virtual", access_log=log)
    assert log == []  # building the events reads nothing
    total = ak.sum(events.Muons.eta)
    assert {a.branch for a in log} == {"AnalysisMuonsAuxDyn.pt", "AnalysisMuonsAuxDyn.eta"}  # offsets, data
    assert total == pytest.approx(float(ak.sum(judge["AnalysisMuonsAuxDyn:eta"])))
    log.clear()
    _ = ak.to_list(events.Electrons.trackParticles.z0)
    assert {a.branch for a in log} == {
        "AnalysisElectronsAuxDyn.pt",  # the collection's offsets and event index
        "AnalysisElectronsAuxDyn.trackParticleLinks",
        "GSFTrackParticlesAuxDyn.phi",  # the target's offsets
        "GSFTrackParticlesAuxDyn.z0",
    }


def test_dask_mode_projects_fields(tmp_path: Path, judge: dict) -> None:  # type: ignore[type-arg]
    """The fields read are those touched, named as in the RNTuple; two files, two partitions."""
    second = str(tmp_path / "second.root")
    shutil.copy(PHYSLITE, second)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        events = NanoEventsFactory.from_root(
            {PHYSLITE: "EventData", second: "EventData"}, mode="dask", schemaclass=PHYSLITESchema
        ).events()
    assert events.npartitions == 2
    rdask.reset_read_log()
    (pt,) = dask.compute(events.Electrons.pt, scheduler="sync")
    assert [e["columns"] for e in rdask.read_log()] == [["AnalysisElectronsAuxDyn:pt"]] * 2
    want = judge["AnalysisElectronsAuxDyn:pt"]
    assert ak.to_list(pt) == ak.to_list(want) * 2
    rdask.reset_read_log()
    dask.compute(events.Muons.trackParticle.pt, scheduler="sync")
    assert rdask.read_log()[0]["columns"] == [
        "AnalysisMuonsAuxDyn:combinedTrackParticleLink",
        "AnalysisMuonsAuxDyn:pt",
        "CombinedMuonTrackParticlesAuxDyn:phi",
        "CombinedMuonTrackParticlesAuxDyn:qOverP",
        "CombinedMuonTrackParticlesAuxDyn:theta",
    ]
    with rntuple.open(PHYSLITE) as f:
        ntuple = f["EventData"]
        ntuple.arrays()
        whole = ntuple.io_stats()["bytes_needed"]
    # the pages of those fields (bytes_read also counts the gaps that reads of nearby pages bridge)
    assert 0 < rdask.read_log()[0]["bytes_needed"] < whole / 100


def test_entry_range(judge: dict) -> None:  # type: ignore[type-arg]
    events = _events("virtual", entry_start=10, entry_stop=40)
    assert len(events) == 30
    want = judge["AnalysisJetsAuxDyn:eta"][10:40]
    assert ak.to_list(events.Jets.eta) == ak.to_list(want)


ELECTRON_KINEMATICS = [f"AnalysisElectronsAuxDyn.{v}" for v in ("pt", "eta", "phi", "m")]


@pytest.mark.parametrize("mode", MODES)
def test_filter_name_on_the_ttree_names(mode: str, judge: dict) -> None:  # type: ignore[type-arg]
    """coffea's PHYSLITE examples choose branches with ``filter_name`` (``iteritems_options`` in
    eager and virtual modes, ``uproot_options`` in dask mode), on the TTree's names: the same
    names select the RNTuple's fields, and give the collection coffea's own tests expect of the
    TTree (pt, _eventindex, eta, phi, m)."""
    option = "uproot_options" if mode == "dask" else "iteritems_options"
    events = _events(mode, **{option: {"filter_name": lambda name: name in ELECTRON_KINEMATICS}})
    assert events.fields == ["Electrons"]
    assert events.Electrons.fields == ["pt", "_eventindex", "eta", "phi", "m"]
    pt = _compute(mode, {"pt": events.Electrons.pt})["pt"]
    assert ak.to_list(pt) == ak.to_list(judge["AnalysisElectronsAuxDyn:pt"])
    # a glob, as in coffea's examples: every AuxDyn field, no interface object, no Aux record
    events = _events(mode, **{option: {"filter_name": ["*AuxDyn*"]}})
    assert "xTrigDecision" not in events.fields and "TrigConfKeys" not in events.fields
    assert {"Electrons", "Muons", "Jets", "EventInfo"} <= set(events.fields)


@pytest.mark.parametrize("mode", MODES)
def test_jet_form_as_coffea_builds_it_from_the_ttree(mode: str) -> None:
    """The form coffea's own tests expect of the PHYSLITE TTree's jets (pt, eta, phi, m and the
    element link btaggingLink, which the TTree splits into sub-branches): the RNTuple's fields
    give the same collection."""
    names = [f"AnalysisJetsAuxDyn.{v}" for v in ("pt", "eta", "phi", "m", "btaggingLink")]
    option = "uproot_options" if mode == "dask" else "iteritems_options"
    events = _events(mode, **{option: {"filter_name": names}})
    form = events.form if mode == "dask" else events.layout.form
    assert form.fields == ["Jets"]
    jets = form.contents[0]
    assert jets.__class__.__name__ == "ListOffsetForm" and jets.offsets == "i64"
    record = jets.content
    assert record.fields == ["pt", "_eventindex", "eta", "phi", "m", "btaggingLink"]
    assert record.parameters == {"__record__": "Particle", "collection_name": "Jets"}
    assert [c.primitive for c in record.contents[:5]] == ["float32", "int64", "float32", "float32", "float32"]
    link = record.contents[5]
    assert link.fields == ["m_persKey", "m_persIndex"] and [c.primitive for c in link.contents] == ["uint32"] * 2
