"""``rntuple convert`` run as a user runs it (the ``rntuple`` command in a subprocess, real files).

* TTree -> RNTuple on the bundled CMS NanoAOD TTree: the same layout as ROOT
  6.40's own ``RNTupleImporter`` (run here on the same TTree with the same
  compression), ROOT reads our file with the same values as its own importer's
  file (entry by entry, every field including the projected ones), every
  branch reads back as uproot reads it from the TTree, and our file is no
  larger (sizes printed side by side; see docs/convert.md).
* TTree -> RNTuple on a ROOT-written TTree with every kind of branch
  (fundamental types, fixed-size and 2-d arrays, count-leaf arrays, C strings,
  std::string, STL vectors, leaf lists, Double32_t), read back against uproot
  and read by ROOT; several inputs and globs.
* RNTuple -> Parquet -> RNTuple: values, types and projected fields survive
  exactly; Parquet written by pandas -> RNTuple.
* Usage errors (exit 2), failures (exit 1, a message, no traceback), no output
  and no temporary file left behind after a failure, SIGINT or SIGTERM; the
  progress bar only when asked or on a terminal.

ROOT-written inputs and ROOT's dumps are cached under ``$RNTUPLE_CACHE/convert``
and ``$RNTUPLE_CACHE/reference`` keyed by content (our outputs are reproducible
with SOURCE_DATE_EPOCH), so re-runs start ROOT only when something changed.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import awkward as ak
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import rntuple
import uproot
from conftest import DATA, REFERENCE, _sha256_file, cache_dir, canon_diff, dumper_hash, root_python

NANO_TREE = os.path.join(DATA, "nanoAOD_2015_CMS_Open_Data_ttbar.root")
NANO_RNTUPLE = os.path.join(DATA, "cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root")
ROOT_DUMP = os.path.join(REFERENCE, "root_dump.py")
ENV = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}


def cli() -> list[str]:
    exe = shutil.which("rntuple", path=os.path.dirname(sys.executable)) or shutil.which("rntuple")
    return [exe] if exe else [sys.executable, "-m", "rntuple"]


def run(*args: str, cwd: str | None = None, check: int | None = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([*cli(), *args], capture_output=True, text=True, cwd=cwd, env=ENV)
    if check is not None:
        assert proc.returncode == check, f"rntuple {' '.join(args)}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def leftovers(directory: str) -> list[str]:
    """Temporary files or directories of an output left in ``directory``."""
    return [n for n in os.listdir(directory) if n.startswith(".") and n.endswith(".tmp")]


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------


def same(a, b, path="$"):
    """None if equal (floats bit for bit: NaN equals NaN, -0.0 differs from 0.0; bool/int/float never
    mixed), else where they differ."""
    return canon_diff(a, b, path, nan_equal=True)


def layout(fields: list[rntuple.Field]) -> list[tuple]:
    """The field tree as ROOT's importer writes it: names, types, roles, projections, column types."""

    def one(f):
        columns = [[c[1] for c in rep] for rep in f.columns]
        return (f.name, f.type_name, f.type_alias, f.kind, f.projected, columns, [one(c) for c in f.children])

    return [one(f) for f in fields]


# ---------------------------------------------------------------------------
# ROOT side: a TTree with every kind of branch, ROOT's importer, ROOT's dumps (cached)
# ---------------------------------------------------------------------------

