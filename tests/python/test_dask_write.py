"""rntuple.dask_write: a dask-awkward array written as RNTuples by the workers (rntuple.integrations.dask_write)."""

from __future__ import annotations

import glob
import importlib.util
import os
import subprocess
import time
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import rntuple
from conftest import root_python, write_in_clusters

dask = pytest.importorskip("dask")
dak = pytest.importorskip("dask_awkward")
distributed = pytest.importorskip("distributed")
uproot = pytest.importorskip("uproot")

from rntuple.integrations import dask as rdask  # noqa: E402

AGC = Path(__file__).resolve().parents[2] / "examples" / "agc"


def _write(path: Path, seed: int, clusters: list[int]) -> str:
    rng = np.random.default_rng(seed)
    n = sum(clusters)
    counts = rng.integers(0, 4, n)
    events = ak.Array(
        {
            "x": np.arange(n, dtype=np.int64) + 1000 * seed,
            "y": rng.normal(size=n).astype(np.float32),
            "jets": ak.unflatten(rng.random(int(counts.sum())).astype(np.float32), counts),
            "rec": ak.zip({"a": np.arange(n, dtype=np.int32), "b": rng.random(n)}),
            "unused": rng.random(n),
        }
    )
    write_in_clusters(path, "Events", events, clusters)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("dask_write_in")
    return [_write(d / "a.root", 1, [100, 100, 50]), _write(d / "b.root", 2, [300]), _write(d / "c.root", 3, [80, 80])]


@pytest.fixture(scope="module")
def client():
    # allowed-failures 0: a killed worker fails its task at once (the kill test), no retry elsewhere
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def _skim(events):
    """A cut and a projection: the skim keeps x, jets and rec.b of the events with y > 0."""
    return events[events.y > 0][["x", "jets", "rec"]]


def _eager_skim(files: list[str]) -> ak.Array:
    return _skim(ak.concatenate([rntuple.open(f)["Events"].arrays() for f in files]))


def _parts(directory: Path | str, prefix: str = "part") -> list[str]:
    return sorted(glob.glob(os.path.join(directory, f"{prefix}-*.root")))


def test_skim_to_a_directory_from_the_workers(client, files: list[str], tmp_path: Path) -> None:
    expected = _eager_skim(files)
    client.run(rdask.reset_read_log)
    events = rntuple.dask(files, step_size=100)
    result = rntuple.dask_write(_skim(events), tmp_path / "skim")
    assert isinstance(result, rntuple.DaskWriteResult)
    n = events.npartitions
    assert result.paths == [str(tmp_path / "skim" / f"part-{i:05d}.root") for i in range(n)]
    assert result.paths == _parts(tmp_path / "skim")
    assert sum(result.entries) == result.num_entries == len(expected)
    assert result.bytes == [os.path.getsize(p) for p in result.paths]
    assert result.merged is None and result.parts_kept
    assert sorted(os.listdir(tmp_path / "skim")) == [os.path.basename(p) for p in result.paths]  # no temporaries
    # each part holds its partition's selected entries, in order
    for path, count in zip(result.paths, result.entries, strict=True):
        assert rntuple.open(path)["Events"].num_entries == count
    # the workers read only what the skim needs: the written fields and the cut's column
    logs = [e for log in client.run(rdask.read_log).values() for e in log]
    assert {tuple(e["columns"]) for e in logs} == {("jets", "rec.a", "rec.b", "x", "y")}
    # read back by rntuple.dask, concatenate, iterate and uproot: the eager skim
    back = rntuple.dask(_parts(tmp_path / "skim")).compute()
    assert ak.array_equal(back, expected)
    assert ak.array_equal(rntuple.concatenate(_parts(tmp_path / "skim")), expected)
    batches = list(rntuple.iterate(_parts(tmp_path / "skim"), step_size=50))
    assert ak.array_equal(ak.concatenate(batches), expected)
    theirs = uproot.concatenate({p: "Events" for p in _parts(tmp_path / "skim")})
    assert ak.array_equal(theirs, expected)


