"""The Analysis Grand Challenge example (examples/agc): three ways, identical histograms."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("dask_awkward")
pytest.importorskip("hist")
distributed = pytest.importorskip("distributed")
uproot = pytest.importorskip("uproot")

import rntuple  # noqa: E402
from rntuple.integrations import dask as rdask  # noqa: E402

AGC = Path(__file__).resolve().parents[2] / "examples" / "agc"


def _load(name: str) -> ModuleType:
    """examples/agc/NAME.py as a module (its names are too common to put the folder on sys.path)."""
    spec = importlib.util.spec_from_file_location(f"agc_{name}", AGC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


analysis = _load("analysis")
generate = _load("generate")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return generate.generate(tmp_path_factory.mktemp("agc"), files=3, events=3000, cluster=1000, real=True)


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def test_generator_is_deterministic(tmp_path: Path) -> None:
    generate.write_file(tmp_path / "a.root", 500, seed=3, cluster_entries=200)
    generate.write_file(tmp_path / "b.root", 500, seed=3, cluster_entries=200)
    a = rntuple.open(tmp_path / "a.root")["Events"].arrays()
    b = rntuple.open(tmp_path / "b.root")["Events"].arrays()
    assert a.tolist() == b.tolist()
    assert [c.num_entries for c in rntuple.open(tmp_path / "a.root")["Events"].clusters] == [200, 200, 100]


def test_three_ways_identical(files: list[str], client) -> None:  # type: ignore[no-untyped-def]
    client.run(rdask.reset_read_log)
    ours = analysis.run_dask(files, client, step_size=1000)
    eager = analysis.run_eager(files, step_size=700)
    theirs = analysis.run_uproot(files, client)
    for region in analysis.REGIONS:
        counts = ours[region].values()
        assert counts.sum() > 50, region  # the selection keeps events in both regions
        np.testing.assert_array_equal(counts, eager[region].values())
        np.testing.assert_array_equal(counts, theirs[region].values())

    # each cluster of each file read exactly once in the pass, only the analysis' columns
    logs = [e for log in client.run(rdask.read_log).values() for e in log]
    assert {tuple(e["columns"]) for e in logs} == {tuple(sorted(analysis.COLUMNS))}
    read = sorted((e["location"], e["entry_start"], e["entry_stop"]) for e in logs)
    clusters = sorted(
        (os.path.abspath(f), c.first_entry, c.first_entry + c.num_entries)
        for f in files
        for c in rntuple.open(f)["Events"].clusters
    )
    assert read == clusters
    size = sum(os.path.getsize(f) for f in files)
    needed = sum(e["bytes_needed"] for e in logs) / size
    read = sum(e["bytes_read"] for e in logs) / size
    print(f"AGC: pages' bytes / file size = {needed:.3f}, bytes read (gaps merged) / file size = {read:.3f}")
    assert 0 < needed < 0.8
    assert needed <= read <= 1


def test_coffea_nanoevents_from_our_arrays(files: list[str]) -> None:
    """coffea's NanoEvents built from arrays rntuple read (eagerly, ``from_preloaded``)."""
    pytest.importorskip("coffea")
    import awkward as ak
    from coffea.nanoevents import NanoAODSchema, NanoEventsFactory

    class Columns(dict):  # from_preloaded wants a mapping with .metadata
        metadata: dict

    for path in (files[0], files[-1]):  # generated, and the real NanoAOD converted
        events = rntuple.open(path)["Events"].arrays()
        # RNTupleImporter's untyped collections (_collectionN) duplicate the projected
        # Jet_pt... fields and are not NanoAOD branches: leave them out
        source = Columns({f: events[f] for f in events.fields if not f.startswith("_collection")})
        source.metadata = {"uuid": path, "num_rows": len(events), "object_path": "Events"}
        nano = NanoEventsFactory.from_preloaded(source, schemaclass=NanoAODSchema).events()
        assert ak.array_equal(nano.Jet.pt, events.Jet_pt)
        assert ak.sum(nano.Jet.isTightLeptonVeto) == ak.sum((events.Jet_jetId & 4) != 0)
        assert ak.array_equal(nano.Muon.tightId, events.Muon_tightId)
        # a NanoEvents method: the four-vector sum of the first two jets
        two = nano.Jet[ak.num(nano.Jet) >= 2]
        pair = two[:, 0] + two[:, 1]
        assert len(pair.mass) == ak.sum(ak.num(events.Jet_pt) >= 2)
