"""rntuple.iterate / rntuple.concatenate over many files, against per-file reads and uproot."""

from __future__ import annotations

import os

import awkward as ak
import numpy as np
import pytest
import rntuple
import uproot
from conftest import write_in_clusters
from rntuple._dataset import plan_steps

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
MULTI = os.path.join(DATA, "test_index_multicluster_rntuple_v1-0-0-0.root")

# (file, entries per cluster): three files, 3 + 2 + 4 clusters.
LAYOUT = [[40, 40, 20], [50, 30], [10, 25, 25, 40]]


def _events(seed: int, n: int) -> ak.Array:
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, n)
    return ak.Array(
        {
            "event": np.arange(seed * 1000, seed * 1000 + n, dtype=np.int64),
            "x": rng.normal(size=n),
            "jets": ak.unflatten(rng.normal(size=int(counts.sum())).astype(np.float32), counts),
        }
    )


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    root = tmp_path_factory.mktemp("dataset")
    paths = []
    for i, clusters in enumerate(LAYOUT):
        path = str(root / f"part{i}.root")
        data = _events(i + 1, sum(clusters))
        paths.append(write_in_clusters(path, "Events", data, clusters))
    return paths


def _per_file(paths: list[str], **kwargs: object) -> ak.Array:
    parts = []
    for p in paths:
        with rntuple.open(p) as f:
            parts.append(f["Events"].arrays(**kwargs))
    return ak.concatenate(parts)


def test_files_are_multi_cluster(dataset: list[str]) -> None:
    for path, clusters in zip(dataset, LAYOUT, strict=True):
        with rntuple.open(path) as f:
            assert [c.num_entries for c in f["Events"].clusters] == clusters


def test_concatenate_equals_per_file_reads_and_uproot(dataset: list[str]) -> None:
    ours = rntuple.concatenate(dataset)
    assert ours.to_list() == _per_file(dataset).to_list()
    theirs = uproot.concatenate([f"{p}:Events" for p in dataset])
    assert ours.to_list() == theirs.to_list()
    assert str(ours.type) == str(theirs.type)
    assert len(ours) == sum(map(sum, LAYOUT))


def test_forms_of_files(dataset: list[str], tmp_path: object) -> None:
    folder = os.path.dirname(dataset[0])
    want = rntuple.concatenate(dataset, filter_name="event")["event"].to_list()
    assert rntuple.concatenate(os.path.join(folder, "part*.root"), filter_name="event")["event"].to_list() == want
    assert rntuple.concatenate(os.path.join(folder, "part*.root:Events"), "event")["event"].to_list() == want
    assert rntuple.concatenate({p: "Events" for p in dataset}, "event")["event"].to_list() == want
    with pytest.raises(FileNotFoundError):
        rntuple.concatenate(os.path.join(folder, "nothing*.root"))


def test_steps_align_with_clusters(dataset: list[str]) -> None:
    # Whole clusters while they fit in 60 entries, never across a file:
    # 40 | 40+20 ; 50 | 30 ; 10+25+25 | 40.
    got = [(r.file_path, r.entry_start, r.entry_stop) for _, r in rntuple.iterate(dataset, step_size=60, report=True)]
    want = [
        (dataset[0], 0, 40),
        (dataset[0], 40, 100),
        (dataset[1], 0, 50),
        (dataset[1], 50, 80),
        (dataset[2], 0, 60),
        (dataset[2], 60, 100),
    ]
    assert got == want
    # A cluster bigger than the step is split into the fewest pieces, sizes differing by one at most.
    assert plan_steps([(0, 100, 0.0)], 0, 100, 30) == [(0, 25), (25, 50), (50, 75), (75, 100)]
    assert plan_steps([(0, 10, 0.0)], 0, 10, 3) == [(0, 3), (3, 6), (6, 8), (8, 10)]
    assert plan_steps([(0, 200, 0.0)], 0, 200, 150) == [(0, 100), (100, 200)]
    assert plan_steps([(0, 10, 0.0), (10, 10, 0.0)], 5, 15, 100) == [(5, 15)]


