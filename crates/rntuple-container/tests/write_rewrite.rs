//! RNTuples written by ROOT's stand-alone writer (`RNTupleWriter::Recreate`),
//! rewritten key by key with `FileWriter`: every payload lands at the offset
//! ROOT gave it, split over the same keys with the same chunk offsets,
//! so the page locators stay valid and the copy is a complete RNTuple. ROOT's
//! `RNTupleReader` and uproot then read the copy's entries and must find the
//! original's. (ROOT's stand-alone writer uses the same 64-bit key headers and
//! `TFile` record as `FileWriter`, so the payloads start at the same offset when
//! the file name has the same length.)
//!
//! The ROOT and uproot part runs with the CI's Python environment
//! (`${RNTUPLE_CACHE:-$HOME/.cache/rntuple-ci}/venv`) and is skipped, with a
//! message, without it. The JSROOT part runs when `RNTUPLE_JSROOT_DIR` names a
//! directory holding `node_modules/jsroot` (`npm install jsroot`) and `node` is
//! on the path.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use rntuple_container::{Anchor, ChunkLayout, FileWriter, KeyInfo, RootFile, WriterOptions};
use rntuple_format::envelope::{parse_footer, parse_page_list};
use rntuple_format::Location;

/// Files written by ROOT's stand-alone RNTuple writer, with one RNTuple each,
/// and whether ROOT 6.40 and uproot 5.7 read their entries. Neither reads the
/// entries of `multikey.root`, though ROOT wrote it: ROOT's `RNTupleReader`
/// fails with "invalid read (expected bytes: 8008, read: 6234)" loading a
/// cluster whose pages are split over keys, uproot cannot parse the split
/// header envelope. That file is only compared byte by byte.
const FILES: [(&str, bool); 5] = [
    ("multikey.root", false), // this crate's tests/data: every envelope and page split over keys
    ("test_float_types_rntuple_v1-0-0-0.root", true),
    ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", true),
    ("test_splitint_rntuple_v1-0-1-0.root", true),
    ("ntpl001_staff_rntuple_v1-0-1-0.root", true),
];

