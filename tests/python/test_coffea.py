"""coffea's NanoEvents on rntuple's reader (``rntuple.integrations.coffea``) in coffea's eager,
virtual and dask modes, equal to coffea on uproot; the AGC example as a coffea processor."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import awkward as ak
import dask
import numpy as np
import pytest
import rntuple
from coffea.nanoevents import BaseSchema, NanoAODSchema
from coffea.nanoevents import NanoEventsFactory as CoffeaFactory
from conftest import DATA
from rntuple.integrations import dask as rdask
from rntuple.integrations.coffea import NanoEventsFactory

TTREE = str(Path(DATA) / "nanoAOD_2015_CMS_Open_Data_ttbar.root")
AGC = Path(__file__).resolve().parents[2] / "examples" / "agc"

# What is compared: NanoEvents collections and their methods (cross-references, four-vectors).
QUANTITIES = {
    "Jet.pt": lambda e: e.Jet.pt,
    "Jet.eta": lambda e: e.Jet.eta,
    "Muon.pt": lambda e: e.Muon.pt,
    "Muon.tightId": lambda e: e.Muon.tightId,
    "Electron.cutBased": lambda e: e.Electron.cutBased,
    "MET.pt": lambda e: e.MET.pt,
    "nJet": lambda e: ak.num(e.Jet),
    "dijet mass": lambda e: (e.Jet[:, :2].sum(axis=1)).mass,
    "jet's matched muon pt": lambda e: e.Jet.matched_muons.pt,
}


@pytest.fixture(scope="module")
def nano(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bundled NanoAOD TTree converted to an RNTuple, in two clusters (so dask mode has two partitions)."""
    path = str(tmp_path_factory.mktemp("coffea") / "nano.root")
    rntuple.convert(
        f"{TTREE}:Events", path, name="Events", progress=False,
        approx_zipped_cluster_size=150_000, page_buffer_budget="16 MiB",
    )  # fmt: skip
    return path


def _theirs(mode: str, schema=NanoAODSchema):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CoffeaFactory.from_root({TTREE: "Events"}, mode=mode, schemaclass=schema).events()


def _ours(path: str, mode: str, schema=NanoAODSchema, **kw):  # type: ignore[no-untyped-def]
    if mode == "dask":
        kw.setdefault("step_size", 100)  # one partition per cluster
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return NanoEventsFactory.from_root({path: "Events"}, mode=mode, schemaclass=schema, **kw).events()


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert ak.to_list(a) == ak.to_list(b)


@pytest.mark.parametrize("mode", ["eager", "virtual", "dask"])
def test_nanoaod_schema_equals_coffea_on_uproot(nano: str, mode: str) -> None:
    ours, theirs = _ours(nano, mode), _theirs(mode)
    if mode == "dask":
        assert ours.npartitions == 2
        ours_values = dask.compute({k: f(ours) for k, f in QUANTITIES.items()})[0]
        theirs_values = dask.compute({k: f(theirs) for k, f in QUANTITIES.items()})[0]
    else:
        assert type(ours).__name__ == "NanoEventsArray"
        ours_values = {k: f(ours) for k, f in QUANTITIES.items()}
        theirs_values = {k: f(theirs) for k, f in QUANTITIES.items()}
        assert sorted(ours.fields) == sorted(theirs.fields)
    for k in QUANTITIES:
        _same(ours_values[k], theirs_values[k])


def test_virtual_mode_reads_only_what_is_touched(nano: str) -> None:
    log: list = []
    events = NanoEventsFactory.from_root(
        {nano: "Events"}, mode="virtual", schemaclass=NanoAODSchema, access_log=log
    ).events()
    assert log == []  # nothing read to build the events
    _ = ak.sum(events.Muon.pt)
    assert {a.branch for a in log} == {"Muon_pt", "nMuon"}


def test_dask_mode_projects_columns(nano: str) -> None:
    events = _ours(nano, "dask")
    rdask.reset_read_log()
    total = ak.sum(events.Muon.pt).compute(scheduler="sync")
    log = rdask.read_log()
    assert len(log) == 2  # one read per partition
    assert {tuple(e["columns"]) for e in log} == {("Muon_pt", "nMuon")}
    everything = rntuple.open(nano)["Events"].arrays(filter_name=["Muon_pt"])
    assert total == pytest.approx(float(ak.sum(everything.Muon_pt)))
    # the bytes read are a small part of the file's
    with rntuple.open(nano) as f:
        nt = f["Events"]
        nt.arrays()
        whole = nt.io_stats()["bytes_read"]
    assert 0 < sum(e["bytes_read"] for e in log) < whole / 20


def test_base_schema_all_modes(nano: str) -> None:
    want = ak.to_list(_theirs("eager", BaseSchema).Muon_pt)
    for mode in ("eager", "virtual"):
        assert ak.to_list(_ours(nano, mode, BaseSchema).Muon_pt) == want
    assert ak.to_list(_ours(nano, "dask", BaseSchema).Muon_pt.compute()) == want


def test_entry_range(nano: str) -> None:
    ours = _ours(nano, "virtual", entry_start=5, entry_stop=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = CoffeaFactory.from_root({TTREE: "Events"}, entry_start=5, entry_stop=20).events()
    assert len(ours) == 15
    _same(ours.Jet.pt, theirs.Jet.pt)


def _load_agc(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"agc_{name}", AGC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_agc_as_a_coffea_processor(tmp_path: Path) -> None:
    """examples/agc/coffea_processor.py on NanoEvents from our reader gives analysis.py's histograms
    (on generated AGC events: the bundled NanoAOD's 200 events select none)."""
    proc_mod = _load_agc("coffea_processor")
    analysis = _load_agc("analysis")
    generate = _load_agc("generate")
    path = str(tmp_path / "agc.root")
    generate.write_file(path, 3000, seed=2, cluster_entries=1000)
    want = analysis.run_eager([path])
    for mode in ("virtual", "dask"):
        got = proc_mod.run(path, mode=mode)
        for region in analysis.REGIONS:
            np.testing.assert_array_equal(got[region].values(), want[region].values())
            assert got[region].values().sum() > 10, region