def test_step_size_in_bytes_uses_cluster_sizes(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "fixed.root")
    with rntuple.recreate(path) as f, f.mkrntuple("Events", {"x": np.zeros(0)}) as w:
        for n in (40, 40, 20):
            w.extend({"x": np.arange(n, dtype=np.float64)})
            w.commit_cluster()
    with rntuple.open(path) as f:
        sizes = f["Events"].cluster_sizes(["x"])
    # 8 bytes per entry of x in memory.
    assert [(a, n, round(b)) for a, n, b in sizes] == [(0, 40, 320), (40, 40, 320), (80, 20, 160)]
    steps = [len(b) for b in rntuple.iterate(path, "x", step_size="600 B")]
    assert steps == [40, 60]  # 320 + 320 > 600; 320 + 160 fits
    steps = [len(b) for b in rntuple.iterate(path, "x", step_size="700 B")]
    assert steps == [80, 20]
    steps = [len(b) for b in rntuple.iterate(path, "x", step_size="300 B")]
    assert steps == [20, 20, 20, 20, 20]  # a cluster over the step: the fewest equal pieces


def test_global_entry_range_and_report(dataset: list[str]) -> None:
    everything = _per_file(dataset)
    got = rntuple.concatenate(dataset, entry_start=70, entry_stop=190)
    assert got.to_list() == everything[70:190].to_list()
    reports = [r for _, r in rntuple.iterate(dataset, entry_start=70, entry_stop=190, report=True)]
    assert [(r.global_entry_start, r.global_entry_stop) for r in reports] == [(70, 100), (100, 180), (180, 190)]
    assert [(r.tree_entry_start, r.tree_entry_stop, r.global_offset) for r in reports] == [
        (70, 100, 0),
        (0, 80, 100),
        (0, 10, 180),
    ]
    assert reports[0].object_path == "Events" and reports[1].file_path == dataset[1]
    assert rntuple.concatenate(dataset, entry_start=-5).to_list() == everything[-5:].to_list()


def test_iterate_batches_match_uproot(dataset: list[str]) -> None:
    ours = ak.concatenate(list(rntuple.iterate(dataset, ["x", "jets"], step_size=45)))
    theirs = ak.concatenate(list(uproot.iterate([f"{p}:Events" for p in dataset], ["x", "jets"], step_size=45)))
    assert ours.to_list() == theirs.to_list()


def test_libraries_and_how(dataset: list[str]) -> None:
    np_ = rntuple.concatenate(dataset, ["event", "x"], library="np")
    assert np_["event"].tolist() == _per_file(dataset)["event"].to_list()
    pd_ = rntuple.concatenate(dataset, ["event", "x"], library="pd")
    assert list(pd_.index) == list(range(280))  # global entry numbers, as uproot's
    assert pd_["x"].tolist() == np_["x"].tolist()
    pa_ = rntuple.concatenate(dataset, "x", library="pa")
    assert pa_.column("x").to_pylist() == np_["x"].tolist()
    event, x = rntuple.concatenate(dataset, ["event", "x"], how=tuple)
    assert event.to_list() == np_["event"].tolist() and x.to_list() == np_["x"].tolist()


def test_expressions_and_cut(dataset: list[str]) -> None:
    everything = _per_file(dataset)
    got = rntuple.concatenate(dataset, ["x * 2", "len(jets)"], cut="event % 2 == 0")
    keep = everything[everything.event % 2 == 0]
    assert ak.fields(got) == ["x * 2", "len(jets)"]
    assert got["x * 2"].to_list() == (keep.x * 2).to_list()
    assert got["len(jets)"].to_list() == ak.num(keep.jets).to_list()
    with pytest.raises(rntuple.DrawError, match="no field 'nope'"):
        rntuple.concatenate(dataset, ["nope + 1"])


def test_aliases_and_global_pandas_index(dataset: list[str]) -> None:
    everything = _per_file(dataset)
    keep = everything[ak.num(everything.jets) > 1]
    aliases = {"njets": "len(jets)", "x2": "x * 2"}
    batches = list(rntuple.iterate(dataset, ["x2", "njets"], cut="njets > 1", aliases=aliases, step_size=30))
    got = ak.concatenate(batches)
    assert ak.fields(got) == ["x2", "njets"]
    assert got["x2"].to_list() == (keep.x * 2).to_list()
    assert got["njets"].to_list() == ak.num(keep.jets).to_list()
    frame = rntuple.concatenate(dataset, ["x2"], cut="njets > 1", aliases=aliases, library="pd")
    # entry numbers over the whole dataset (file 2 starts at 100, file 3 at 180)
    assert frame.index.tolist() == np.flatnonzero(ak.num(everything.jets) > 1).tolist()
    assert frame.index.max() >= 180


def test_bundled_multicluster_file_against_uproot() -> None:
    ours = rntuple.concatenate([MULTI, MULTI])
    theirs = uproot.concatenate([f"{MULTI}:ntuple", f"{MULTI}:ntuple"])
    assert ours.to_list() == theirs.to_list()
    with rntuple.open(MULTI) as f:
        clusters = f[f.rntuple_names()[0]].clusters
    assert len(clusters) > 1
    steps = [(r.entry_start, r.entry_stop) for _, r in rntuple.iterate(MULTI, step_size=1, report=True)]
    bounds = {c.first_entry for c in clusters}
    assert {a for a, _ in steps} >= bounds  # every cluster starts a step