KINDS_ENTRIES = 300
KINDS_CPP = r"""
#include <TFile.h>
#include <TLorentzVector.h>
#include <TTree.h>
#include <cstdio>
#include <map>
#include <string>
#include <vector>
void make_kinds_tree(const char *path, int n) {
  TFile f(path, "RECREATE");
  TTree t("t", "every kind of branch");
  Int_t i32; UInt_t u32; Long64_t i64; ULong64_t u64; Short_t i16; UShort_t u16; Char_t i8; UChar_t u8;
  Bool_t b; Float_t f32; Double_t f64; Double32_t d32;
  Float_t arr3[3]; Int_t arr23[2][3];
  Int_t nJet; Float_t Jet_pt[50]; Int_t Jet_id[50]; Bool_t Jet_ok[50]; Double32_t Jet_d32[50];
  UInt_t nK; Double_t K_x[50];
  char cstr[64];
  std::string s; std::vector<float> vf; std::vector<std::vector<int>> vvi; std::vector<std::string> vs;
  struct { Float_t x; Int_t y; } ll;
  TLorentzVector *lv = new TLorentzVector();
  t.Branch("i32", &i32, "i32/I"); t.Branch("u32", &u32, "u32/i"); t.Branch("i64", &i64, "i64/L");
  t.Branch("u64", &u64, "u64/l"); t.Branch("i16", &i16, "i16/S"); t.Branch("u16", &u16, "u16/s");
  t.Branch("i8", &i8, "i8/B"); t.Branch("u8", &u8, "u8/b"); t.Branch("b", &b, "b/O");
  t.Branch("f32", &f32, "f32/F"); t.Branch("f64", &f64, "f64/D"); t.Branch("d32", &d32, "d32/d");
  t.Branch("arr3", arr3, "arr3[3]/F"); t.Branch("arr23", arr23, "arr23[2][3]/I");
  t.Branch("nJet", &nJet, "nJet/I"); t.Branch("Jet_pt", Jet_pt, "Jet_pt[nJet]/F");
  t.Branch("Jet_id", Jet_id, "Jet_id[nJet]/I"); t.Branch("Jet_ok", Jet_ok, "Jet_ok[nJet]/O");
  t.Branch("Jet_d32", Jet_d32, "Jet_d32[nJet]/d");
  t.Branch("nK", &nK, "nK/i"); t.Branch("K.x", K_x, "K.x[nK]/D");
  t.Branch("cstr", cstr, "cstr/C");
  t.Branch("s", &s); t.Branch("vf", &vf); t.Branch("vvi", &vvi); t.Branch("vs", &vs);
  t.Branch("ll", &ll, "x/F:y/I");
  t.Branch("lv", &lv);
  for (int e = 0; e < n; ++e) {
    i32 = -e * 7; u32 = e * 3u; i64 = -1234567890123LL * e; u64 = 18446744073709551615ULL - e;
    i16 = -e; u16 = e; i8 = -(e % 100); u8 = e % 250; b = e % 3 == 0;
    f32 = 0.1f * e; f64 = e % 7 == 3 ? -0.0 : 1.0 / (e + 1); d32 = 0.25 * e;
    for (int k = 0; k < 3; ++k) arr3[k] = e + 0.5f * k;
    for (int k = 0; k < 6; ++k) arr23[k / 3][k % 3] = e * 10 + k;
    nJet = e % 5;
    for (int k = 0; k < nJet; ++k) {
      Jet_pt[k] = 10.f * k + e; Jet_id[k] = k - e; Jet_ok[k] = (k + e) % 2; Jet_d32[k] = k * 0.125;
    }
    nK = e % 3; for (int k = 0; k < (int)nK; ++k) K_x[k] = e * 0.001 + k;
    snprintf(cstr, sizeof cstr, "event %d", e);
    s = std::string(e % 4, 'a' + e % 26);
    vf.clear(); for (int k = 0; k < e % 4; ++k) vf.push_back(k * 1.5f);
    vvi.clear(); for (int k = 0; k < e % 3; ++k) vvi.push_back(std::vector<int>(k, e));
    vs.clear(); for (int k = 0; k < e % 3; ++k) vs.push_back(std::to_string(e * k));
    ll.x = e * 2.5f; ll.y = -e;
    lv->SetPtEtaPhiM(e, 0.01 * e, 0.5, 1.5);
    t.Fill();
  }
  t.Write();
  f.Close();
}
void make_split_tree(const char *path) {
  TFile f(path, "RECREATE");
  TTree t("t", "a split std::map branch");
  std::map<std::string, float> m;
  t.Branch("m", &m);
  for (int e = 0; e < 5; ++e) { m.clear(); m["a"] = e; t.Fill(); }
  t.Write();
  f.Close();
}
"""
ROOT_SCRIPT = r"""
import json, os, sys, warnings
warnings.simplefilter("ignore")
import ROOT
ROOT.gROOT.SetBatch(True)
job = json.loads(sys.argv[1])
if job.get("kinds"):
    ROOT.gInterpreter.GenerateDictionary("vector<vector<int> >", "vector")
    ROOT.gInterpreter.GenerateDictionary("map<string,float>", "map;string")
    assert ROOT.gInterpreter.Declare(job["cpp"])
    ROOT.make_kinds_tree(job["kinds"] + ".part", job["entries"])
    ROOT.make_split_tree(job["split"])
    os.replace(job["kinds"] + ".part", job["kinds"])
if job.get("import_out"):
    # ROOT's RNTupleImporter, default options but the compression set explicitly; the output is
    # created under the same base name as ours (a ROOT file records its own name).
    out = job["import_out"]
    partial = os.path.join(os.path.dirname(out), "partial")
    os.makedirs(partial, exist_ok=True)
    os.chdir(partial)
    imp = ROOT.Experimental.RNTupleImporter.Create(job["import_in"], "Events", os.path.basename(out))
    opts = imp.GetWriteOptions()
    opts.SetCompression(505)
    imp.SetWriteOptions(opts)
    imp.SetIsQuiet(True)
    imp.Import()
    del imp
    os.replace(os.path.basename(out), out)
"""