def test_merge_into_one_file_pages_copied(client, files: list[str], tmp_path: Path) -> None:
    expected = _eager_skim(files)
    events = rntuple.dask(files, step_size=100)
    merged = tmp_path / "skim.root"
    result = rntuple.dask_write(_skim(events), tmp_path / "parts", merge=merged, keep_parts=False)
    assert result.merged == str(merged) and not result.parts_kept
    assert _parts(tmp_path / "parts") == [] and os.listdir(tmp_path / "parts") == []
    assert result.merge.inputs == events.npartitions
    assert result.merge.entries == len(expected)
    assert result.merge.pages_recompressed == 0 and result.merge.pages_copied > 0
    assert ak.array_equal(rntuple.open(merged)["Events"].arrays(), expected)
    assert ak.array_equal(uproot.open(merged)["Events"].arrays(), expected)
    # keep_parts (the default): the parts stay beside the merged file
    again = rntuple.dask_write(_skim(events), tmp_path / "kept", merge=tmp_path / "kept.root")
    assert again.parts_kept and again.paths == _parts(tmp_path / "kept")
    assert ak.array_equal(rntuple.concatenate(again.paths), expected)


ROOT_READ = r"""
import json, sys
import ROOT
out = []
for path in sys.argv[1:]:
    reader = ROOT.RNTupleReader.Open("Events", path)
    x = reader.GetView["std::int64_t"]("x")
    jets = reader.GetView["std::vector<float>"]("jets")
    out.append([[int(x(i)) for i in range(reader.GetNEntries())],
                sum(len(jets(i)) for i in range(reader.GetNEntries()))])
    del x, jets, reader  # views before their reader
print("RESULT " + json.dumps(out))
"""