def test_cluster_sizes_of_projected_fields_come_from_the_loaded_page_lists() -> None:
    """An imported NanoAOD's projected ``Jet_pt`` counts the columns it projects; the sizes need no
    read (the page lists were loaded on open)."""
    path = os.path.join(
        os.path.dirname(__file__),
        "..",
        "data",
        "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root",
    )
    with rntuple.open(path) as f:
        nt = f["Events"]
        nt.reset_io_stats()
        jet = nt.cluster_sizes(["Jet_pt"])
        jet_and_n = nt.cluster_sizes(["Jet_pt", "nJet"])
        assert nt.io_stats()["requests"] == 0
        n_jets = int(ak.sum(nt["nJet"].array()))
    # One cluster: 4 bytes per jet (float) and the collection's 8-byte index per entry...
    assert [b for _, _, b in jet] == [4.0 * n_jets + 8.0 * nt.num_entries]
    # ...which nJet projects too: a column shared by two fields counts once.
    assert jet_and_n == jet


@pytest.fixture(scope="module")
def differing(dataset: list[str], tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """part0 of the dataset, then a file with `event` and `y` (no `x`, no `jets`)."""
    path = str(tmp_path_factory.mktemp("differing") / "other.root")
    data = ak.Array({"event": np.arange(5, dtype=np.int64), "y": np.ones(5)})
    with rntuple.recreate(path) as f, f.mkrntuple("Events", data[:0]) as w:
        w.extend(data)
    return [dataset[0], path]


def test_union_with_expressions_and_cut(differing: list[str]) -> None:
    """union=True fills what a member lacks with None whether the fields are selected by filters,
    named as expressions or kept under a cut; only the fields asked for come back."""
    x = _per_file(differing[:1]).x.to_list()
    got = rntuple.concatenate(differing, ["event", "x"], union=True)
    assert str(got.type) == "105 * {event: int64, x: ?float64}"
    assert got.x.to_list() == x + [None] * 5
    assert rntuple.concatenate(differing, "event", union=True).fields == ["event"]
    only_y = rntuple.concatenate(differing, "y", union=True)
    assert only_y.fields == ["y"] and only_y.y.to_list() == [None] * 100 + [1.0] * 5
    cut = rntuple.concatenate(differing, cut="event % 2 == 0", union=True)
    assert cut.fields == ["event", "x", "jets", "y"] and len(cut) == 50 + 3
    assert cut.y.to_list() == [None] * 50 + [1.0] * 3
    named_cut = rntuple.concatenate(differing, ["x"], cut="event < 1002", union=True)
    assert named_cut.fields == ["x"] and named_cut.x.to_list() == x[:2] + [None] * 5
    # the same through iterate, batch by batch
    batches = list(rntuple.iterate(differing, ["event", "y"], union=True, step_size=1000))
    assert [b.fields for b in batches] == [["event", "y"]] * 2
    # a formula must find its fields in every member
    with pytest.raises(rntuple.DrawError, match="no field 'x'"):
        rntuple.concatenate(differing, ["x * 2"], union=True)


def test_allow_missing_leaves_out_what_is_not_there(dataset: list[str], tmp_path: object) -> None:
    missing = os.path.join(str(tmp_path), "missing.root")
    expected = _per_file(dataset[:2])
    with pytest.raises(FileNotFoundError):
        rntuple.concatenate([dataset[0], missing, dataset[1]])
    got = rntuple.concatenate([dataset[0], missing, f"{dataset[1]}:Events"], allow_missing=True)
    assert ak.array_equal(got, expected)
    # a file without the named RNTuple is left out too; a glob matching nothing as well
    got = rntuple.concatenate(
        {
            dataset[0]: "Events",
            dataset[2]: "Other",
            os.path.join(str(tmp_path), "*.root"): "Events",
            dataset[1]: "Events",
        },
        allow_missing=True,
    )
    assert ak.array_equal(got, expected)
    assert rntuple.chain([missing, dataset[1]], allow_missing=True).num_entries == 80
    with pytest.raises(FileNotFoundError, match="none of the input files"):
        rntuple.concatenate([missing], allow_missing=True)
    with pytest.raises(FileNotFoundError, match="none of the 1 files"):
        rntuple.concatenate({dataset[0]: "Other"}, allow_missing=True)
