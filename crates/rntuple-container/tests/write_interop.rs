//! Files written by `FileWriter`, opened by ROOT 6.40 (`TFile`, `rootls`,
//! `RMiniFileReader`, the reader ROOT's RNTuple engine uses) and uproot, through
//! the CI's Python environment (`${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}/venv`).
//! Skipped, with a message, when that environment does not exist.
//!
//! The anchors point at made-up envelopes (the RNTuple write engine is not part
//! of this crate), so the checks stop at the container: keys, directories,
//! cycles, anchor fields, streamer info, `TFile::Map`, and every payload as
//! ROOT's own multi-key reader reassembles it.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use rntuple_container::{Anchor, FileWriter, WriterOptions};

/// The Python with ROOT and uproot, if the CI environment exists.
fn python() -> Option<PathBuf> {
    let cache = std::env::var_os("RNTUPLE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rntuple-ci")))?;
    let python = cache.join("venv/bin/python");
    if python.exists() {
        Some(python)
    } else {
        println!("skipped: no Python environment with ROOT and uproot at {}", python.display());
        None
    }
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-write-interop-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed) ^ (i >> 8) as u8).collect()
}

/// Runs `script` with `args`; returns stdout and stderr, panicking with both
/// when it fails.
fn run_python(python: &Path, script: &str, args: &[&str]) -> (String, String) {
    let out = Command::new(python).arg("-W").arg("ignore").arg("-c").arg(script).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "python failed ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}", out.status);
    (stdout, stderr)
}

/// One anchor of the test file.
struct Written {
    /// "path;cycle"
    key: String,
    anchor: Anchor,
    /// Files holding the expected header and footer bytes.
    header: PathBuf,
    footer: PathBuf,
    /// Highest cycle of its path (what RMiniFileReader finds).
    current: bool,
}

/// Writes a file with small and multi-key blobs and anchors at the top, in
/// `dir`, `dir/sub`, and two cycles of `dir/Events`; returns the anchors and
/// the number of RBlob keys.
fn write_file(dir: &Path, name: &str, options: WriterOptions) -> (PathBuf, Vec<Written>, usize) {
    let path = dir.join(name);
    let max = options.max_key_size;
    let mut w = FileWriter::create(&path, options).unwrap();
    let mut n_keys = 0usize;
    let mut keys_of = |n: u64| {
        n_keys += rntuple_container::ChunkLayout::compute(n, max, &Default::default())
            .unwrap()
            .map_or(1, |l| l.n_chunks as usize);
    };
    for (i, n) in [10usize, 3000, 70_000, 1].into_iter().enumerate() {
        let b = bytes(n, i as u8);
        let cut = n / 3;
        w.write_blob_parts(&[&b[..cut], &b[cut..]]).unwrap();
        keys_of(n as u64);
    }
    let mut written = Vec::new();
    let entries = [
        ("Events", 1, true),
        ("dir/sub/Events", 1, true),
        ("dir/Events", 1, false),
        ("dir/Events", 2, true),
        ("dir/Other", 1, true),
    ];
    for (i, (p, cycle, current)) in entries.into_iter().enumerate() {
        let h = bytes(5000 + 1000 * i, 50 + i as u8);
        let f = bytes(100 + i, 90 + i as u8);
        let sh = w.write_blob(&h).unwrap();
        let sf = w.write_blob_parts_with_len(&[&f], 3 * f.len() as u64).unwrap();
        keys_of(h.len() as u64);
        keys_of(f.len() as u64);
        let anchor = Anchor {
            version_epoch: 1,
            version_major: 0,
            version_minor: 2,
            version_patch: 0,
            seek_header: sh,
            nbytes_header: h.len() as u64,
            len_header: 2 * h.len() as u64,
            seek_footer: sf,
            nbytes_footer: f.len() as u64,
            len_footer: 3 * f.len() as u64,
            max_key_size: max,
        };
        w.write_anchor(p, &anchor).unwrap();
        let stem = format!("{name}-{i}");
        let (header, footer) = (dir.join(format!("{stem}.header")), dir.join(format!("{stem}.footer")));
        std::fs::write(&header, &h).unwrap();
        std::fs::write(&footer, &f).unwrap();
        written.push(Written { key: format!("{p};{cycle}"), anchor, header, footer, current });
    }
    w.finish().unwrap();
    (path, written, n_keys)
}