def _hash(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode() if isinstance(p, str) else p)
    return h.hexdigest()[:16]


def _run_root(job: dict, cwd: str) -> None:
    proc = subprocess.run([root_python(), "-c", ROOT_SCRIPT, json.dumps(job)], capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        pytest.fail(f"ROOT failed ({proc.returncode}):\n{proc.stderr[-4000:]}")


@pytest.fixture(scope="module")
def root_files(tmp_path_factory) -> dict[str, str]:
    """kinds.root (a TTree written by ROOT) and ROOT's importer output for the NanoAOD TTree, both cached."""
    directory = os.path.join(cache_dir(), "convert")
    os.makedirs(directory, exist_ok=True)
    key = _hash(KINDS_CPP, str(KINDS_ENTRIES), ROOT_SCRIPT)
    kinds = os.path.join(directory, f"kinds-{key}.root")
    split = os.path.join(directory, f"split-{key}.root")
    imported_dir = os.path.join(directory, f"import-{_hash(_sha256_file(NANO_TREE), ROOT_SCRIPT)}")
    imported = os.path.join(imported_dir, "nano.root")
    job: dict = {}
    if not (os.path.exists(kinds) and os.path.exists(split)):
        job.update(kinds=kinds, split=split, cpp=KINDS_CPP, entries=KINDS_ENTRIES)
    if not os.path.exists(imported):
        os.makedirs(imported_dir, exist_ok=True)
        job.update(import_in=NANO_TREE, import_out=imported)
    if job:
        _run_root(job, str(tmp_path_factory.mktemp("root-side")))
    return {"kinds": kinds, "split": split, "imported": imported}


def root_dumps(files: list[tuple[str, str]]) -> dict[tuple[str, str], list[dict]]:
    """ROOT's dump (tests/reference/root_dump.py) of each (file, RNTuple), cached by content; one ROOT run."""
    store = os.path.join(cache_dir(), "reference")
    os.makedirs(store, exist_ok=True)
    outs = {}
    jobs = []
    for path, name in files:
        key = _hash(json.dumps([_sha256_file(path), name, None, dumper_hash()]))
        out = os.path.join(store, f"convert-{key}.jsonl")
        outs[(path, name)] = out
        if not os.path.exists(out + ".meta.json"):
            jobs.append({"file": path, "ntuple": name, "out": out})
    if jobs:
        jobs_path = os.path.join(store, f"convert-jobs-{os.getpid()}.json")
        with open(jobs_path, "w", encoding="utf-8") as fh:
            json.dump(jobs, fh)
        try:
            proc = subprocess.run([root_python(), ROOT_DUMP, "--batch", jobs_path], capture_output=True, text=True)
        finally:
            os.remove(jobs_path)
        if proc.returncode != 0:
            pytest.fail(f"root_dump.py failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    result = {}
    for job, out in outs.items():
        with open(out + ".meta.json", encoding="utf-8") as fh:
            meta = json.load(fh)
        assert not meta["skipped_fields"], f"ROOT could not read {job}: {meta['skipped_fields']}"
        with open(out, encoding="utf-8") as fh:
            result[job] = [json.loads(line) for line in fh]
    return result


def our_dump(path: str, name: str) -> list[dict]:
    proc = run("dump", f"{path}:{name}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


# ---------------------------------------------------------------------------
# NanoAOD: against ROOT's importer and uproot
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nano(tmp_path_factory, root_files) -> dict[str, str]:
    """Our conversion of the NanoAOD TTree (same base name as ROOT's: a ROOT file records its name)."""
    directory = str(tmp_path_factory.mktemp("nano"))
    ours = os.path.join(directory, "nano.root")
    proc = run("convert", f"{NANO_TREE}:Events", ours)
    assert "200 entries" in proc.stdout
    return {"ours": ours, "root": root_files["imported"]}


def test_nano_layout_is_root_importers(nano):
    with rntuple.open(nano["ours"]) as ours, rntuple.open(nano["root"]) as root:
        a, b = ours["Events"], root["Events"]
        assert a.num_entries == b.num_entries == 200
        assert layout(a.fields) == layout(b.fields)
        names = [f.name for f in a.fields]
    # flat branches, then one untyped collection per count leaf, then the projected fields
    assert names[:3] == ["run", "luminosityBlock", "event"]
    assert "_collection0" in names and "Muon_pt" in names and "nMuon" in names


def test_nano_root_reads_the_values_of_its_own_importer(nano):
    dumps = root_dumps([(nano["ours"], "Events"), (nano["root"], "Events")])
    ours, root = dumps[(nano["ours"], "Events")], dumps[(nano["root"], "Events")]
    assert len(ours) == len(root) == 200
    for i, (a, b) in enumerate(zip(ours, root, strict=True)):
        assert list(a) == list(b)
        assert a == b, f"entry {i}: {same(a, b)}"


def test_nano_every_branch_reads_as_uproot_reads_the_ttree(nano):
    tree = uproot.open(NANO_TREE)["Events"]
    expected = tree.arrays(library="ak")
    counts = {b.count_branch.name for b in tree.branches if b.count_branch is not None}
    assert len(counts) == 22
    with rntuple.open(nano["ours"]) as f:
        got = f["Events"].arrays(filter_field=lambda fld: fld.top_level and fld.name in set(expected.fields))
    assert sorted(got.fields) == sorted(expected.fields)
    for name in expected.fields:
        d = same(ak.to_list(expected[name]), ak.to_list(got[name]))
        assert d is None, f"{name}: {d}"
        # the same types, except the count leaves: cardinalities, read as 64-bit integers
        if name not in counts:
            assert str(ak.type(got[name]).content) == str(ak.type(expected[name]).content), name


def test_nano_is_no_larger_than_root_importers(nano, capsys):
    sizes = {k: os.path.getsize(p) for k, p in nano.items()}

    def payload(path):
        # header + footer + pages as stored (from `rntuple show`)
        text = run("show", f"{path}:Events").stdout
        data = int(text.split("data: ")[1].split(" B compressed")[0])
        header = int(text.split("header: ")[1].split(" B")[0])
        footer = int(text.split("footer: ")[1].split(" B")[0])
        return data + header + footer

    payloads = {k: payload(p) for k, p in nano.items()}
    with capsys.disabled():
        print(
            f"\nNanoAOD TTree -> RNTuple (200 entries, zstd 505): file size ours {sizes['ours']:,} B, "
            f"ROOT 6.40 RNTupleImporter {sizes['root']:,} B; RNTuple payload (pages+header+footer) ours "
            f"{payloads['ours']:,} B, ROOT {payloads['root']:,} B"
        )
    assert payloads["ours"] <= payloads["root"]
    # The container around it: our file writer gives its keys 64-bit seek fields (key version 1004, +8 B
    # per key record) where ROOT uses 32-bit ones below 2 GB; allow that much (see docs/convert.md).
    keys = 6
    assert sizes["ours"] <= sizes["root"] + 8 * keys


# ---------------------------------------------------------------------------
# every kind of branch
# ---------------------------------------------------------------------------

KINDS_TYPES = {
    "i32": "std::int32_t",
    "u32": "std::uint32_t",
    "i64": "std::int64_t",
    "u64": "std::uint64_t",
    "i16": "std::int16_t",
    "u16": "std::uint16_t",
    "i8": "std::int8_t",  # ROOT's importer writes `char` (read back as unsigned by uproot and us)
    "u8": "std::uint8_t",
    "b": "bool",
    "f32": "float",
    "f64": "double",
    "d32": "double",  # alias Double32_t: SplitReal32 on disk, as ROOT's importer writes it
    "arr3": "std::array<float,3>",
    "arr23": "std::array<std::array<std::int32_t,3>,2>",  # ROOT's importer flattens to std::array<int,6>
    "cstr": "std::string",
    "s": "std::string",
    "vf": "std::vector<float>",
    "vvi": "std::vector<std::vector<std::int32_t>>",
    "vs": "std::vector<std::string>",
    "ll": "",  # a leaf list: an untyped record
    "lv": "",  # TLorentzVector, read by uproot as a record {fP: {fX, fY, fZ}, fE}: an untyped record
    "_collection0": "",  # nJet: Jet_pt, Jet_id, Jet_ok, Jet_d32
    "_collection1": "",  # nK: K.x (a dot, not allowed in field names, becomes "_")
    "Jet_pt": "ROOT::VecOps::RVec<float>",
    "Jet_id": "ROOT::VecOps::RVec<std::int32_t>",
    "Jet_ok": "ROOT::VecOps::RVec<bool>",
    "Jet_d32": "ROOT::VecOps::RVec<double>",
    "nJet": "ROOT::RNTupleCardinality<std::uint32_t>",
    "K_x": "ROOT::VecOps::RVec<double>",
    "nK": "ROOT::RNTupleCardinality<std::uint32_t>",
}


@pytest.fixture(scope="module")
def kinds(tmp_path_factory, root_files) -> str:
    out = os.path.join(str(tmp_path_factory.mktemp("kinds")), "kinds_rntuple.root")
    run("convert", root_files["kinds"], out)  # the only TTree in the file: no ":t" needed
    return out


def test_kinds_types(kinds):
    with rntuple.open(kinds) as f:
        nt = f["t"]
        assert {x.name: x.type_name for x in nt.fields} == KINDS_TYPES
        assert list(KINDS_TYPES) == [x.name for x in nt.fields]
        assert nt["d32"].type_alias == "Double32_t" and nt["d32"].columns == [[(11, "SplitReal32", 32)]]
        assert [c.name for c in nt["_collection0"].children[0].children] == ["Jet_pt", "Jet_id", "Jet_ok", "Jet_d32"]
        assert nt["_collection0"].children[0].children[3].type_alias == "Double32_t"
        assert [c.name for c in nt["ll"].children] == ["x", "y"]
        assert [c.name for c in nt["lv"].children] == ["fP", "fE"]
        assert all(
            x.projected == (x.name in ("Jet_pt", "Jet_id", "Jet_ok", "Jet_d32", "nJet", "K_x", "nK")) for x in nt.fields
        )


def test_kinds_values_are_uprooots(kinds, root_files):
    expected = uproot.open(root_files["kinds"])["t"].arrays(library="ak")
    with rntuple.open(kinds) as f:
        got = f["t"].arrays()
    renamed = {"K.x": "K_x"}
    for name in expected.fields:
        d = same(ak.to_list(expected[name]), ak.to_list(got[renamed.get(name, name)]))
        assert d is None, f"{name}: {d}"
    # the collections hold the same values as the projections
    assert ak.to_list(got["_collection0"].Jet_pt) == ak.to_list(got["Jet_pt"])
    assert ak.to_list(got["nJet"]) == ak.to_list(expected["nJet"])


def test_root_reads_the_kinds(kinds):
    root = root_dumps([(kinds, "t")])[(kinds, "t")]
    ours = our_dump(kinds, "t")
    assert len(root) == KINDS_ENTRIES
    for i, (a, b) in enumerate(zip(root, ours, strict=True)):
        assert a == b, f"entry {i}: {same(a, b)}"


def test_several_inputs_and_globs(tmp_path, root_files):
    for i in range(3):
        shutil.copy(root_files["kinds"], tmp_path / f"part{i}.root")
    run("convert", str(tmp_path / "part*.root") + ":t", str(tmp_path / "glob.root"), "--step-size", "70")
    run("convert", str(tmp_path / "part0.root"), str(tmp_path / "part2.root:t"), str(tmp_path / "two.root"))
    one = uproot.open(root_files["kinds"])["t"].arrays(["i32", "Jet_pt", "vs"], library="ak")
    with rntuple.open(tmp_path / "glob.root") as f:
        got = f["t"].arrays(filter_field=lambda x: x.top_level and x.name in ("i32", "Jet_pt", "vs"))
    assert same(ak.to_list(got[one.fields]), ak.to_list(ak.concatenate([one, one, one]))) is None
    with rntuple.open(tmp_path / "two.root") as f:
        assert f["t"].num_entries == 2 * KINDS_ENTRIES


def test_inputs_must_have_the_same_branches(tmp_path, root_files):
    out = tmp_path / "mixed.root"
    proc = run("convert", root_files["kinds"], f"{NANO_TREE}:Events", str(out), check=1)
    assert "nanoAOD_2015_CMS_Open_Data_ttbar.root:Events does not have the branches of the first input" in proc.stderr
    assert not out.exists() and not leftovers(str(tmp_path))


def test_compression_and_cluster_size(tmp_path, root_files, big_tree):
    out = tmp_path / "lz4.root"
    run("convert", big_tree, str(out), "--compression", "lz4", "--cluster-size", "8 MB", "--name", "Big")
    with rntuple.open(out) as f:
        nt = f["Big"]
        assert nt.num_entries == BIG_ENTRIES
        assert len(nt.clusters) > 3
    ranges = uproot.open(out)["Big"].page_link_list
    assert {r.compression_settings for cluster in ranges for r in cluster if not r.suppressed} == {404}
    run("convert", root_files["kinds"], str(tmp_path / "z9.root"), "-c", "zstd:9")
    ranges = uproot.open(tmp_path / "z9.root")["t"].page_link_list
    assert {r.compression_settings for cluster in ranges for r in cluster if not r.suppressed} == {509}
    run("convert", root_files["kinds"], str(tmp_path / "none.root"), "-c", "none")
    ranges = uproot.open(tmp_path / "none.root")["t"].page_link_list
    assert {r.compression_settings for cluster in ranges for r in cluster if not r.suppressed} == {0}


# ---------------------------------------------------------------------------
# Parquet
# ---------------------------------------------------------------------------

ROUND_TRIP = [
    (NANO_RNTUPLE, "Events"),
    (os.path.join(DATA, "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root"), "Events"),
    (os.path.join(DATA, "ntpl001_staff_rntuple_v1-0-1-0.root"), "Staff"),
    (os.path.join(DATA, "test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root"), "ntuple"),
    (os.path.join(DATA, "test_nested_structs_rntuple_v1-0-0-0.root"), "ntuple"),
    (os.path.join(DATA, "test_class_inheritance_rntuple_v1-0-0-1.root"), "rntpl"),
    (os.path.join(DATA, "test_split_3e4_rntuple_v1-0-0-0.root"), "ntuple"),
    (os.path.join(DATA, "test_extension_columns_rntuple_v1-0-0-0.root"), "ntuple"),
]


@pytest.mark.parametrize("source", ROUND_TRIP, ids=[os.path.basename(p) for p, _ in ROUND_TRIP])
def test_rntuple_parquet_rntuple_round_trip(tmp_path, source):
    path, name = source
    parquet = tmp_path / "x.parquet"
    back = tmp_path / "back.root"
    run("convert", f"{path}:{name}", str(parquet))
    run("convert", str(parquet), str(back))  # the RNTuple's name comes back from the Parquet metadata
    meta = json.loads(pq.read_schema(parquet).metadata[b"rntuple"])
    assert meta["name"] == name
    with rntuple.open(path) as f, rntuple.open(back) as g:
        a, b = f[name], g[name]
        # every field with its C++ type and the projected fields come back, the values bit for bit
        assert [(x.name, x.type_name, x.type_alias, x.projected) for x in a.fields] == [
            (x.name, x.type_name, x.type_alias, x.projected) for x in b.fields
        ]
        d = same(ak.to_list(a.arrays()), ak.to_list(b.arrays()))
        assert d is None, d
    # Parquet holds the values as Arrow has them (projected fields are not duplicated)
    table = pq.read_table(parquet)
    with rntuple.open(path) as f:
        nt = f[name]
        assert table.column_names == [x.name for x in nt.fields if not x.projected]
        expected = nt.arrays(filter_field=lambda x: not x.projected, library="pa").to_pylist()
        assert same(table.to_pylist(), expected) is None


def test_root_reads_the_parquet_round_trip(tmp_path):
    parquet, back = tmp_path / "nano.parquet", tmp_path / "nano.root"
    run("convert", f"{NANO_RNTUPLE}:Events", str(parquet), "--compression", "zstd")
    run("convert", str(parquet), str(back))
    dumps = root_dumps([(NANO_RNTUPLE, "Events"), (str(back), "Events")])
    assert dumps[(NANO_RNTUPLE, "Events")] == dumps[(str(back), "Events")]


def test_parquet_from_pandas(tmp_path):
    n = 1000
    rng = np.random.default_rng(5)
    df = pd.DataFrame(
        {
            "i": np.arange(n, dtype=np.int32),
            "x": rng.normal(size=n),
            "flag": rng.random(n) < 0.3,
            "name": [f"row {i}" for i in range(n)],
            "maybe": pd.array([None if i % 7 == 0 else i for i in range(n)], dtype="Int64"),
            "cat": pd.Categorical(["a", "b", "c", "a"] * (n // 4)),
            "hits": [list(range(i % 4)) for i in range(n)],
        }
    )
    parquet = tmp_path / "pandas.parquet"
    df.to_parquet(parquet, row_group_size=300)  # pandas marks every column optional (nullable)
    out = tmp_path / "pandas.root"
    proc = run("convert", str(parquet), str(out), "--step-size", "128")
    assert "RNTuple 'Events'" in proc.stdout  # no name in the Parquet file: the default
    with rntuple.open(out) as f:
        nt = f["Events"]
        types = {x.name: x.type_name for x in nt.fields}
        assert types == {
            "i": "std::int32_t",
            "x": "double",
            "flag": "bool",
            "name": "std::string",
            "maybe": "std::optional<std::int64_t>",  # the only column holding nulls
            "cat": "std::string",  # categorical: its values
            "hits": "std::vector<std::int64_t>",
        }
        got = nt.arrays(library="pa").to_pylist()
    expected = pq.read_table(parquet).to_pylist()
    assert same(got, [{k: (str(v) if k == "cat" else v) for k, v in row.items()} for row in expected]) is None


def test_parquet_codec_follows_compression(tmp_path):
    src = f"{NANO_RNTUPLE}:Events"
    run("convert", src, str(tmp_path / "a.parquet"), "--compression", "lz4")
    assert pq.ParquetFile(tmp_path / "a.parquet").metadata.row_group(0).column(0).compression == "LZ4"
    run("convert", src, str(tmp_path / "b.parquet"), "-c", "none")
    assert pq.ParquetFile(tmp_path / "b.parquet").metadata.row_group(0).column(0).compression == "UNCOMPRESSED"
    proc = run("convert", src, str(tmp_path / "c.parquet"), "-c", "lzma", check=1)
    assert "Parquet has no codec" in proc.stderr
    assert not (tmp_path / "c.parquet").exists() and not leftovers(str(tmp_path))


def test_parquet_output_that_cannot_be_written_leaves_nothing(tmp_path):
    out = tmp_path / "stl.parquet"
    out.write_bytes(b"previous content")
    src = os.path.join(DATA, "test_stl_containers_rntuple_v1-0-0-0.root") + ":ntuple"
    proc = run("convert", src, str(out), check=1)
    assert "cannot be written as Parquet" in proc.stderr and "union" in proc.stderr
    assert out.read_bytes() == b"previous content"  # replaced only by a complete output
    assert not leftovers(str(tmp_path))


# ---------------------------------------------------------------------------
# the command line: usage, errors, progress, interruption
# ---------------------------------------------------------------------------


def test_help_lists_every_command():
    proc = run("--help")
    for command in ("ls", "show", "dump", "convert", "draw", "help"):
        assert f"\n  {command} " in proc.stdout, command
    assert "TTree" in run("convert", "--help").stdout
    assert "usage: rntuple convert" in run("help", "convert").stdout
    assert run(check=2).stderr.count("convert") >= 1  # no subcommand: the help, as a usage error


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "required"),
        (["only_one.root"], "required"),
        (["a.root", "b.root", "--bogus"], "unrecognized arguments: --bogus"),
        (["a.root", "b.root", "--compression", "brotli"], "unknown compression algorithm 'brotli'"),
        (["a.root", "b.root", "--compression", "zstd:x"], "the level after ':' must be an integer"),
        (["a.root", "b.root", "--compression", "zstd:0"], "compression_level must be an integer from 1 to 99"),
        (["a.root", "b.root", "--cluster-size", "lots"], "memory size"),
        (["a.root", "b.root", "--step-size", "0"], "must be at least 1"),
    ],
)
def test_usage_errors(tmp_path, args, message):
    proc = run("convert", *args, cwd=str(tmp_path), check=2)
    assert "usage: rntuple convert" in proc.stderr and message in proc.stderr
    assert os.listdir(tmp_path) == []


def test_failures(tmp_path, root_files):
    text = tmp_path / "notes.txt"
    text.write_text("not a data file")
    cases = [
        ([str(tmp_path / "missing.root"), "out.root"], "missing.root: no such file"),
        ([str(tmp_path / "nothing*.root"), "out.root"], "no file matches the pattern"),
        ([f"{NANO_TREE}:Nope", "out.root"], "no object 'Nope' in this file (TTrees and RNTuples: ['Events'])"),
        ([str(text), "out.root"], "neither a ROOT file nor a Parquet file"),
        ([NANO_TREE, str(tmp_path / "no" / "such" / "dir" / "out.root")], "the output's directory does not exist"),
        ([NANO_TREE, str(tmp_path)], "the output is a directory"),
        ([NANO_TREE, "out.parquet"], "TTree -> Parquet is not supported"),
        ([f"{NANO_RNTUPLE}:Events", "again.root"], "is already an RNTuple"),
        ([os.path.join(DATA, "rntviewer-testfile-multiple-rntuples-v1-0-0-0.root"), "o.parquet"], "several"),
        ([root_files["split"], "split.root"], "branch 'm' (map<string,float>) is an object split into sub-branches"),
    ]
    for args, message in cases:
        proc = run("convert", *args, cwd=str(tmp_path), check=1)
        assert proc.stderr.startswith("rntuple convert: error: "), proc.stderr
        assert message in proc.stderr, (args, proc.stderr)
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
    # the output may not be an input
    copy = tmp_path / "kinds.root"
    shutil.copy(root_files["kinds"], copy)
    proc = run("convert", str(copy), str(copy), check=1)
    assert "is also an input" in proc.stderr


def test_python_api(tmp_path, root_files):
    result = rntuple.convert(root_files["kinds"] + ":t", tmp_path / "api.root", name="Kinds", progress=False)
    assert isinstance(result, rntuple.ConvertResult)
    assert (result.format, result.name, result.entries) == ("rntuple", "Kinds", KINDS_ENTRIES)
    assert result.size == os.path.getsize(tmp_path / "api.root")
    with pytest.raises(FileNotFoundError):
        rntuple.convert(tmp_path / "nope.root", tmp_path / "x.root")
    with pytest.raises(rntuple.ConvertError, match="no object 'T'"):
        rntuple.convert(root_files["kinds"] + ":T", tmp_path / "x.root")
    assert sorted(os.listdir(tmp_path)) == ["api.root"]


def test_progress_bar_only_when_asked_or_on_a_terminal(tmp_path, root_files):
    quiet = run("convert", root_files["kinds"], str(tmp_path / "a.root"))
    assert quiet.stderr == ""  # stderr is a pipe here: no progress bar
    shown = subprocess.run(
        [*cli(), "convert", root_files["kinds"], str(tmp_path / "b.root"), "--progress", "--step-size", "50"],
        capture_output=True,
        env=ENV,
    )
    assert shown.returncode == 0
    last = shown.stderr.decode().split("\r")[-1]
    assert shown.stderr.startswith(b"\r") and last.endswith("\n")
    assert f"100%  {KINDS_ENTRIES}/{KINDS_ENTRIES} entries" in last and "entries/s" in last
    assert run("convert", root_files["kinds"], str(tmp_path / "c.root"), "-q").stdout == ""


BIG_ENTRIES = 2_000_000
BIG_SCRIPT_VERSION = "1"


@pytest.fixture(scope="module")
def big_tree() -> str:
    """A TTree (written by uproot) that takes a few seconds to convert, cached."""
    path = os.path.join(cache_dir(), "convert", f"big-tree-{BIG_ENTRIES}-v{BIG_SCRIPT_VERSION}.root")
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = np.random.default_rng(1)
    with uproot.recreate(path + ".part", compression=uproot.ZLIB(1)) as f:
        step = 500_000
        for start in range(0, BIG_ENTRIES, step):
            counts = rng.poisson(3, step)
            total = int(counts.sum())
            jet = ak.zip(
                {
                    "pt": ak.unflatten(rng.exponential(30, total).astype(np.float32), counts),
                    "eta": ak.unflatten(rng.normal(0, 2, total).astype(np.float32), counts),
                }
            )
            data = {"x": rng.normal(size=step), "i": np.arange(start, start + step, dtype=np.int32), "Jet": jet}
            if start == 0:
                f.mktree("Events", {"x": np.float64, "i": np.int32, "Jet": jet.type})
            f["Events"].extend(data)
    os.replace(path + ".part", path)
    return path


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_conversion_leaves_nothing_behind(tmp_path, big_tree, sig, status):
    out = tmp_path / "out.root"
    out.write_bytes(b"the previous output")
    proc = subprocess.Popen(
        [*cli(), "convert", big_tree, str(out), "--step-size", "50000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        # As from a terminal: a test run started in the background (`cmd &`) ignores SIGINT, which children inherit.
        preexec_fn=_default_sigint,
    )
    deadline = time.monotonic() + 60
    while not leftovers(str(tmp_path)):  # the temporary output exists: the conversion is running
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    time.sleep(0.3)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == status, stderr
    assert b"Traceback" not in stderr and stdout == b""
    assert out.read_bytes() == b"the previous output"
    assert not leftovers(str(tmp_path)), os.listdir(tmp_path)
    assert not glob.glob(str(tmp_path / "*.part"))
