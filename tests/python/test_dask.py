"""rntuple.dask: dask-awkward arrays of RNTuple datasets (rntuple.integrations.dask)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import rntuple
from conftest import write_in_clusters

dask = pytest.importorskip("dask")
dak = pytest.importorskip("dask_awkward")
uproot = pytest.importorskip("uproot")

from rntuple.integrations import dask as rdask  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
MUONS = DATA / "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"
NANO = DATA / "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root"


def _write(path: Path, seed: int, clusters: list[int]) -> Path:
    """A file of flat and jagged fields with the given cluster sizes (entries)."""
    rng = np.random.default_rng(seed)
    n = sum(clusters)
    counts = rng.integers(0, 4, n)
    events = ak.Array(
        {
            "x": np.arange(n, dtype=np.int64) + 1000 * seed,
            "y": rng.normal(size=n).astype(np.float32),
            "jets": ak.unflatten(rng.random(int(counts.sum())).astype(np.float32), counts),
            "rec": ak.zip({"a": np.arange(n, dtype=np.int32), "b": rng.random(n)}),
        }
    )
    write_in_clusters(path, "Events", events, clusters)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("dask")
    return [
        str(_write(d / "a.root", 1, [100, 100, 50])),
        str(_write(d / "b.root", 2, [300])),
        str(_write(d / "c.root", 3, [40, 40, 40, 40])),
    ]


def _eager(files: list[str]) -> ak.Array:
    return ak.concatenate([rntuple.open(f)["Events"].arrays() for f in files])


def test_values_and_form_equal_uproot_dask(files: list[str]) -> None:
    ours = rntuple.dask(files)
    theirs = uproot.dask({f: "Events" for f in files})
    assert ours.form == theirs.form
    assert ak.array_equal(ours.compute(), theirs.compute())
    assert ak.array_equal(ours.compute(), _eager(files))


@pytest.mark.parametrize("path", [MUONS, NANO], ids=["muons", "nanoaod-1680-fields"])
def test_real_files_equal_uproot_dask(path: Path) -> None:
    ours = rntuple.dask(str(path))
    theirs = uproot.dask({str(path): "Events"})
    assert ours.form == theirs.form
    assert ak.array_equal(ours.compute(), theirs.compute(), equal_nan=True)


def test_partitions_are_whole_clusters(files: list[str]) -> None:
    # a.root clusters [0,100) [100,200) [200,250); c.root 4 x 40
    array = rntuple.dask(files, step_size=100)
    assert array.divisions == (0, 100, 200, 250, 550, 630, 710)
    array = rntuple.dask(files, step_size=1000)
    assert array.divisions == (0, 250, 550, 710)
    assert ak.array_equal(array.compute(), _eager(files))
    # the plan itself: a cluster larger than the step stays whole
    assert rdask.plan_partitions([(0, 10), (10, 500), (510, 5)], 20) == [(0, 10), (10, 510), (510, 515)]


def test_each_cluster_read_once_per_pass(files: list[str]) -> None:
    rdask.reset_read_log()
    rntuple.dask(files, step_size=120).y.compute(scheduler="sync")
    ranges = sorted((e["location"], e["entry_start"], e["entry_stop"]) for e in rdask.read_log())
    clusters = []
    for f in files:
        for c in rntuple.open(f)["Events"].clusters:
            clusters.append((f, c.first_entry, c.first_entry + c.num_entries))
    # every task's range is a union of whole clusters and ranges do not overlap
    covered = []
    for loc, start, stop in ranges:
        inside = [c for c in clusters if c[0] == loc and start <= c[1] and c[2] <= stop]
        assert sum(c[2] - c[1] for c in inside) == stop - start
        covered += inside
    assert sorted(covered) == sorted(clusters)


def test_projection_reads_only_used_columns(files: list[str]) -> None:
    array = rntuple.dask(files)
    rdask.reset_read_log()
    total = ak.sum(array.jets[array.y > 0], axis=None).compute(scheduler="sync")
    log = rdask.read_log()
    assert len(log) == 3
    assert {tuple(e["columns"]) for e in log} == {("jets", "y")}
    expected = _eager(files)
    assert total == pytest.approx(ak.sum(expected.jets[expected.y > 0], axis=None))

    # a sub-field of a record: only rec.b is read
    rdask.reset_read_log()
    assert ak.array_equal(array.rec.b.compute(scheduler="sync"), expected.rec.b)
    assert {tuple(e["columns"]) for e in rdask.read_log()} == {("rec.b",)}

    # fewer pages and page bytes than reading everything (bytes_read also counts the
    # gaps the planner reads through when it merges nearby pages of a small file)
    rdask.reset_read_log()
    array.compute(scheduler="sync")
    everything = sum(e["bytes_needed"] for e in rdask.read_log())
    pages = sum(e["pages"] for e in rdask.read_log())
    rdask.reset_read_log()
    array.y.compute(scheduler="sync")
    assert sum(e["bytes_needed"] for e in rdask.read_log()) < everything / 2
    assert sum(e["pages"] for e in rdask.read_log()) < pages / 3


def test_projection_on_a_wide_nanoaod() -> None:
    array = rntuple.dask(str(NANO))
    rdask.reset_read_log()
    n = ak.num(array.Jet_pt, axis=1).compute(scheduler="sync")
    (entry,) = rdask.read_log()
    assert entry["columns"] == ["Jet_pt"]
    assert n.tolist() == ak.num(rntuple.open(NANO)["Events"].arrays(filter_name="Jet_pt").Jet_pt, axis=1).tolist()


def test_filter_name_and_library_np(files: list[str]) -> None:
    array = rntuple.dask(files, filter_name=["x", "jets"])
    assert array.fields == ["x", "jets"]
    arrays = rntuple.dask(files, filter_name=["x", "jets"], library="np", step_size=100)
    assert set(arrays) == {"x", "jets"}
    assert arrays["x"].chunks == ((100, 100, 50, 300, 80, 80),)
    expected = _eager(files)
    np.testing.assert_array_equal(arrays["x"].compute(), expected.x.to_numpy())
    jets = arrays["jets"].compute()
    assert jets.dtype == object and len(jets) == 710
    for got, want in zip(jets, expected.jets.tolist(), strict=True):
        np.testing.assert_array_equal(got, np.asarray(want, dtype=np.float32))


def test_open_files_false_and_given_steps(files: list[str]) -> None:
    lazy = rntuple.dask(files, open_files=False)
    assert lazy.npartitions == 3
    assert lazy.divisions == (None, None, None, None)
    assert ak.array_equal(lazy.compute(), _eager(files))
    steps = {f: {"object_path": "Events", "steps": [[0, 125], [125, 250]]} for f in files[:1]}
    given = rntuple.dask(steps)
    assert given.divisions == (0, 125, 250)
    assert ak.array_equal(given.compute(), _eager(files[:1]))
    # entry counts given: no footer read for those files, cut every step_size entries
    counts = {f: {"object_path": "Events", "num_entries": n} for f, n in zip(files, [250, 300, 160], strict=True)}
    rdask.reset_read_log()
    known = rntuple.dask(counts, step_size=200)
    assert known.divisions == (0, 200, 250, 450, 550, 710)
    assert ak.array_equal(known.compute(scheduler="sync"), _eager(files))


def test_io_function_pickles_small(files: list[str]) -> None:
    array = rntuple.dask(files)
    graph = dict(array.dask)
    payload = pickle.dumps(graph)
    assert len(payload) < 20_000
    # no handles (a File or RNTuple pickles as a call to reopen it), only locations and names
    assert b"_reopen" not in payload and b"_lib" not in payload
    assert os.path.abspath(files[0]).encode() in payload


def test_errors(tmp_path: Path, files: list[str]) -> None:
    with pytest.raises(FileNotFoundError):
        rntuple.dask(str(tmp_path / "missing.root"))
    with pytest.raises(ValueError, match="library"):
        rntuple.dask(files, library="pd")
    with pytest.raises(ValueError, match="step_size"):
        rntuple.dask(files, step_size=0)


def test_distributed_local_cluster(files: list[str]) -> None:
    distributed = pytest.importorskip("distributed")
    expected = _eager(files)
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(rdask.reset_read_log)
        for open_files in (True, False):
            array = rntuple.dask(files, open_files=open_files, step_size=100)
            got = client.compute(array.jets[array.y > 0]).result()
            assert ak.array_equal(got, expected.jets[expected.y > 0])
        logs = [e for log in client.run(rdask.read_log).values() for e in log]
        assert {tuple(e["columns"]) for e in logs} == {("jets", "y")}
        # open_files=True: 6 partitions; False: the first file (whose schema is read anyway)
        # cut at clusters (3) and one partition per other file (2); no range read twice
        assert len(logs) == 6 + 5
        assert len({(e["location"], e["entry_start"], e["entry_stop"]) for e in logs}) == 6 + 2


def test_file_urls(files: list[str]) -> None:
    """Locations are URLs too (the scheme picks the storage backend in the core)."""
    urls = ["file://" + f for f in files]
    rdask.reset_read_log()
    array = rntuple.dask(urls, step_size="1 kB")
    assert ak.array_equal(array.y.compute(scheduler="sync"), _eager(files).y)
    assert all(e["location"].startswith("file://") for e in rdask.read_log())
    # "1 kB" of storage per partition is less than any cluster here: one partition per cluster
    assert array.npartitions == 3 + 1 + 4


def test_http_urls_each_task_fetches_only_ranges(files: list[str], tmp_path: Path) -> None:
    """Over a real nginx: the values of the local read, and every GET a task sends is a range
    request (206), never the whole file."""
    from server_http import Nginx

    server = Nginx(str(tmp_path), files, "token")
    try:
        urls = [server.url(os.path.basename(f)) for f in files]
        rdask.reset_read_log()
        array = rntuple.dask(urls, step_size="1 kB")
        assert ak.array_equal(array.y.compute(scheduler="sync"), _eager(files).y)
        assert {e["location"] for e in rdask.read_log()} <= set(urls)
        gets = [line for line in server.log() if line.startswith("GET ")]
        assert gets, server.log()
        assert all('"bytes=' in line and line.endswith(" 206") for line in gets), gets
    finally:
        server.stop()


def _range_bytes(line: str) -> int:
    """Bytes asked for by one access-log line ``GET /f "bytes=a-b,c-d" 206``."""
    spec = line.split('"')[1].removeprefix("bytes=")
    return sum(int(b) - int(a) + 1 for a, b in (r.split("-") for r in spec.split(",")))


def test_graph_building_reads_metadata_in_at_most_two_requests_per_file(tmp_path: Path) -> None:
    """Building the graph of remote files (issue 13, start-up): per file a HEAD (size and version)
    and at most 2 GETs, all range requests, of a small part of the file (never its pages); the
    partitions still follow the clusters."""
    from server_http import Nginx

    d = tmp_path / "big"
    d.mkdir()
    local = [str(_write(d / f"f{i}.root", 10 + i, [40_000] * 4)) for i in range(3)]
    assert all(os.path.getsize(f) > 2_500_000 for f in local)  # more than head + tail + rest
    server = Nginx(str(tmp_path / "nginx"), local, "token")
    try:
        urls = [server.url(os.path.basename(f)) for f in local]
        array = rntuple.dask(urls, step_size=40_000)
        assert array.divisions == tuple(range(0, 480_001, 40_000))
        log = server.log()
        for f in local:
            name = "/" + os.path.basename(f)
            mine = [line for line in log if line.split(" ")[1] == name]
            gets = [line for line in mine if line.startswith("GET ")]
            assert 1 <= len(gets) <= 2, mine
            assert all(line.endswith(" 206") for line in gets), gets
            assert sum(_range_bytes(line) for line in gets) < os.path.getsize(f) / 4, gets
            assert len(mine) - len(gets) <= 1, mine  # the HEAD
    finally:
        server.stop()


def test_allow_missing(files: list[str], tmp_path: Path) -> None:
    """Files that do not exist, or lack the named RNTuple, are left out (as uproot.dask's
    allow_missing); without it they are errors, and none left is an error."""
    missing = str(tmp_path / "missing.root")
    with pytest.raises(FileNotFoundError):
        rntuple.dask([files[0], missing])
    array = rntuple.dask([missing, files[0], missing, files[2]], allow_missing=True, step_size=1000)
    assert array.divisions == (0, 250, 410)
    assert ak.array_equal(array.compute(scheduler="sync"), _eager([files[0], files[2]]))
    named = {files[0]: "Other", files[1]: "Events", missing: "Events", files[2]: "Other"}
    with pytest.raises(FileNotFoundError):
        rntuple.dask(named)
    with pytest.raises(KeyError):
        rntuple.dask({files[1]: "Events", files[2]: "Other"})
    only_b = rntuple.dask(named, allow_missing=True)
    assert ak.array_equal(only_b.compute(scheduler="sync"), _eager([files[1]]))
    with pytest.raises(FileNotFoundError):
        rntuple.dask({missing: "Events", files[0]: "Other"}, allow_missing=True)