/// The expectations handed to the Python checks, as JSON.
fn spec(path: &Path, written: &[Written], n_blob_keys: usize) -> String {
    let mut anchors = String::new();
    for (i, w) in written.iter().enumerate() {
        let a = &w.anchor;
        let fields = [
            u64::from(a.version_epoch),
            u64::from(a.version_major),
            u64::from(a.version_minor),
            u64::from(a.version_patch),
            a.seek_header,
            a.nbytes_header,
            a.len_header,
            a.seek_footer,
            a.nbytes_footer,
            a.len_footer,
            a.max_key_size,
        ];
        let fields: Vec<String> = fields.iter().map(u64::to_string).collect();
        if i > 0 {
            anchors.push(',');
        }
        write!(
            anchors,
            r#"{{"key": "{}", "fields": [{}], "header": "{}", "footer": "{}", "current": {}}}"#,
            w.key,
            fields.join(", "),
            w.header.display(),
            w.footer.display(),
            w.current
        )
        .unwrap();
    }
    format!(
        r#"{{"file": "{}", "anchors": [{anchors}], "n_blob_keys": {n_blob_keys},
            "keys": {{"Events;1": "ROOT::RNTuple", "dir;1": "TDirectory", "dir/sub;1": "TDirectory",
                     "dir/sub/Events;1": "ROOT::RNTuple", "dir/Events;2": "ROOT::RNTuple",
                     "dir/Events;1": "ROOT::RNTuple", "dir/Other;1": "ROOT::RNTuple"}}}}"#,
        path.display()
    )
}

/// Checks with ROOT: TFile (keys, directories, anchors through `TFile::Get`,
/// streamer info, `ls`, `Map`), RMiniFileReader (anchors and payloads), rootls.
const ROOT_CHECKS: &str = r#"
import json, os, subprocess, sys
import ROOT

spec = json.load(open(sys.argv[1]))
path = spec["file"]
ROOT.gInterpreter.Declare(r'''
#include <ROOT/RMiniFile.hxx>
#include <ROOT/RNTuple.hxx>
#include <ROOT/RRawFile.hxx>
#include <TFile.h>
#include <fstream>
#include <string>
#include <vector>
namespace rntuple_write_test {
std::vector<unsigned long long> Fields(const ROOT::RNTuple &a)
{
   return {a.GetVersionEpoch(), a.GetVersionMajor(), a.GetVersionMinor(), a.GetVersionPatch(),
           a.GetSeekHeader(), a.GetNBytesHeader(), a.GetLenHeader(), a.GetSeekFooter(),
           a.GetNBytesFooter(), a.GetLenFooter(), a.GetMaxKeySize()};
}
std::vector<unsigned long long> FromTFile(TFile &f, const char *key)
{
   auto a = f.Get<ROOT::RNTuple>(key);
   return a ? Fields(*a) : std::vector<unsigned long long>{};
}
// Reads an anchor and its two envelopes as ROOT's RNTuple engine does.
std::vector<unsigned long long> FromMiniFile(const char *file, const char *name, const char *header, const char *footer)
{
   auto raw = ROOT::Internal::RRawFile::Create(file);
   ROOT::Internal::RMiniFileReader reader(raw.get());
   auto a = reader.GetNTuple(name).Unwrap();
   reader.SetMaxKeySize(a.GetMaxKeySize());
   reader.LoadStreamerInfo();
   std::string h(a.GetNBytesHeader(), '\0'), f(a.GetNBytesFooter(), '\0');
   reader.ReadBuffer(h.data(), h.size(), a.GetSeekHeader());
   reader.ReadBuffer(f.data(), f.size(), a.GetSeekFooter());
   std::ofstream(header, std::ios::binary) << h;
   std::ofstream(footer, std::ios::binary) << f;
   return Fields(a);
}
}
''')
t = ROOT.rntuple_write_test

f = ROOT.TFile.Open(path)
assert f and not f.IsZombie(), "TFile cannot open the file"
assert f.GetVersion() % 1000000 == 64000, f.GetVersion()
f.ls()
f.Map()

def walk(d, prefix=""):
    for key in d.GetListOfKeys():
        name = prefix + key.GetName()
        yield f"{name};{key.GetCycle()}", key.GetClassName()
        if key.GetClassName().startswith("TDirectory"):
            yield from walk(key.ReadObj(), name + "/")

found = dict(walk(f))
norm = lambda c: "TDirectory" if c.startswith("TDirectory") else c
assert {k: norm(c) for k, c in found.items()} == spec["keys"], found

for a in spec["anchors"]:
    got = list(t.FromTFile(f, a["key"]))
    assert got == a["fields"], (a["key"], got, a["fields"])

infos = f.GetStreamerInfoList()
names = [i.GetName() for i in infos]
assert names == ["ROOT::RNTuple"], names
info = infos.At(0)
assert info.GetClassVersion() == 2 and info.GetElements().GetEntries() == 11
f.Close()

for a in spec["anchors"]:
    if not a["current"]:
        continue  # RMiniFileReader takes the first key of a name: the highest cycle
    name = a["key"].split(";")[0]
    got = list(t.FromMiniFile(path, name, a["header"] + ".root", a["footer"] + ".root"))
    assert got == a["fields"], (name, got, a["fields"])
    for which in ("header", "footer"):
        expected = open(a[which], "rb").read()
        read = open(a[which] + ".root", "rb").read()
        assert read == expected, f"{name}: {which} differs as read by RMiniFileReader"

