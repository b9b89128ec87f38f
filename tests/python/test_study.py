"""`rntuple study layout` / `knobs` (issue 14): a small matrix and a small sweep, their files read
back by our reader and by ROOT 6.40, the cold read shown to start from storage, the Pareto front and
the recommendation on hand-made inputs, the report files, and the usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import awkward as ak
import numpy as np
import pytest
import rntuple
import rntuple.study as study
from conftest import canon_diff
from rntuple.study import _measure
from rntuple.study._data import generate
from test_write import ours_dumps, root_dumps

SMALL_AXES = {
    "model": ["aos", "soa", "rsoa"],
    "rows": ["event", "element"],
    "split": ["one", "product"],
    "rois": ["nested"],
}
EVENTS = 24


def _flat(array) -> np.ndarray:
    return ak.to_numpy(ak.flatten(array, axis=None))


def _figures(path: str) -> dict[str, float]:
    """Counts and sums of the values in a layout file, whatever its layout (read with our reader)."""
    out = {"hits": 0, "samples": 0, "sum_peak_amplitude": 0.0, "sum_samples": 0.0}
    with rntuple.open(path) as f:
        for name in f.rntuple_names():
            a = f[name].arrays()
            for field in a.fields:
                col = a[field]
                if field in ("hits", "hits_peak_amplitude") or (name == "Hits" and field == "peak_amplitude"):
                    v = _flat(col["peak_amplitude"] if field == "hits" else col)
                    out["hits"] += len(v)
                    out["sum_peak_amplitude"] += float(v.astype(np.float64).sum())
                if field in ("wires", "wires_rois") or (name == "Wires" and field in ("rois", "data")):
                    rois = col["rois"] if field == "wires" else col
                    v = _flat(rois if field == "data" else rois["data"])
                    out["samples"] += len(v)
                    out["sum_samples"] += float(v.astype(np.float64).sum())
    return out


@pytest.fixture(scope="module", autouse=True)
def reproducible():
    """Files with fixed dates (the children inherit it): the same bytes every run, so ROOT's dumps
    of them are cached by content."""
    old = os.environ.get("SOURCE_DATE_EPOCH")
    os.environ["SOURCE_DATE_EPOCH"] = "1700000000"
    yield
    if old is None:
        del os.environ["SOURCE_DATE_EPOCH"]
    else:
        os.environ["SOURCE_DATE_EPOCH"] = old


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("layout"))
    return study.layout(out, events=EVENTS, threads=1, runs=1, seed=3, keep_files=True, axes=SMALL_AXES)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return study.sample(str(tmp_path_factory.mktemp("src") / "dune.root"), events=60, seed=5)


SWEEP = [
    {"label": "zstd default", "compression": "zstd:5"},
    {
        "label": "lz4 small clusters",
        "compression": "lz4",
        "approx_zipped_cluster_size": "64 KiB",
        "max_unzipped_page_size": "16 KiB",
    },
    {"label": "unsplit", "compression": "zlib:1", "unsplit": True},
]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, source):
    out = str(tmp_path_factory.mktemp("knobs"))
    return study.knobs(source + ":Events", out, optimize="sparse", runs=1, keep_files=True, sweep=SWEEP)


def test_small_matrix_measures_every_sensible_cell(matrix):
    ran = {c["id"] for c in matrix["cells"]}
    assert ran == {
        "aos-event-one-nested-t1",
        "aos-event-product-nested-t1",
        "soa-event-one-nested-t1",
        "soa-event-product-nested-t1",
        "rsoa-event-one-nested-t1",
        "rsoa-event-product-nested-t1",
        "aos-element-product-nested-t1",
    }
    reasons = {(s["model"], s["rows"], s["split"]): s["skip"] for s in matrix["skipped"]}
    assert "different row counts" in reasons[("aos", "element", "one")]
    assert "AOS and SOA are the same columns" in reasons[("soa", "element", "product")]
    assert "AOS and SOA are the same columns" in reasons[("rsoa", "element", "product")]
    for c in matrix["cells"]:
        assert c["file_size"] > 10_000 and c["write_events_per_second"] > 0
        assert c["write_peak_rss"] >= c["write_rss_before"] > 0
        assert c["cold_read_seconds"] > 0 and c["warm_read_seconds"] > 0
    names = {c["id"]: c["rntuples"] for c in matrix["cells"]}
    assert names["aos-event-one-nested-t1"] == ["Events"]
    assert names["aos-element-product-nested-t1"] == ["Header", "Hits", "Wires"]


def test_matrix_files_hold_the_generated_values(matrix):
    expected = generate(EVENTS, seed=3).checksums()
    for c in matrix["cells"]:
        got = _figures(c["file"])
        assert got["hits"] == expected["hits"], c["id"]
        assert got["samples"] == expected["samples"], c["id"]
        assert got["sum_peak_amplitude"] == pytest.approx(expected["sum_peak_amplitude"], rel=1e-9), c["id"]
        assert got["sum_samples"] == pytest.approx(expected["sum_samples"], rel=1e-9), c["id"]


def _same_through_root(jobs, tmp_path):
    ours = ours_dumps(jobs, str(tmp_path))
    theirs = root_dumps(jobs)
    for job in jobs:
        assert isinstance(ours[job], list), ours[job]
        assert isinstance(theirs[job], list), theirs[job]
        assert len(ours[job]) > 0
        diff = canon_diff(ours[job], theirs[job], nan_equal=True)
        assert diff is None, f"{job}: {diff}"


def test_root_soa_fields_are_the_aos_columns_under_soa_classes(matrix):
    """The ``rsoa`` model (ROOT's RSoAField) writes each product as an SoA field (flag 0x08) whose
    record holds the AOS model's members: the same columns as the AOS cell, the same values."""
    cells = {c["id"]: c for c in matrix["cells"]}
    for split in ("one", "product"):
        aos, rsoa = cells[f"aos-event-{split}-nested-t1"], cells[f"rsoa-event-{split}-nested-t1"]
        with rntuple.open(aos["file"]) as fa, rntuple.open(rsoa["file"]) as fr:
            for name in rsoa["rntuples"]:
                ours, theirs = fr[name], fa[name]
                for field in ours.fields:
                    if field.name in ("hits", "wires"):
                        assert field.type_name == {"hits": "recob::HitSoA", "wires": "recob::WireSoA"}[field.name]
                        assert [c.type_name for c in field.children] == [f"recob::{field.name[:-1].title()}"]
                shape = [(c.type, c.bits, c.field_id) for c in ours.columns]
                assert shape == [(c.type, c.bits, c.field_id) for c in theirs.columns], name
                assert ours.arrays().tolist() == theirs.arrays().tolist(), name


def test_every_file_reads_the_same_through_root(matrix, sweep, tmp_path):
    """Every RNTuple of every file the matrix and the sweep wrote: our dump equals ROOT's. (Not the
    ``rsoa`` cells: ROOT 6.40 does not read SoA fields, see test_soa.py and the next test.)"""
    jobs = [(c["file"], name) for c in matrix["cells"] for name in c["rntuples"] if c["model"] != "rsoa"]
    jobs += [(c["file"], "Events") for c in sweep["cells"]]
    _same_through_root(jobs, tmp_path)


def test_threads_fill_the_contexts_of_a_parallel_writer(tmp_path):
    """The threads axis: with 2 threads each RNTuple is filled by 2 fill contexts on 2 threads, each
    taking every other batch, so the file's entries are the events in an order no single writer gives;
    the values are the same as with 1 thread, and ROOT reads the file as we do."""
    axes = {"model": ["aos"], "rows": ["event"], "split": ["product"], "rois": ["nested"]}
    r = study.layout(str(tmp_path), events=EVENTS, threads=2, runs=1, seed=3, keep_files=True, axes=axes)
    cells = {c["threads"]: c for c in r["cells"]}
    assert sorted(cells) == [1, 2]
    assert cells[1]["fill_contexts"] == 1 and cells[2]["fill_contexts"] == 2
    for name, filled in cells[2]["entries_per_context"].items():
        assert len(filled) == 2 and min(filled) > 0, (name, filled)
        assert cells[1]["entries_per_context"][name] == [sum(filled)]
    expected = generate(EVENTS, seed=3).checksums()
    events = {}
    for t, c in cells.items():
        assert _figures(c["file"])["sum_samples"] == pytest.approx(expected["sum_samples"], rel=1e-9)
        with rntuple.open(c["file"]) as f:
            events[t] = np.asarray(f["Header"].arrays()["event"]).tolist()
            assert sum(c["entries_per_context"]["Header"]) == f["Header"].num_entries == EVENTS
            assert len(f["Header"].clusters) == c["fill_contexts"]  # one cluster per context at this size
    assert events[1] == sorted(events[1])
    assert sorted(events[2]) == events[1] and events[2] != events[1]  # batches of two contexts, by cluster
    _same_through_root([(cells[2]["file"], name) for name in cells[2]["rntuples"]], tmp_path)


def test_cold_read_starts_from_storage(matrix, tmp_path):
    path = matrix["cells"][0]["file"]
    with open(path, "rb") as fh:
        fh.read()
    resident, total = _measure.resident_pages(path)
    assert total == -(-os.path.getsize(path) // os.sysconf("SC_PAGE_SIZE")) and resident == total
    assert _measure.drop_cache(path) == 0
    assert _measure.resident_pages(path) == (0, total)
    # The measuring child checks the same before every cold read, and the read brings pages back.
    for c in matrix["cells"]:
        assert c["resident_before_cold"] == [0], c["id"]
        assert c["resident_after_cold"][0] > 0, c["id"]
    r = _measure.run_child({"task": "read", "path": path, "reads": {"Events": []}, "runs": 2})
    assert r["resident_before"] == [0, 0]
    assert min(r["resident_after"]) > 0 and r["file_pages"] == total


def test_peak_rss_is_the_childs_own(matrix):
    """A child's peak RSS is its own, not the parent's at the time it started it (Linux carries
    ``ru_maxrss`` over fork and exec)."""
    ballast = np.ones(400 * 2**20 // 8)  # 400 MiB in the parent
    path = matrix["cells"][0]["file"]
    r = _measure.run_child({"task": "read", "path": path, "reads": {"Events": ["hits.peak_amplitude"]}, "runs": 1})
    assert ballast.sum() > 0
    assert 0 < r["peak_rss"] < 300 * 2**20


def test_small_sweep(sweep, source):
    cells = {c["label"]: c for c in sweep["cells"]}
    assert list(cells) == [s["label"] for s in SWEEP]
    for c in cells.values():
        assert c["entries"] == 60 and c["sparse_entries"] == 1
        assert c["file_size"] > 0 and c["read_seconds"] > 0 and c["sparse_seconds"] > 0
        assert c["resident_before_cold"] == [0]
    # Small clusters: the sparse read of one entry reads less than the whole file.
    small = cells["lz4 small clusters"]
    assert small["sparse_bytes_read"] < 0.5 * small["file_size"]
    assert sweep["recommendation"] == sweep["recommendations"]["sparse"]
    assert set(sweep["pareto_front"]) <= set(cells) and sweep["pareto_front"]
    with rntuple.open(source) as f:
        want = f["Events"].arrays()
    for c in cells.values():
        with rntuple.open(c["file"]) as f:
            nt = f["Events"]
            assert ak.array_equal(nt.arrays(), want), c["label"]
            kinds = {col.type for col in nt.columns}
        # Numbers get split encodings (ROOT's default) unless the setting asks for none.
        assert any(k.startswith("Split") for k in kinds) == (c["label"] != "unsplit"), (c["label"], kinds)


def test_report_files(sweep, matrix):
    for result in (sweep, matrix):
        report = result["report"]
        with open(report["json"]) as fh:
            saved = json.load(fh)
        assert saved["cells"] == json.loads(json.dumps(result["cells"]))
        assert saved["machine"]["cores"] == os.cpu_count() and "rntuple" in saved["machine"]["versions"]
        with open(report["markdown"]) as fh:
            md = fh.read()
        with open(report["html"]) as fh:
            page = fh.read()
        for c in result["cells"]:
            name = c.get("id") or c["label"]
            assert name in md and name in page
        plots = [p for k, p in report.items() if k.startswith("plot")]
        assert plots
        for p in plots:
            with open(p, "rb") as fh:
                assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
            assert os.path.basename(p) in md
    with open(sweep["report"]["markdown"]) as fh:
        assert f"Recommended for --optimize sparse: **{sweep['recommendation']}**" in fh.read()


def _cell(label, size, read, sparse, write, memory):
    return {
        "label": label,
        "file_size": size,
        "read_seconds": read,
        "sparse_seconds": sparse,
        "write_seconds": write,
        "write_peak_rss": memory,
    }


HAND = [
    _cell("small", 100, 5.0, 2.0, 9.0, 300),  # smallest file
    _cell("fast-read", 150, 1.0, 1.5, 4.0, 300),  # fastest full read
    _cell("dominated", 160, 1.2, 1.6, 4.5, 310),  # worse than fast-read in everything
    _cell("sparse", 180, 3.0, 0.5, 5.0, 200),  # fastest sparse read, least memory
    _cell("sparse-bulky", 400, 3.0, 0.51, 4.9, 900),  # within 5% of the best sparse, costly elsewhere
    _cell("fast-write", 300, 2.0, 2.0, 1.0, 250),
]


def test_pareto_front_on_hand_made_cells():
    assert study.pareto_front(HAND) == [0, 1, 3, 4, 5]
    assert study.pareto_front(HAND, ["file_size"]) == [0]
    same = [_cell("a", 1, 1, 1, 1, 1), _cell("b", 1, 1, 1, 1, 1)]
    assert study.pareto_front(same) == [0, 1]  # equal cells do not dominate each other


def test_recommendation_on_hand_made_cells():
    labels = {goal: HAND[study.recommend(HAND, goal)]["label"] for goal in ("size", "read", "sparse", "write")}
    assert labels == {"size": "small", "read": "fast-read", "sparse": "sparse", "write": "fast-write"}
    assert HAND[study.recommend(HAND, "memory")]["label"] == "sparse"
    # Within the tolerance, the cheaper cell in the other measures wins, whichever comes first.
    reverse = HAND[::-1]
    assert reverse[study.recommend(reverse, "sparse")]["label"] == "sparse"
    assert HAND[study.recommend(HAND, "sparse", tolerance=0.0)]["label"] == "sparse"
    with pytest.raises(ValueError, match="optimize must be one of size, read, sparse, write, memory"):
        study.recommend(HAND, "speed")


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rntuple", "study", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_knobs_end_to_end(source, tmp_path):
    out = tmp_path / "report"
    r = _cli("knobs", source, "-o", str(out), "--quick", "--entries", "30", "--optimize", "size", "--no-progress")
    assert r.returncode == 0, r.stderr
    assert "recommended for size:" in r.stdout
    with open(out / "results.json") as fh:
        saved = json.load(fh)
    assert saved["settings"]["entries"] == 30 and {c["entries"] for c in saved["cells"]} == {30}
    assert len(saved["cells"]) == 6 and saved["recommendation"] == saved["recommendations"]["size"]
    assert {c["label"] for c in saved["cells"]} >= {"streamer fields", "streamer fields cluster 1 MiB (ATLAS no-split)"}
    assert (out / "report.html").exists() and (out / "size_vs_sparse.png").exists()
    assert not (out / "files").exists()  # rewritten files are removed once measured


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["knobs", "-o", "d"], "study knobs needs the RNTuple to rewrite"),
        (["layout", "x.root", "-o", "d"], "study layout generates its data and takes no FILE"),
        (["layout", "-o", "d", "--entries", "5"], "argument --entries: not an option of study layout"),
        (["knobs", "f.root", "-o", "d", "--threads", "2"], "argument --threads: not an option of study knobs"),
        (["shape", "-o", "d"], "argument STUDY: invalid choice: 'shape' (choose from 'layout', 'knobs')"),
        (["layout"], "--output"),
        (["layout", "-o", "d", "--events", "0"], "must be at least 1, not 0"),
        (["knobs", "f.root", "-o", "d", "--optimize", "speed"], "argument --optimize: invalid choice: 'speed'"),
    ],
)
def test_cli_usage_errors(args, message, tmp_path):
    r = _cli(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.startswith("usage: rntuple study"), r.stderr
    assert message in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


def test_study_is_an_attribute_of_the_package():
    code = "import rntuple; print(rntuple.study.layout.__module__, rntuple.study.knobs.__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.split() == ["rntuple.study", "knobs"], r.stderr


def test_api_errors(tmp_path, source):
    with pytest.raises(ValueError, match="events must be a positive integer, not 0"):
        study.layout(str(tmp_path), events=0)
    with pytest.raises(ValueError, match="no axis 'shape' in the layout matrix"):
        study.layout(str(tmp_path), axes={"shape": ["x"]})
    with pytest.raises(ValueError, match="rows takes event, spill, top, element, not 'row'"):
        study.layout(str(tmp_path), axes={"rows": ["row"]})
    with pytest.raises(FileNotFoundError):
        study.knobs(str(tmp_path / "missing.root"), str(tmp_path))
    with pytest.raises(KeyError, match="has no RNTuple 'Nope'; it has: Events"):
        study.knobs(source + ":Nope", str(tmp_path))


def test_streamer_setting_writes_streamer_fields_with_the_same_values(source, tmp_path):
    # The knobs sweep's streamer cells: hits and wires (vectors of records) become streamer fields
    # of generated classes, the header stays split; reading back gives the split file's values.
    from rntuple.study._child import streamer_types, write_knobs

    out = str(tmp_path / "streamer.root")
    write_knobs({"source": source, "name": "Events", "entries": None, "path": out, "options": {"compression": 505},
                 "streamer": True})  # fmt: skip
    with rntuple.open(source) as f:
        split = f["Events"].arrays(library="pa")
    types, fields = streamer_types(split.schema)
    assert fields == ["hits", "wires"]
    assert types["wires"] == "std::vector<Study_wires__0>"
    assert types["wires._0.rois"] == "std::vector<Study_wires__0_rois__0>"
    with rntuple.open(out) as f:
        nt = f["Events"]
        kinds = {fd.name: fd.kind for fd in nt.fields}
        assert kinds["hits"] == kinds["wires"] == "streamer" and kinds["run"] != "streamer"
        assert nt.arrays(library="pa").to_pylist() == split.to_pylist()
