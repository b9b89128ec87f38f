"""``rntuple inspect``, ``rntuple verify`` and ``rntuple merge`` run as a user runs them.

Every test starts the installed ``rntuple`` command (or ``python -m rntuple``)
as a subprocess on real files:

* inspect: the table and ``--json``; the figures against ROOT 6.40's own
  ``RNTupleInspector`` on several files (one ROOT process);
* verify: every good file of ``tests/data`` passes, each of the 38 corrupt
  files of ``tests/data/bad`` fails with its file named, exit statuses;
* merge: ROOT 6.40 (``tests/reference/root_dump.py``), uproot 5.7 and our
  reader read the merged file with exactly the concatenated values, for
  inputs written by ROOT and by ``rntuple.recreate`` (several clusters and
  cluster groups), recompression, the union and filter modes;
* bad arguments, missing and corrupt files; a merge interrupted by SIGINT
  leaves nothing, one killed by SIGKILL leaves only a temporary file that no
  reader accepts; the progress bar shows on a terminal only;
* the Python functions ``rntuple.inspect``, ``rntuple.verify``, ``rntuple.merge``.
"""

from __future__ import annotations

import glob
import json
import os
import pty
import shutil
import signal
import subprocess
import sys
import time

import awkward as ak
import numpy as np
import pytest
import rntuple
import uproot
from conftest import DATA, REFERENCE, cache_dir, root_python

ROOT_DUMP = os.path.join(REFERENCE, "root_dump.py")
BAD = os.path.join(DATA, "bad")


def command() -> list[str]:
    exe = shutil.which("rntuple")
    assert exe, "the rntuple command is not installed (pip install ./crates/rntuple-python)"
    return [exe]