rootls = os.path.join(os.path.dirname(ROOT.__file__), "bin", "rootls")
out = subprocess.run([rootls, "-lr", path], capture_output=True, text=True, check=True)
print(out.stdout)
print(out.stderr, file=sys.stderr)
for k in spec["keys"]:
    name, cycle = k.rsplit("/", 1)[-1].split(";")
    assert f"{name};{cycle}" in out.stdout, (k, out.stdout)
print("ROOT CHECKS PASSED")
"#;

/// Checks with uproot: keys, class names, streamers, anchor members.
const UPROOT_CHECKS: &str = r#"
import json, sys
import uproot

spec = json.load(open(sys.argv[1]))
with uproot.open(spec["file"]) as f:
    assert f.classnames(recursive=True) == spec["keys"], f.classnames(recursive=True)
    assert sorted(f.keys(recursive=True)) == sorted(spec["keys"]), f.keys()
    streamers = f.file.streamers
    assert list(streamers) == ["ROOT::RNTuple"] and list(streamers["ROOT::RNTuple"]) == [2], streamers
    members = ["fVersionEpoch", "fVersionMajor", "fVersionMinor", "fVersionPatch", "fSeekHeader",
               "fNBytesHeader", "fLenHeader", "fSeekFooter", "fNBytesFooter", "fLenFooter", "fMaxKeySize"]
    for a in spec["anchors"]:
        obj = f[a["key"]]
        got = [int(obj.member(m)) for m in members]
        assert got == a["fields"], (a["key"], got, a["fields"])
print("UPROOT CHECKS PASSED")
"#;

/// Checks that neither ROOT nor uproot opens any of the files given.
const REFUSAL_CHECKS: &str = r#"
import sys
import ROOT
import uproot

for path in sys.argv[1:]:
    try:
        f = ROOT.TFile.Open(path)
        opened = bool(f) and not f.IsZombie()
    except OSError:
        opened = False
    assert not opened, f"ROOT opened {path}"
    try:
        uproot.open(path).keys()
    except Exception as e:
        print(f"uproot refuses {path}: {type(e).__name__}")
    else:
        raise AssertionError(f"uproot opened {path}")
print("REFUSAL CHECKS PASSED")
"#;

/// ROOT and uproot must not complain about a valid file.
fn assert_quiet(tool: &str, stdout: &str, stderr: &str) {
    for text in [stdout, stderr] {
        for bad in ["Warning in <", "Error in <", "Fatal in <", "Traceback"] {
            assert!(!text.contains(bad), "{tool} printed '{bad}':\n{stdout}\n{stderr}");
        }
    }
}

fn check_with_root_and_uproot(python: &Path, dir: &Path, path: &Path, written: &[Written], n_blob_keys: usize) {
    let spec_path = dir.join(format!("{}.json", path.file_name().unwrap().to_string_lossy()));
    std::fs::write(&spec_path, spec(path, written, n_blob_keys)).unwrap();
    let spec_arg = spec_path.to_str().unwrap();

    let (stdout, stderr) = run_python(python, ROOT_CHECKS, &[spec_arg]);
    assert!(stdout.contains("ROOT CHECKS PASSED"), "{stdout}\n{stderr}");
    assert_quiet("ROOT", &stdout, &stderr);
    // TFile::Map names every record.
    let map: Vec<&str> = stdout.lines().filter(|l| l.contains(" At:")).collect();
    let class_of = |l: &str| l.split_whitespace().nth(3).unwrap_or_default().to_string();
    let classes: Vec<String> = map.iter().map(|l| class_of(l)).collect();
    assert_eq!(classes.first().map(String::as_str), Some("TFile"), "{stdout}");
    assert_eq!(classes.iter().filter(|c| *c == "RBlob").count(), n_blob_keys, "{stdout}");
    assert_eq!(classes.iter().filter(|c| *c == "ROOT::RNTuple").count(), written.len(), "{stdout}");
    assert_eq!(classes.iter().filter(|c| *c == "KeysList").count(), 1, "{stdout}");
    assert_eq!(classes.iter().filter(|c| *c == "TDirectory").count(), 4, "2 subdirectories, 2 key lists: {stdout}");
    let tail: Vec<&str> = classes.iter().rev().take(3).map(String::as_str).collect();
    assert_eq!(tail, ["END", "FreeSegments", "StreamerInfo"], "{stdout}");
    // rootls -lr lists the tree.
    assert!(stdout.contains("TDirectoryFile"), "{stdout}");

    let (stdout, stderr) = run_python(python, UPROOT_CHECKS, &[spec_arg]);
    assert!(stdout.contains("UPROOT CHECKS PASSED"), "{stdout}\n{stderr}");
    assert_quiet("uproot", &stdout, &stderr);
}