def test_root_reads_the_parts_and_the_merged_file(client, files: list[str], tmp_path: Path) -> None:
    import json

    expected = _eager_skim(files)
    events = rntuple.dask(files, step_size=100)
    result = rntuple.dask_write(_skim(events), tmp_path / "parts", merge=tmp_path / "merged.root")
    proc = subprocess.run(
        [root_python(), "-c", ROOT_READ, *result.paths, str(tmp_path / "merged.root")], capture_output=True, text=True
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, f"ROOT failed:\n{proc.stderr[-3000:]}"
    got = json.loads(lines[0][len("RESULT ") :])
    *parts, merged = got
    assert [x for xs, _ in parts for x in xs] == expected.x.tolist()
    assert sum(n for _, n in parts) == int(ak.sum(ak.num(expected.jets)))
    assert merged == [expected.x.tolist(), int(ak.sum(ak.num(expected.jets)))]


def test_compute_false_is_one_graph_with_other_outputs(client, files: list[str], tmp_path: Path) -> None:
    events = rntuple.dask(files, step_size=100)
    lazy = rntuple.dask_write(_skim(events), tmp_path / "skim", compute=False)
    assert isinstance(lazy, dak.Scalar)
    assert not os.path.exists(tmp_path / "skim") or os.listdir(tmp_path / "skim") == []
    result, total = dask.compute(lazy, ak.sum(events.x))
    assert total == sum(int(rntuple.open(f)["Events"].arrays().x.to_numpy().sum()) for f in files)
    assert result.paths == _parts(tmp_path / "skim") and result.num_entries == len(_eager_skim(files))


def test_empty_partitions_all_missing_values_and_unknown_divisions(tmp_path: Path) -> None:
    """An empty partition is a part of 0 entries; a partition whose optional values are all
    missing (computed as ``?unknown``) writes missing values of the collection's type; unknown
    divisions need nothing."""
    parts = [
        ak.Array({"x": np.array([0, 1, 2]), "maybe": [1.0, None, 3.0], "jets": [[1.0], [], [2.0, 3.0]]}),
        ak.Array({"x": [], "maybe": [], "jets": []}),  # empty, every type unknown
        ak.Array({"x": np.array([6, 7, 8]), "maybe": [None, None, None], "jets": [[], [4.0], []]}),
        ak.Array({"x": np.array([100]), "maybe": [5.0], "jets": [[5.0]]}),  # the cut empties it
    ]
    meta = ak.Array(parts[0].layout.to_typetracer(forget_length=True))
    array = dak.from_delayed([dask.delayed(p) for p in parts], meta=meta)
    skim = array[array.x != 100]
    assert skim.divisions == (None,) * 5
    assert str(parts[2].type.content) != str(parts[0].type.content)  # ?unknown vs ?float64
    result = rntuple.dask_write(skim, tmp_path, compute=False).compute(scheduler="sync")
    assert result.entries == [3, 0, 3, 0]
    assert result.paths == _parts(tmp_path)
    first = rntuple.open(result.paths[0])["Events"].arrays()
    for path in result.paths:
        assert rntuple.open(path)["Events"].arrays().type.content == first.type.content
    assert rntuple.open(result.paths[2])["Events"].arrays().maybe.tolist() == [None, None, None]
    expected = ak.concatenate([parts[0], parts[2]]).tolist()
    for back in (
        rntuple.concatenate(result.paths),
        rntuple.dask(result.paths).compute(scheduler="sync"),
        uproot.concatenate({p: "Events" for p in result.paths}),
    ):
        assert back.tolist() == expected
    merged = rntuple.dask_write(skim, tmp_path / "m", merge=tmp_path / "m.root", compute=False).compute(
        scheduler="sync"
    )
    assert merged.merge.entries == 6
    assert rntuple.open(tmp_path / "m.root")["Events"].arrays().tolist() == expected


def test_records_only_and_bad_arguments(tmp_path: Path) -> None:
    array = dak.from_awkward(ak.Array({"x": [1, 2, 3]}), npartitions=1)
    with pytest.raises(rntuple.InvalidArgumentError, match="records"):
        rntuple.dask_write(array.x, tmp_path)
    with pytest.raises(rntuple.InvalidArgumentError, match="dask_awkward.Array"):
        rntuple.dask_write(ak.Array({"x": [1]}), tmp_path)
    with pytest.raises(rntuple.InvalidArgumentError, match="merge="):
        rntuple.dask_write(array, tmp_path, keep_parts=False)
    with pytest.raises(rntuple.InvalidArgumentError, match="local destination"):
        rntuple.dask_write(array, "s3://bucket/skim", merge="s3://bucket/skim.root", keep_parts=False)
    with pytest.raises(rntuple.InvalidArgumentError, match="URL destination"):
        rntuple.dask_write(array, tmp_path, storage_options={"anon": True})
    with pytest.raises(rntuple.WrongTypeError, match="unknown write option"):
        rntuple.dask_write(array, tmp_path, page_sizes_of_my_dreams=1)
    with pytest.raises(rntuple.InvalidArgumentError, match="snappy"):
        rntuple.dask_write(array, tmp_path, compression="snappy")
    with pytest.raises(rntuple.InvalidArgumentError, match="prefix"):
        rntuple.dask_write(array, tmp_path, prefix="a/b")
    assert os.listdir(tmp_path) == []  # nothing written by a refused call


def test_writer_options_reach_every_part(tmp_path: Path) -> None:
    data = ak.Array({"x": np.arange(4000, dtype=np.int64), "v": np.linspace(0, 1, 4000)})
    array = dak.from_awkward(data, npartitions=2)
    result = rntuple.dask_write(
        array,
        tmp_path,
        name="Skim",
        prefix="skim",
        compression="lz4",
        approx_zipped_cluster_size="4 KiB",
        representations={"v": "Real32"},
        compute=False,
    ).compute(scheduler="sync")
    assert [os.path.basename(p) for p in result.paths] == ["skim-00000.root", "skim-00001.root"]
    for path in result.paths:
        ntuple = rntuple.open(path)["Skim"]
        assert len(ntuple.clusters) > 1
        assert rntuple.inspect(path, "Skim")["rntuples"][0]["compression"] == [404]  # lz4
    # Real32: the doubles are stored as floats
    back = rntuple.concatenate([f"{p}:Skim" for p in result.paths]).v.to_numpy()
    assert np.array_equal(back, data.v.to_numpy().astype(np.float32).astype(np.float64))
    assert not np.array_equal(back, data.v.to_numpy())


def test_part_names_sort_in_partition_order() -> None:
    from rntuple.integrations.dask_write import part_name

    assert part_name("part", 7) == "part-00007.root"
    names = [part_name("skim", i, 6) for i in (99_999, 100_000, 123_456)]
    assert names == sorted(names) == ["skim-099999.root", "skim-100000.root", "skim-123456.root"]


def test_skim_to_s3_from_the_workers_merged_there(client, files: list[str], tmp_path: Path, monkeypatch) -> None:
    """Parts uploaded to S3 (moto) by the workers, whose environment knows nothing of the store:
    ``storage_options`` carries the endpoint and credentials; the merge runs on a worker too. Read
    back over the URL, by uproot and by ROOT 6.40 from the downloaded objects."""
    import json

    from server_s3 import Moto

    (tmp_path / "moto").mkdir()
    server = Moto(str(tmp_path / "moto"))
    try:
        s3 = server.client()
        s3.create_bucket(Bucket="skims")
        settings = server.settings()
        expected = _eager_skim(files)
        events = rntuple.dask(files, step_size=100)
        n = events.npartitions
        result = rntuple.dask_write(
            _skim(events), "s3://skims/run1/", merge="s3://skims/skim.root", storage_options=settings
        )
        urls = [f"s3://skims/run1/part-{i:05d}.root" for i in range(n)]
        assert result.paths == urls and result.merged == "s3://skims/skim.root"
        assert sum(result.entries) == len(expected) and result.merge.pages_recompressed == 0
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="skims")["Contents"])
        assert keys == sorted([u[len("s3://skims/") :] for u in urls] + ["skim.root"])
        assert s3.list_multipart_uploads(Bucket="skims").get("Uploads", []) == []
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        assert ak.array_equal(rntuple.open("s3://skims/skim.root")["Events"].arrays(), expected)
        assert ak.array_equal(rntuple.concatenate(urls), expected)
        local = []
        for key in ("run1/part-00000.root", "skim.root"):
            path = tmp_path / key.replace("/", "-")
            s3.download_file("skims", key, str(path))
            local.append(str(path))
        assert ak.array_equal(uproot.open(local[1])["Events"].arrays(), expected)
        proc = subprocess.run([root_python(), "-c", ROOT_READ, *local], capture_output=True, text=True)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        assert lines, f"ROOT failed:\n{proc.stderr[-3000:]}"
        first, merged = json.loads(lines[0][len("RESULT ") :])
        assert first[0] == expected.x.tolist()[: result.entries[0]]
        assert merged == [expected.x.tolist(), int(ak.sum(ak.num(expected.jets)))]
        with pytest.raises(rntuple.InvalidArgumentError, match="environment variable"):
            rntuple.dask_write(_skim(events), "s3://skims/bad/", storage_options={"AWS_REGION": 1})
    finally:
        server.stop()