fn data_file(name: &str) -> PathBuf {
    let own = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/")).join(name);
    if own.exists() {
        own
    } else {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/")).join(name)
    }
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rntuple-write-rewrite-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A payload (envelope or page, checksum included) of the original file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Payload {
    offset: u64,
    size: u64,
}

fn decompressed(file: &RootFile, offset: u64, size: u64, len: u64, max: u64) -> Vec<u8> {
    let raw = file.read_payload(offset, size, max).unwrap();
    if size == len {
        raw
    } else {
        rntuple_format::compression::decompress(&raw, len as usize, &Location::default()).unwrap()
    }
}

/// Every payload of the RNTuple `anchor`: header, footer, page lists, pages.
fn payloads(file: &RootFile, anchor: &Anchor) -> BTreeSet<Payload> {
    let max = anchor.max_key_size;
    let mut set = BTreeSet::from([
        Payload { offset: anchor.seek_header, size: anchor.nbytes_header },
        Payload { offset: anchor.seek_footer, size: anchor.nbytes_footer },
    ]);
    let footer = decompressed(file, anchor.seek_footer, anchor.nbytes_footer, anchor.len_footer, max);
    for group in parse_footer(&footer, true).unwrap().cluster_groups {
        let link = group.page_list;
        set.insert(Payload { offset: link.locator.offset, size: link.locator.size });
        let bytes = decompressed(file, link.locator.offset, link.locator.size, link.length, max);
        for cluster in parse_page_list(&bytes, true).unwrap().page_locations {
            for column in cluster {
                for page in column.pages {
                    let size = page.locator.size + if page.has_checksum { 8 } else { 0 };
                    set.insert(Payload { offset: page.locator.offset, size });
                }
            }
        }
    }
    set
}

/// The RBlob keys from `from` up to the first other key.
fn blob_keys(file: &RootFile, mut from: u64) -> Vec<KeyInfo> {
    let mut keys = Vec::new();
    loop {
        let key = file.key_at(from).unwrap();
        if key.class_name != "RBlob" {
            return keys;
        }
        from += u64::from(key.nbytes);
        keys.push(key);
    }
}

/// Rewrites the single RNTuple of `original` into `dir`, key by key as ROOT
/// wrote it: a payload split over keys with `write_blob` (which must split it
/// as ROOT did), every other key (one payload, or several pages packed
/// together) with `write_single_key_blob`. Returns the copy's path and the
/// RNTuple's name.
fn rewrite(original: &Path, dir: &Path) -> (PathBuf, String) {
    let what = original.display();
    let file = RootFile::open(original).unwrap();
    let names = file.rntuple_names().unwrap();
    assert_eq!(names.len(), 1, "{what}");
    let name = names[0].clone();
    let anchor = file.anchor(&name).unwrap();
    let max = anchor.max_key_size;
    // The copy gets the name the original's TFile record holds.
    let tfile_key = file.key_at(100).unwrap();
    assert_eq!((tfile_key.class_name.as_str(), tfile_key.version), ("TFile", 1004), "{what}");
    let copy = dir.join(&tfile_key.name);

    // Multi-key payloads by the offset of their chunk 2, the first key ROOT writes.
    let mut split = std::collections::HashMap::new();
    for p in payloads(&file, &anchor) {
        if let Some(layout) = ChunkLayout::compute(p.size, max, &Location::default()).unwrap() {
            let offsets = file.read_payload(p.offset + layout.first_chunk_len, 8, max).unwrap();
            split.insert(u64::from_le_bytes(offsets.try_into().unwrap()), (p, layout.n_chunks as usize));
        }
    }
    let options = WriterOptions::new().max_key_size(max).compression(file.header().compress);
    let mut w = FileWriter::create(&copy, options).unwrap();
    let data_start = 100 + u64::from(tfile_key.nbytes);
    assert_eq!(w.len(), data_start, "{what}: payloads start where ROOT's do");
    let keys = blob_keys(&file, data_start);
    let mut i = 0;
    let mut n_split = 0;
    while i < keys.len() {
        let key = &keys[i];
        assert_eq!(w.len(), key.seek_key, "{what}");
        if let Some((p, n_chunks)) = split.get(&key.payload_offset()) {
            let bytes = file.read_payload(p.offset, p.size, max).unwrap();
            assert_eq!(w.write_blob(&bytes).unwrap(), p.offset, "{what}: multi-key payload");
            i += n_chunks;
            n_split += 1;
        } else {
            let bytes = file.read_payload(key.payload_offset(), u64::from(key.stored_len()), u64::MAX).unwrap();
            let at = w.write_single_key_blob(&[&bytes], u64::from(key.obj_len)).unwrap();
            assert_eq!(at, key.payload_offset(), "{what}");
            i += 1;
        }
    }
    assert_eq!(n_split, split.len(), "{what}: every multi-key payload was met");
    w.write_anchor(&name, &anchor).unwrap();
    w.finish().unwrap();

    // Same keys, same bytes: only the time stamps (fDatime, 4 bytes at +10) differ.
    let ours = RootFile::open(&copy).unwrap();
    assert_eq!(ours.anchor(&name).unwrap(), anchor);
    let copied = blob_keys(&ours, data_start);
    assert_eq!(copied.len(), keys.len(), "{what}");
    let (a, b) = (std::fs::read(original).unwrap(), std::fs::read(&copy).unwrap());
    for k in &keys {
        let (start, end) = (k.seek_key as usize, (k.seek_key + u64::from(k.nbytes)) as usize);
        assert_eq!(a[start..start + 10], b[start..start + 10], "{what}: key at {start}");
        assert!(a[start + 14..end] == b[start + 14..end], "{what}: key at {start} differs");
    }
    (copy, name)
}

#[test]
fn payloads_land_where_root_put_them() {
    let dir = scratch("offsets");
    for (name, _) in FILES {
        let sub = dir.join(name.trim_end_matches(".root"));
        std::fs::create_dir_all(&sub).unwrap();
        rewrite(&data_file(name), &sub);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reads every entry of both files with ROOT (`RNTupleReader::Show`) and
/// uproot (`arrays()`), and compares.
const COMPARE: &str = r#"
import sys
import ROOT
import uproot

ROOT.gInterpreter.Declare(r'''
#include <ROOT/RNTupleReader.hxx>
#include <sstream>
std::string rntuple_write_test_show(const char *name, const char *path)
{
   auto reader = ROOT::RNTupleReader::Open(name, path);
   std::ostringstream os;
   os << reader->GetNEntries() << " entries\n";
   for (auto i : reader->GetEntryRange())
      reader->Show(i, os);
   return os.str();
}
''')
name, original, copy = sys.argv[1:]
a = ROOT.rntuple_write_test_show(name, original)
b = ROOT.rntuple_write_test_show(name, copy)
assert a == b, f"ROOT reads {copy} differently from {original}"
print(f"{copy}: {a.splitlines()[0]} read alike by ROOT")
x = uproot.open(original)[name].arrays()
y = uproot.open(copy)[name].arrays()
assert len(x) > 0 and x.to_list() == y.to_list(), f"uproot reads {copy} differently from {original}"
print(f"{copy}: {len(x)} entries read alike by uproot")
print("COMPARISON PASSED")
"#;

#[test]
fn root_and_uproot_read_the_rewritten_rntuples() {
    let cache = std::env::var_os("RNTUPLE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rntuple-ci")));
    let Some(python) = cache.map(|c| c.join("venv/bin/python")).filter(|p| p.exists()) else {
        println!("skipped: no Python environment with ROOT and uproot (RNTUPLE_CACHE or ~/.cache/rntuple-ci)");
        return;
    };
    let dir = scratch("read");
    for (name, readable) in FILES {
        if !readable {
            continue;
        }
        let sub = dir.join(name.trim_end_matches(".root"));
        std::fs::create_dir_all(&sub).unwrap();
        let original = data_file(name);
        let (copy, ntuple) = rewrite(&original, &sub);
        let out = Command::new(&python)
            .args(["-W", "ignore", "-c", COMPARE, &ntuple])
            .arg(&original)
            .arg(&copy)
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && stdout.contains("COMPARISON PASSED"), "{name}:\n{stdout}\n{stderr}");
        for bad in ["Warning in <", "Error in <"] {
            assert!(!stdout.contains(bad) && !stderr.contains(bad), "{name}:\n{stdout}\n{stderr}");
        }
        println!("{}", stdout.trim());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Reads every entry of both files with JSROOT (`rntupleProcess`) and prints
/// the entry count and a checksum over the given fields.
const JSROOT_COMPARE: &str = r#"
const [dir, original, copy, name, ...fields] = process.argv.slice(2);
const { openFile } = await import(`${dir}/node_modules/jsroot/modules/io.mjs`);
const { rntupleProcess } = await import(`${dir}/node_modules/jsroot/modules/rntuple.mjs`);
const { TSelector } = await import(`${dir}/node_modules/jsroot/modules/tree.mjs`);
const results = [];
for (const path of [original, copy]) {
   const ntuple = await (await openFile(path)).readObject(name);
   const selector = new TSelector();
   for (const f of fields)
      selector.addBranch(f);
   let n = 0, sum = 0;
   selector.Process = function() {
      n++;
      for (const f of fields) {
         const v = this.tgtobj[f];
         sum += Array.isArray(v) ? v.length : (typeof v === 'number' ? v : String(v).length);
      }
   };
   await rntupleProcess(ntuple, selector);
   results.push(`${n} entries, checksum ${sum}`);
}
if (results[0] !== results[1] || results[0].startsWith('0 '))
   throw new Error(`JSROOT reads ${copy} differently: ${results}`);
console.log(`${copy}: ${results[0]}, read alike by JSROOT`);
"#;

#[test]
fn jsroot_reads_the_rewritten_rntuples() {
    let Some(jsroot) = std::env::var_os("RNTUPLE_JSROOT_DIR").map(PathBuf::from) else {
        println!("skipped: set RNTUPLE_JSROOT_DIR to a directory with node_modules/jsroot to run");
        return;
    };
    let dir = scratch("jsroot");
    let cases: [(&str, &[&str]); 2] = [
        ("ntpl001_staff_rntuple_v1-0-1-0.root", &["Category", "Age", "Cost", "Nation"]),
        ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", &["one", "int_vector"]),
    ];
    let script = dir.join("compare.mjs");
    std::fs::write(&script, JSROOT_COMPARE).unwrap();
    for (name, fields) in cases {
        let sub = dir.join(name.trim_end_matches(".root"));
        std::fs::create_dir_all(&sub).unwrap();
        let original = data_file(name);
        let (copy, ntuple) = rewrite(&original, &sub);
        let out = Command::new("node")
            .arg(&script)
            .arg(&jsroot)
            .arg(&original)
            .arg(&copy)
            .arg(&ntuple)
            .args(fields)
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && stdout.contains("read alike by JSROOT"), "{name}:\n{stdout}\n{stderr}");
        println!("{}", stdout.trim());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