#[test]
fn root_and_uproot_read_written_files() {
    let Some(python) = python() else { return };
    let dir = scratch("read");
    for (name, options) in [
        ("default.root", WriterOptions::new()),
        ("multikey.root", WriterOptions::new().max_key_size(1024).compression(101)),
        ("lz4.root", WriterOptions::new().max_key_size(4096).compression(404).timestamp(1_700_000_000)),
        ("uncompressed.root", WriterOptions::new().max_key_size(2000).compression(0)),
    ] {
        let (path, written, n_blob_keys) = write_file(&dir, name, options);
        check_with_root_and_uproot(&python, &dir, &path, &written, n_blob_keys);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A sparse file past 4 GB: the large forms of the header, the directory
/// records and the free segment.
#[test]
fn root_and_uproot_read_large_files() {
    let Some(python) = python() else { return };
    let dir = scratch("large");
    let name = "large.root";
    let path = dir.join(name);
    let max = 1u64 << 20;
    let mut w = FileWriter::create(&path, WriterOptions::new().max_key_size(max)).unwrap();
    let mut n_blob_keys = 0;
    while w.len() < (1 << 32) + (1 << 28) {
        w.write_zero_blob(max).unwrap();
        n_blob_keys += 1;
    }
    let h = bytes(2 * max as usize + 100, 1);
    let f = bytes(300, 2);
    let (sh, sf) = (w.write_blob(&h).unwrap(), w.write_blob(&f).unwrap());
    n_blob_keys += 4;
    let anchor = Anchor {
        version_epoch: 1,
        version_major: 0,
        version_minor: 2,
        version_patch: 0,
        seek_header: sh,
        nbytes_header: h.len() as u64,
        len_header: h.len() as u64,
        seek_footer: sf,
        nbytes_footer: f.len() as u64,
        len_footer: f.len() as u64,
        max_key_size: max,
    };
    let mut written = Vec::new();
    for (i, key) in ["Events;1", "dir/sub/Events;1", "dir/Events;1", "dir/Events;2", "dir/Other;1"].iter().enumerate() {
        let p = key.split(';').next().unwrap();
        w.write_anchor(p, &anchor).unwrap();
        let (header, footer) = (dir.join(format!("l{i}.header")), dir.join(format!("l{i}.footer")));
        std::fs::write(&header, &h).unwrap();
        std::fs::write(&footer, &f).unwrap();
        written.push(Written { key: key.to_string(), anchor: anchor.clone(), header, footer, current: i != 2 });
    }
    w.finish().unwrap();
    // Keep the Map output small: only the structure matters here.
    let spec_path = dir.join("large.json");
    std::fs::write(&spec_path, spec(&path, &written, n_blob_keys)).unwrap();
    let (stdout, stderr) = run_python(&python, ROOT_CHECKS, &[spec_path.to_str().unwrap()]);
    assert!(stdout.contains("ROOT CHECKS PASSED"), "{stderr}");
    assert_quiet("ROOT", &stdout, &stderr);
    let (stdout, stderr) = run_python(&python, UPROOT_CHECKS, &[spec_path.to_str().unwrap()]);
    assert!(stdout.contains("UPROOT CHECKS PASSED"), "{stdout}\n{stderr}");
    assert_quiet("uproot", &stdout, &stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn root_and_uproot_refuse_unfinished_files() {
    let Some(python) = python() else { return };
    let dir = scratch("unfinished");
    let dropped = dir.join("dropped.root");
    {
        let mut w = FileWriter::create(&dropped, WriterOptions::new().max_key_size(1000)).unwrap();
        let h = bytes(5000, 1);
        let sh = w.write_blob(&h).unwrap();
        let anchor = Anchor {
            version_epoch: 1,
            version_major: 0,
            version_minor: 2,
            version_patch: 0,
            seek_header: sh,
            nbytes_header: h.len() as u64,
            len_header: h.len() as u64,
            seek_footer: sh,
            nbytes_footer: h.len() as u64,
            len_footer: h.len() as u64,
            max_key_size: 1000,
        };
        w.write_anchor("Events", &anchor).unwrap();
    }
    let crashed = dir.join("crashed.root");
    let mut w = FileWriter::create(&crashed, WriterOptions::new()).unwrap();
    w.write_blob(&bytes(100, 2)).unwrap();
    std::mem::forget(w);
    let (stdout, stderr) = run_python(&python, REFUSAL_CHECKS, &[dropped.to_str().unwrap(), crashed.to_str().unwrap()]);
    assert!(stdout.contains("REFUSAL CHECKS PASSED"), "{stdout}\n{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