# --------------------------------------------------------------------------
# Failures: a part reads as complete only when it is


def _fault(marker: str, index: int, how: str):
    """Installed on the workers: the write of partition ``index`` writes a cluster, then dies
    (``kill``: SIGKILL of the worker process) or raises (``raise``), once (while ``marker`` exists)."""

    def install() -> None:
        import signal

        from rntuple.integrations import dask_write as m

        original = m._WritePart._write

        def _write(self, path, data):
            if f"{self.prefix}-{index:05d}.root" not in path or not os.path.exists(marker):
                return original(self, path, data)
            os.remove(marker)
            from rntuple._write import recreate

            with recreate(path) as f, f.mkrntuple(self.name, self.schema) as w:
                w.extend(data)
                w.commit_cluster()
                if how == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                raise RuntimeError("injected failure mid-write")

        m._WritePart._write = _write

    return install


def _complete_looking(directory: Path) -> list[str]:
    """Files of the directory that a reader takes as a complete RNTuple file."""
    out = []
    for name in sorted(os.listdir(directory)):
        try:
            rntuple.open(directory / name)["Events"]
        except Exception:
            continue
        out.append(name)
    return out


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_failed_task_leaves_no_complete_looking_part(client, files: list[str], tmp_path: Path, how: str) -> None:
    expected = _eager_skim(files)
    events = rntuple.dask(files, step_size=100)
    out = tmp_path / "skim"
    out.mkdir()
    (out / "part-00002.root").write_bytes(b"stale part of an earlier run")
    (out / "notes.txt").write_text("not ours")
    marker = tmp_path / "fault"
    marker.touch()
    client.run(_fault(str(marker), 2, how))
    with pytest.raises(Exception, match="injected failure" if how == "raise" else "KilledWorker|died|killed"):
        rntuple.dask_write(_skim(events), out)
    assert not marker.exists()  # the fault did happen
    # tasks of other partitions running when the graph failed still finish (or fail) on their own
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(
        n.endswith(".tmp") and not n.startswith(".part-00002.") for n in os.listdir(out)
    ):
        time.sleep(0.05)
    names = sorted(os.listdir(out))
    assert "part-00002.root" in names and (out / "part-00002.root").read_bytes() == b"stale part of an earlier run"
    leftovers = [n for n in names if n.endswith((".tmp", ".tmp.rntuple-journal"))]
    if how == "raise":
        assert leftovers == []  # the failed task removed its temporary file
    else:
        # the killed worker's temporary file stays: hidden, not *.root, refused by every reader
        assert leftovers and all(n.startswith(".part-00002.root.") for n in leftovers)
        tmp = next(n for n in leftovers if n.endswith(".tmp"))
        with pytest.raises(Exception, match="(?i)complete|placeholder|unfinished"):
            rntuple.open(out / tmp)
        with pytest.raises(Exception):  # noqa: B017 - uproot's error types vary
            uproot.open(out / tmp)["Events"]
    assert "part-00002.root" not in _complete_looking(out)
    # the retry (the same graph computed again) writes every part and replaces the stale one only;
    # first the scheduler forgets the failed run's tasks (else it answers with their old error)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
        time.sleep(0.05)
    result = rntuple.dask_write(_skim(events), out)
    assert ak.array_equal(rntuple.concatenate(result.paths), expected)
    assert sorted(os.listdir(out)) == sorted([*(os.path.basename(p) for p in result.paths), "notes.txt"])
    assert (out / "notes.txt").read_text() == "not ours"


def _example(name: str):
    spec = importlib.util.spec_from_file_location(f"agc_{name}", AGC / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_agc_skim_end_to_end(client, tmp_path: Path) -> None:
    """examples/agc/skim.py: read with projection, preselect, dask_write, read the skim: the
    analysis' histograms of the skim are those of the whole dataset."""
    generate, agc_skim = _example("generate"), _example("skim")
    files = generate.generate(tmp_path / "in", files=2, events=2000, cluster=1000, real=False)
    result = agc_skim.skim(files, str(tmp_path / "skim"), merge=str(tmp_path / "skim.root"), step_size=1000)
    assert 0 < result.num_entries < 4000
    full = agc_skim.histograms(files)
    for skimmed in (agc_skim.histograms(result.paths), agc_skim.histograms([str(tmp_path / "skim.root")])):
        for region in agc_skim.REGIONS:
            assert np.array_equal(full[region].values(), skimmed[region].values())
    assert sum(full["4j1b"].values()) > 0