def run(*args: str, cmd: list[str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        (cmd or command()) + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, cwd=DATA
    )


def data(name: str) -> str:
    return os.path.join(DATA, name)


def good_files() -> list[str]:
    return sorted(glob.glob(os.path.join(DATA, "*.root")))


def our_dump(path: str, name: str) -> list[str]:
    p = run("dump", f"{path}:{name}")
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def root_dumps(jobs: list[tuple[str, str]], tmp: str) -> list[list[str]]:
    """ROOT's dumps (canonical JSON lines) of (file, ntuple) pairs, in one ROOT process."""
    specs = [{"file": f, "ntuple": n, "out": os.path.join(tmp, f"dump{i}.jsonl")} for i, (f, n) in enumerate(jobs)]
    jobs_path = os.path.join(tmp, "jobs.json")
    with open(jobs_path, "w", encoding="utf-8") as fh:
        json.dump(specs, fh)
    proc = subprocess.run([root_python(), ROOT_DUMP, "--batch", jobs_path], capture_output=True, text=True)
    out = []
    for s in specs:
        assert not os.path.exists(s["out"] + ".error"), open(s["out"] + ".error").read() + proc.stderr
        with open(s["out"] + ".meta.json", encoding="utf-8") as fh:
            assert json.load(fh)["skipped_fields"] == {}, s
        with open(s["out"], encoding="utf-8") as fh:
            out.append(fh.read().splitlines())
    assert proc.returncode == 0, proc.stderr
    return out


# ---------------------------------------------------------------------------
# inspect
# ---------------------------------------------------------------------------


def test_inspect_table_json_and_bad_arguments():
    f = data("test_stl_containers_rntuple_v1-0-0-0.root")
    p = run("inspect", f)
    assert p.returncode == 0, p.stderr
    for heading in (
        "RNTuple 'ntuple'",
        "Top-level fields by compressed size",
        "Columns by compressed size",
        "Clusters",
    ):
        assert heading in p.stdout
    assert "vector_variant_int64_string" in p.stdout and "SplitReal32" in p.stdout
    # python -m rntuple gives the same.
    q = run("inspect", f, cmd=[sys.executable, "-m", "rntuple"])
    assert q.returncode == 0 and q.stdout == p.stdout
    # JSON, also by name, and from Python.
    j = json.loads(run("inspect", f"{f}:ntuple", "--json").stdout)
    assert j["schema_version"] == 1 and [r["name"] for r in j["rntuples"]] == ["ntuple"]
    assert j == rntuple.inspect(f, "ntuple")
    r = j["rntuples"][0]
    assert r["num_entries"] == 5 and r["num_pages"] == len(r["columns"]) == 42
    assert sum(c["compressed"] for c in r["columns"]) == r["sizes"]["pages"]["compressed"]
    multi = json.loads(run("inspect", data("rntviewer-testfile-multiple-rntuples-v1-0-0-0.root"), "--json").stdout)
    assert [r["name"] for r in multi["rntuples"]] == ["A", "B"]
    # Errors: missing file, unknown RNTuple, bad option, no arguments, a file that is not ROOT.
    for args, status, words in [
        (["inspect", "missing.root"], 1, "missing.root"),
        (["inspect", f"{f}:nope"], 1, "nope"),
        (["inspect", f, "--top", "x"], 2, "--top"),
        (["inspect"], 2, "TARGET"),
        (["inspect", data("ORIGIN.md")], 1, "not a ROOT file"),
    ]:
        p = run(*args)
        assert p.returncode == status, (args, p.returncode, p.stderr)
        assert words in p.stderr, (args, p.stderr)
        assert "Traceback" not in p.stderr and "panicked" not in p.stderr


ROOT_INSPECTOR = r"""
import json, sys, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ROOT
ROOT.gErrorIgnoreLevel = ROOT.kWarning
out = []
for path, name in json.loads(sys.argv[1]):
    insp = ROOT.Experimental.RNTupleInspector.Create(name, path)
    desc = insp.GetDescriptor()
    cols = {}
    for cid in range(desc.GetNPhysicalColumns()):
        c = insp.GetColumnInspector(cid)
        cols[cid] = [c.GetCompressedSize(), c.GetUncompressedSize(), c.GetNElements(), c.GetNPages()]
    fields = {}
    for f in desc.GetTopLevelFields():
        if f.IsProjectedField():
            continue
        fi = insp.GetFieldTreeInspector(f.GetFieldName())
        fields[str(f.GetFieldName())] = [fi.GetCompressedSize(), fi.GetUncompressedSize()]
    out.append({"compressed": insp.GetCompressedSize(), "uncompressed": insp.GetUncompressedSize(),
                "settings": int(insp.GetCompressionSettings().value()), "columns": cols, "fields": fields})
print(json.dumps(out))
"""

INSPECTED = [
    ("test_stl_containers_rntuple_v1-0-0-0.root", "ntuple"),
    ("Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root", "Events"),
    ("cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root", "Events"),
    ("test_split_3e4_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_float_types_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_index_multicluster_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_multiple_representations_rntuple_v1-0-0-0.root", "ntuple"),
    ("test_class_inheritance_rntuple_v1-0-0-1.root", "rntpl"),
]


def test_inspect_figures_equal_roots_rntuple_inspector():
    jobs = [(data(f), n) for f, n in INSPECTED]
    proc = subprocess.run([root_python(), "-c", ROOT_INSPECTOR, json.dumps(jobs)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    root = json.loads(proc.stdout.strip().splitlines()[-1])
    for (path, name), ref in zip(jobs, root, strict=True):
        ours = json.loads(run("inspect", f"{path}:{name}", "--json").stdout)["rntuples"][0]
        where = os.path.basename(path)
        pages = ours["sizes"]["pages"]
        # ROOT's "uncompressed" size is elements times the in-memory element size: our "memory".
        assert (pages["compressed"], pages["memory"]) == (ref["compressed"], ref["uncompressed"]), where
        assert ours["compression"] == [ref["settings"]], where
        by_id = {c["id"]: c for c in ours["columns"]}
        assert len(by_id) == len(ref["columns"]), where
        for cid, (comp, mem, elements, npages) in ref["columns"].items():
            c = by_id[int(cid)]
            assert (c["compressed"], c["memory"], c["num_elements"], c["num_pages"]) == (comp, mem, elements, npages), (
                where,
                cid,
            )
        fields = {f["name"]: f for f in ours["fields"]}
        for fname, (comp, mem) in ref["fields"].items():
            assert (fields[fname]["compressed"], fields[fname]["memory"]) == (comp, mem), (where, fname)


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


def test_verify_passes_every_good_file():
    files = good_files()
    p = run("verify", *files)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr == ""  # no progress bar when not on a terminal
    for f in files:
        assert f"{f}: OK" in p.stdout
    assert f"verified {len(files)} files: {len(files)} OK" in p.stdout
    report = rntuple.verify(files)
    assert report.ok and bool(report) and report.problems == []


def test_verify_passes_the_generated_root_files_and_merges_them(generated_dir, tmp_path):
    # The files tests/reference/generate.py has ROOT 6.40 write: every column type
    # and compression, cluster groups, schema extension, several representations,
    # projections, several RNTuples per file (the > 4 GiB one is left out: too slow here).
    files = sorted(f for f in glob.glob(os.path.join(generated_dir, "*.root")) if "big" not in os.path.basename(f))
    assert len(files) >= 10, files
    p = run("verify", *files)
    assert p.returncode == 0, p.stdout + p.stderr
    by_root = []
    for f in files:
        for name in [r["name"] for r in rntuple.inspect(f)["rntuples"]]:
            out = str(tmp_path / f"{os.path.basename(f)}-{name.replace('/', '_')}.root")
            p = run("merge", out, f, f, "--name", name)
            assert p.returncode == 0, (f, name, p.stderr)
            assert rntuple.verify(out).ok, (f, name)
            if os.path.basename(f) in ("clusters.root", "columns_c0.root", "extension.root", "multirep.root"):
                by_root.append((f, out, name))
            # Compared as JSON text: NaN equals NaN there.
            one = json.dumps(rntuple.open(f)[name].arrays(library="pa").to_pylist(), default=repr)
            two = json.dumps(rntuple.open(out)[name].arrays(library="pa").to_pylist(), default=repr)
            assert two == "[" + one[1:-1] + (", " if one != "[]" else "") + one[1:-1] + "]", (f, name)
    # ROOT reads the merged files of plain types (several representations, deferred columns) too.
    dumps = root_dumps([(f, n) for f, _, n in by_root] + [(o, n) for _, o, n in by_root], str(tmp_path))
    for k, (_, out, _) in enumerate(by_root):
        assert dumps[len(by_root) + k] == dumps[k] * 2, out


def test_verify_reports_every_corrupt_file():
    bad = sorted(glob.glob(os.path.join(BAD, "*.root")))
    assert len(bad) == 38
    # One at a time (a few): exit status 1, every line names the file.
    for f in bad[::12]:
        p = run("verify", f)
        assert p.returncode == 1, (f, p.returncode, p.stdout, p.stderr)
        lines = p.stdout.splitlines()
        assert lines[-1].startswith(f"{f}: FAILED"), (f, p.stdout)
        assert all(line.startswith(f) for line in lines), p.stdout
        assert "panicked" not in p.stderr and "Traceback" not in p.stderr
    # All of them in one run: each reported, none crashes the command.
    p = run("verify", *bad)
    assert p.returncode == 1 and "panicked" not in p.stderr and "Traceback" not in p.stderr
    for f in bad:
        assert f"{f}: FAILED (" in p.stdout, f
    assert f"verified {len(bad)} files: 0 OK, {len(bad)} with problems" in p.stdout
    # All at once, with a good file and a missing one: each named; JSON too.
    good = data("test_int_float_rntuple_v1-0-0-0.root")
    p = run("verify", "--json", good, *bad, "missing.root")
    assert p.returncode == 1
    doc = json.loads(p.stdout)
    assert not doc["ok"]
    by_file = {r["file"]: r for r in doc["files"]}
    assert by_file[good]["ok"] and by_file[good]["problems"] == []
    for f in [*bad, "missing.root"]:
        assert not by_file[f]["ok"] and by_file[f]["num_problems"] >= 1, f
        for problem in by_file[f]["problems"]:
            assert problem["file"] == f and problem["check"] and problem["message"]
    report = rntuple.verify([good, *bad])
    assert not report.ok
    assert [r.ok for r in report.files] == [True] + [False] * len(bad)
    p = report.files[1 + [os.path.basename(b) for b in bad].index("page_checksum_mismatch.root")].problems[0]
    assert (p.check, p.cluster, p.column, p.page, p.field) == ("checksum", 0, 3, 0, "lastName")
    assert str(p).startswith(p.file)


def test_verify_usage_errors():
    assert run("verify").returncode == 2
    assert run("--no-verify", "verify", data("test_int_float_rntuple_v1-0-0-0.root")).returncode == 2
    p = run("verify", "--frobnicate", data("test_int_float_rntuple_v1-0-0-0.root"))
    assert p.returncode == 2 and "--frobnicate" in p.stderr


# ---------------------------------------------------------------------------
# merge
# ---------------------------------------------------------------------------

SMALL = {
    "initial_unzipped_page_size": 64,
    "max_unzipped_page_size": 1024,
    "approx_zipped_cluster_size": 4096,
    "max_unzipped_cluster_size": 65536,
    "cluster_group_size": 2,
}


def events(first: int, n: int, extra: bool = False) -> ak.Array:
    i = np.arange(first, first + n)
    fields = {
        "run": i.astype(np.int32) // 100,
        "pt": (i % 97).astype(np.float32) * 0.5,
        "flag": i % 3 == 0,
        "jets": ak.unflatten(np.repeat(i, i % 4) * 0.25, i % 4),
        "name": [f"event {k}" for k in i],
    }
    if extra:
        fields["weight"] = (i % 7).astype(np.float64) + 0.125
        fields["tracks"] = ak.unflatten(np.repeat(i, i % 3).astype(np.int64) * 3, i % 3)
    return ak.Array(fields)


@pytest.fixture(scope="module")
def ours(tmp_path_factory) -> dict[str, str]:
    """Inputs written by rntuple.recreate: several clusters and cluster groups each."""
    d = tmp_path_factory.mktemp("merge-inputs")
    files = {}
    unsplit = {"pt": "unsplit", "run": "unsplit", "jets": "Index32", "jets._0": "unsplit", "name": "Index32"}
    for key, first, n, extra, compression, reps in [
        ("a", 0, 3000, False, "zstd", None),
        ("b", 3000, 2500, False, "zstd", None),
        ("c", 5500, 2000, True, "zstd", None),
        ("lz4", 7500, 1500, False, "lz4", None),
        ("unsplit", 9000, 1200, False, "zstd", unsplit),
    ]:
        path = str(d / f"{key}.root")
        with rntuple.recreate(path, compression=compression) as f:
            with f.mkrntuple("Events", events(first, n // 2, extra), representations=reps, **SMALL) as w:
                w.extend(events(first + n // 2, n - n // 2, extra))
        files[key] = path
    return files


def uproot_arrays(path: str, name: str) -> list:
    with uproot.open(path) as f:
        return f[name].arrays().to_list()


def test_merge_inputs_written_by_root_and_by_us_read_by_root_uproot_and_us(ours, tmp_path):
    cases = [
        ([data("test_stl_containers_rntuple_v1-0-0-0.root")] * 2, "ntuple"),
        ([data("test_multiple_cluster_groups_rntuple_v1-0-0-0.root")] * 3, "ntuple"),
        ([data("Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root")] * 2, "Events"),
        ([data("test_extension_columns_rntuple_v1-0-0-0.root")] * 2, "ntuple"),
        ([data("test_multiple_representations_rntuple_v1-0-0-0.root")] * 2, "ntuple"),
        ([ours["a"], ours["b"], ours["a"]], "Events"),
        ([ours["b"], ours["lz4"], ours["a"]], "Events"),  # lz4 pages recompressed to zstd
        ([ours["a"], ours["unsplit"]], "Events"),  # unsplit, Index32 pages re-encoded
        ([ours["unsplit"], ours["a"]], "Events"),  # split, Index64 pages re-encoded
    ]
    outputs = []
    for k, (inputs, _) in enumerate(cases):
        out = str(tmp_path / f"merged{k}.root")
        p = run("merge", out, *inputs)
        assert p.returncode == 0, p.stderr
        assert f"merged {len(inputs)} inputs into {out}" in p.stdout
        assert p.stderr == ""
        assert rntuple.verify(out).ok
        outputs.append(out)
    inputs_needed = sorted({(f, n) for inputs, n in cases for f in inputs})
    dumps = root_dumps([(o, n) for o, (_, n) in zip(outputs, cases, strict=True)] + inputs_needed, str(tmp_path))
    merged_dumps, input_dumps = dumps[: len(cases)], dict(zip(inputs_needed, dumps[len(cases) :], strict=True))
    ours_of = {(f, n): rntuple.open(f)[n].arrays().to_list() for f, n in inputs_needed}
    for (inputs, name), out, merged in zip(cases, outputs, merged_dumps, strict=True):
        expected = [line for f in inputs for line in input_dumps[(f, name)]]
        assert merged == expected, out  # ROOT 6.40 reads exactly the concatenation
        assert rntuple.open(out)[name].arrays().to_list() == [e for f in inputs for e in ours_of[(f, name)]], out
    # uproot 5.7 too (for the files it reads: its limits are documented in test_root_reference.py).
    for k in (2, 5, 6, 7, 8):
        inputs, name = cases[k]
        assert uproot_arrays(outputs[k], name) == [e for f in inputs for e in uproot_arrays(f, name)]
    # Cluster structure: each input cluster (group) becomes one output cluster (group).
    info = rntuple.inspect(outputs[5])["rntuples"][0]
    parts = [rntuple.inspect(f)["rntuples"][0] for f in cases[5][0]]
    assert len(info["clusters"]) == sum(len(p["clusters"]) for p in parts) > 6
    assert len(info["cluster_groups"]) == sum(len(p["cluster_groups"]) for p in parts) > 3
    assert info["compression"] == [505]
    # Column types are the first input's.
    for k in (7, 8):
        types = [(c["id"], c["type"]) for c in rntuple.inspect(outputs[k])["rntuples"][0]["columns"]]
        first = [(c["id"], c["type"]) for c in rntuple.inspect(cases[k][0][0])["rntuples"][0]["columns"]]
        assert sorted(types) == sorted(first)
    assert sorted(types) != sorted((c["id"], c["type"]) for c in info["columns"])


def test_merge_recompression_and_python_api(ours, tmp_path):
    out = str(tmp_path / "lz4.root")
    p = run("merge", out, ours["a"], ours["b"], "--recompress", "lz4")
    assert p.returncode == 0, p.stderr
    assert "recompressed" in p.stdout
    info = rntuple.inspect(out)["rntuples"][0]
    assert info["compression"] == [404]
    assert our_dump(out, "Events") == our_dump(ours["a"], "Events") + our_dump(ours["b"], "Events")
    s = rntuple.merge(str(tmp_path / "py.root"), [ours["a"], ours["lz4"]], compression="zstd")
    assert s.entries == 3000 + 1500 and s.compression == 505
    assert s.pages_copied > 0 and s.pages_recompressed > 0
    with pytest.raises(ValueError, match="exists"):
        rntuple.merge(str(tmp_path / "py.root"), [ours["a"]])
    s = rntuple.merge(str(tmp_path / "py.root"), [ours["a"]], overwrite=True, compression=0)
    assert s.compression == 0 and rntuple.verify(str(tmp_path / "py.root")).ok
    with pytest.raises(ValueError, match="mode"):
        rntuple.merge(str(tmp_path / "x.root"), [ours["a"]], mode="sideways")
    with pytest.raises(FileNotFoundError):
        rntuple.merge(str(tmp_path / "x.root"), [ours["a"], str(tmp_path / "missing.root")])
    assert not os.path.exists(tmp_path / "x.root")


def test_merge_union_and_filter_modes_read_by_root(ours, tmp_path):
    # strict (the default) refuses inputs with different fields.
    p = run("merge", str(tmp_path / "strict.root"), ours["a"], ours["c"])
    assert p.returncode == 1 and "weight" in p.stderr and "strict" in p.stderr
    assert not os.path.exists(tmp_path / "strict.root")
    # union: the fields of c appear at its first entry; entries before read defaults.
    union = str(tmp_path / "union.root")
    p = run("merge", union, ours["a"], ours["c"], ours["b"], "--mode", "union")
    assert p.returncode == 0, p.stderr
    assert "added field weight" in p.stdout and "added field tracks" in p.stdout
    # filter: the first input's fields only.
    filt = str(tmp_path / "filter.root")
    p = run("merge", filt, ours["a"], ours["c"], "--mode", "filter")
    assert p.returncode == 0, p.stderr
    assert "left out field weight" in p.stdout
    p = run("merge", str(tmp_path / "f2.root"), ours["c"], ours["a"], "--mode", "filter")
    assert p.returncode == 1 and "lacks" in p.stderr
    for f in (union, filt):
        assert run("verify", "-q", f).returncode == 0

    a, c, b = (events(0, 3000), events(5500, 2000, True), events(3000, 2500))
    defaults = {"weight": 0.0, "tracks": []}
    expected_union = [{**e, **defaults} for e in a.to_list()] + c.to_list() + [{**e, **defaults} for e in b.to_list()]
    expected_filter = [{k: v for k, v in e.items() if k not in defaults} for e in a.to_list() + c.to_list()]
    root_union, root_filter = root_dumps([(union, "Events"), (filt, "Events")], str(tmp_path))
    assert [json.loads(line) for line in root_union] == expected_union
    assert [json.loads(line) for line in root_filter] == expected_filter
    assert uproot_arrays(union, "Events") == expected_union
    got_ours = rntuple.open(union)["Events"].arrays().to_list()
    assert got_ours == expected_union


def test_merge_bad_arguments_missing_and_corrupt_inputs(ours, tmp_path):
    out = str(tmp_path / "out.root")
    for args, status, words in [
        (["merge"], 2, "OUT"),
        (["merge", out], 2, "INPUTS"),
        (["merge", out, ours["a"], "--mode", "sideways"], 2, "sideways"),
        (["merge", out, ours["a"], "--compression", "brotli"], 2, "brotli"),
        # One compression parser for every entry point, with ROOT's level range
        # (TFile/TBuffer clamp levels to 0..99): merge once refused levels over 9.
        (["merge", out, ours["a"], "--compression", "zstd:100"], 2, "1 to 99"),
        (["merge", out, ours["a"], "missing.root"], 1, "missing.root"),
        (["merge", out, data("bad/page_checksum_mismatch.root")], 1, "checksum mismatch"),
        (["merge", out, data("bad/page_zstd_garbage.root")], 0, None),  # compressed pages are copied as stored
        (["merge", out, ours["a"], data("test_int_float_rntuple_v1-0-0-0.root")], 1, "RNTuple"),
        (["merge", out, ours["a"], "--name", "Nope"], 1, "Nope"),
        (["merge", ours["a"], ours["a"]], 1, "also an input"),
        (["merge", str(tmp_path / "no" / "dir.root"), ours["a"]], 1, "no such directory"),
    ]:
        if os.path.exists(out):
            os.remove(out)
        p = run(*args)
        assert p.returncode == status, (args, p.returncode, p.stderr)
        if words:
            assert words in p.stderr, (args, p.stderr)
            assert not os.path.exists(out), args
        assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    # A corrupt page is caught when it must be decompressed (recompression).
    p = run("merge", "-f", out, data("bad/page_zstd_garbage.root"), "--compression", "lz4")
    assert p.returncode == 1 and "zstd" in p.stderr and not os.path.exists(out)
    # An existing output is kept unless --force.
    with open(out, "wb") as fh:
        fh.write(b"precious")
    assert run("merge", out, ours["a"]).returncode == 1
    assert open(out, "rb").read() == b"precious"
    assert run("merge", "--force", out, ours["a"]).returncode == 0
    assert rntuple.verify(out).ok
    assert not glob.glob(str(tmp_path / ".*.rntuple-merge.tmp"))


def test_rust_only_subcommands_are_routed():
    # convert and draw are Python's; everything else goes to the Rust CLI, which
    # names the Python package for them when run without it (crates/rntuple-cli tests).
    p = run("merge", "--help")
    assert p.returncode == 0 and "--mode" in p.stdout and "--recompress" in p.stdout


# ---------------------------------------------------------------------------
# interrupted merges and the progress bar
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def large_inputs() -> list[str]:
    """Two inputs of 1.5 M entries (cached): a recompressing merge takes seconds."""
    d = os.path.join(cache_dir(), "tools-merge-v1")
    os.makedirs(d, exist_ok=True)
    paths = [os.path.join(d, f"in{k}.root") for k in range(2)]
    for k, path in enumerate(paths):
        if os.path.exists(path) and rntuple.verify(path, read_values=False).ok:
            continue
        n = 1_500_000
        rng = np.random.default_rng(k)
        data_ = {f"x{j}": rng.normal(size=n) for j in range(4)}
        data_["i"] = np.arange(k * n, (k + 1) * n, dtype=np.int64)
        tmp = path + ".writing"
        with rntuple.recreate(tmp, compression="zstd") as f:
            f["Events"] = data_
        os.replace(tmp, path)
    return paths


def start_merge(out: str, inputs: list[str], cmd: list[str], **kw) -> subprocess.Popen:
    args = cmd + ["merge", out, *inputs, "--compression", "lzma:9", "--threads", "1"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wait_for_temp(d: str, proc: subprocess.Popen, timeout: float = 60) -> str:
    end = time.time() + timeout
    while time.time() < end:
        temps = glob.glob(os.path.join(d, ".*.rntuple-merge.tmp"))
        if temps:
            return temps[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no temporary output appeared")


@pytest.mark.parametrize("cmd", ["rntuple", "python -m rntuple"])
def test_sigint_stops_a_merge_and_leaves_nothing(large_inputs, tmp_path, cmd):
    out = str(tmp_path / "out.root")
    argv = command() if cmd == "rntuple" else [sys.executable, "-m", "rntuple"]
    proc = start_merge(out, large_inputs, argv)
    wait_for_temp(str(tmp_path), proc)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert "merge interrupted; nothing was written" in stderr, stderr
    assert "Traceback" not in stderr, stderr
    assert not os.path.exists(out)
    assert os.listdir(tmp_path) == [], os.listdir(tmp_path)


def test_sigkill_leaves_only_an_invalid_temporary_file(large_inputs, tmp_path):
    out = str(tmp_path / "out.root")
    proc = start_merge(out, large_inputs, command())
    temp = wait_for_temp(str(tmp_path), proc)
    proc.kill()
    proc.communicate(timeout=60)
    assert not os.path.exists(out)
    assert os.listdir(tmp_path) == [os.path.basename(temp)]
    assert os.path.basename(temp).startswith(".out.root.") and temp.endswith(".rntuple-merge.tmp")
    # No reader takes it for a ROOT file.
    with pytest.raises(rntuple.RNTupleError, match="not completed"):
        rntuple.open(temp)
    with pytest.raises(Exception):  # noqa: B017 (uproot raises its own errors)
        uproot.open(temp)
    assert not rntuple.verify(temp).ok
    os.remove(temp)


def test_progress_bar_only_on_a_terminal(ours, tmp_path):
    out = str(tmp_path / "bar.root")
    # Piped: quiet.
    p = run("merge", out, ours["a"], ours["b"])
    assert p.returncode == 0 and p.stderr == ""
    # On a terminal: a bar on standard error.
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.run(
            command() + ["merge", "-f", out, ours["a"], ours["b"], "--recompress", "lzma"],
            stdout=subprocess.PIPE,
            stderr=secondary,
            timeout=120,
        )
        os.close(secondary)
        secondary = -1
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        bar = b"".join(chunks).decode(errors="replace")
    finally:
        if secondary >= 0:
            os.close(secondary)
        os.close(primary)
    assert proc.returncode == 0
    assert "merging [" in bar and "%" in bar, bar
    # --quiet: no bar even on a terminal.
    primary, secondary = pty.openpty()
    proc = subprocess.run(command() + ["merge", "-qf", out, ours["a"]], stdout=subprocess.PIPE, stderr=secondary)
    os.close(secondary)
    try:
        os.set_blocking(primary, False)
        leftover = os.read(primary, 65536)
    except OSError:
        leftover = b""
    os.close(primary)
    assert proc.returncode == 0 and proc.stdout == b"" and b"merging" not in leftover


ATTRIBUTES = data("attributes_root640.root")
RUNS = (
    "attribute set 'runs' (schema 1.0): 2 entries, "
    "fields run: std::int32_t, tag: std::string, weights: std::vector<float>"
)
FLAGS = "attribute set 'flags' (schema 1.0): 3 entries, fields flag: std::uint16_t"

# ROOT 6.40 opens the merged file: how many attribute sets it links and its entries.
ROOT_ATTRIBUTE_SETS = """
import sys, ROOT
r = ROOT.RNTupleReader.Open("Events", sys.argv[1])
print(r.GetDescriptor().GetNAttributeSets(), r.GetNEntries())
"""


def test_attribute_sets_in_inspect_show_verify_and_merge(tmp_path):
    # The sets ROOT wrote (tests/reference/attributes_root.py).
    for sub in ("inspect", "show"):
        p = run(sub, ATTRIBUTES)
        assert p.returncode == 0, p.stderr
        assert RUNS in p.stdout and FLAGS in p.stdout, p.stdout
    j = json.loads(run("inspect", ATTRIBUTES, "--json").stdout)
    sets = j["rntuples"][0]["attribute_sets"]
    assert [(s["name"], s["num_entries"], [f["name"] for f in s["fields"]]) for s in sets] == [
        ("runs", 2, ["run", "tag", "weights"]),
        ("flags", 3, ["flag"]),
    ]
    assert run("verify", "-q", ATTRIBUTES).returncode == 0
    # merge leaves them out, as ROOT's RNTupleMerger does, and says so.
    out = str(tmp_path / "merged.root")
    p = run("merge", out, ATTRIBUTES, ATTRIBUTES)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("left out attribute set runs") == 2 and p.stdout.count("left out attribute set flags") == 2
    root = subprocess.run([root_python(), "-c", ROOT_ATTRIBUTE_SETS, out], capture_output=True, text=True, timeout=600)
    assert root.returncode == 0, root.stderr
    assert root.stdout.split()[-2:] == ["0", "12"]
    s = rntuple.merge(str(tmp_path / "merged_py.root"), [ATTRIBUTES, ATTRIBUTES])
    assert [d.split(" (from ")[0] for d in s.attribute_sets_dropped] == ["runs", "flags", "runs", "flags"], s
