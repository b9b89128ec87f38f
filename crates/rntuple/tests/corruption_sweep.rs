//! Single-byte corruption sweep: every byte of real files written by ROOT is
//! changed (xor 0xFF, and one bit flipped), and the file read back from
//! memory with checksum verification on (the default). The reader must
//! either return the original values or report an error: never different
//! values without one, never a panic; and every change inside a checksummed
//! region (anchor fields, envelopes, pages and their checksums) must be an
//! error. Results are counted per region of the file; with
//! `RNTUPLE_SWEEP_REPORT=<dir>` each file's counts are written there as
//! JSON (`bench/corruption_sweep.py` turns them into the table of
//! `docs/reliability.md`).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatch;
use rntuple::container::{MemoryStorage, OpenOptions, RootFile};
use rntuple::format::compression::decompress;
use rntuple::format::envelope::{parse_footer, parse_page_list};
use rntuple::format::Location;
use rntuple::{RNTupleFile, ReadOptions};

fn data(name: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name);
    std::fs::read(&p).expect("a file of tests/data")
}

/// Regions of a ROOT file with an RNTuple, in the order later ones override
/// earlier ones where they overlap.
const CHECKSUMMED: [&str; 6] =
    ["anchor", "header envelope", "footer envelope", "page lists", "pages", "page checksums"];

/// An envelope as stored: offset, size on disk, size decompressed.
type Span = (u64, u64, u64);

/// The envelope stored at `span` in `bytes`, decompressed; `None` if that fails.
fn envelope_at(bytes: &[u8], span: Span, max_key_size: u64) -> Option<Vec<u8>> {
    let root = RootFile::from_storage(Arc::new(MemoryStorage::new(bytes.to_vec()))).ok()?;
    let (seek, n, len) = span;
    let raw = root.read_payload(seek, n, max_key_size).ok()?;
    if n == len {
        return Some(raw);
    }
    decompress(&raw, len as usize, &Location::new("envelope", Some(seek))).ok()
}

/// Which region every byte of `bytes` belongs to, from the structures the
/// file itself describes (read with checksums on, from the good file), and
/// where the envelopes are (with the anchors' maximum key size).
fn regions(bytes: &[u8]) -> (Vec<&'static str>, Vec<Span>, u64) {
    let mut spans = Vec::new();
    let mut max_key_size = 0;
    let mut map = vec!["gaps"; bytes.len()];
    let mut mark = |from: u64, len: u64, what: &'static str| {
        let from = from as usize;
        let to = (from + len as usize).min(map.len());
        for r in map.iter_mut().take(to).skip(from) {
            *r = what;
        }
    };
    let root = RootFile::from_storage(Arc::new(MemoryStorage::new(bytes.to_vec()))).expect("good file");
    let h = root.header().clone();
    mark(0, h.begin, "TFile header");
    // Every record from fBEGIN to fEND is a key (a negative size marks a free gap).
    let mut at = h.begin;
    while at < h.end.min(bytes.len() as u64) {
        let Ok(key) = root.key_at(at) else { break };
        let n = key.nbytes as i32;
        if n <= 0 {
            at += u64::from(n.unsigned_abs()).max(1);
            continue;
        }
        mark(at, u64::from(key.key_len), "key headers");
        // ROOT writes the key list and the free-segment list under keys without a class name.
        let payload = match key.class_name.as_str() {
            _ if at == h.seek_free => "free segments list",
            _ if at == root.top_directory().seek_keys => "directories and key lists",
            "TFile" | "TDirectory" | "TDirectoryFile" => "directories and key lists",
            "TList" if at == h.seek_info => "streamer info",
            "ROOT::RNTuple" => "anchor",
            _ => "other payloads",
        };
        mark(at + u64::from(key.key_len), u64::from(key.nbytes) - u64::from(key.key_len), payload);
        if key.is_rntuple() {
            mark(key.payload_offset(), 6, "anchor prefix (not checksummed)");
        }
        at += u64::from(key.nbytes);
    }
    // The top directory's key list and free segments sit past fEND in some files.
    for key in root.keys().expect("keys") {
        if !key.is_rntuple() {
            continue;
        }
        let a = root.anchor_of(&key).expect("anchor");
        max_key_size = a.max_key_size;
        spans.push((a.seek_header, a.nbytes_header, a.len_header));
        spans.push((a.seek_footer, a.nbytes_footer, a.len_footer));
        mark(a.seek_header, a.nbytes_header, "header envelope");
        mark(a.seek_footer, a.nbytes_footer, "footer envelope");
        let envelope =
            |seek: u64, n: u64, len: u64| envelope_at(bytes, (seek, n, len), a.max_key_size).expect("envelope");
        let footer = parse_footer(&envelope(a.seek_footer, a.nbytes_footer, a.len_footer), true).expect("footer");
        for g in &footer.cluster_groups {
            let l = &g.page_list;
            mark(l.locator.offset, l.locator.size, "page lists");
            spans.push((l.locator.offset, l.locator.size, l.length));
            let pl = parse_page_list(&envelope(l.locator.offset, l.locator.size, l.length), true).expect("page list");
            for page in pl.page_locations.iter().flatten().flat_map(|c| c.pages.iter()) {
                mark(page.locator.offset, page.locator.size, "pages");
                if page.has_checksum {
                    mark(page.locator.offset + page.locator.size, 8, "page checksums");
                }
            }
        }
    }
    (map, spans, max_key_size)
}

/// The RNTuples `names` (those of the good file) read completely by name,
/// as a user who knows what the file holds reads them, checksums verified.
fn read_everything(bytes: Vec<u8>, names: &[String]) -> Result<Vec<(String, RecordBatch)>, String> {
    let root = RootFile::from_storage_with(Arc::new(MemoryStorage::new(bytes)), OpenOptions::new())
        .map_err(|e| e.to_string())?;
    let file = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let mut out = Vec::new();
    for name in names.iter().cloned() {
        let t = file.rntuple(&name).map_err(|e| e.to_string())?;
        out.push((name, t.read_all().map_err(|e| e.to_string())?));
    }
    Ok(out)
}

#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    bytes: u64,
    trials: u64,
    error: u64,
    same: u64,
    /// Changes of compressed envelope bytes that decompress to the same
    /// envelope (its checksum covers the decompressed bytes; spec "Envelopes").
    same_envelope: u64,
    silent: u64,
    panic: u64,
}

/// Changes every `stride`-th byte of `name` both ways; returns the counts
/// per region and the trials that changed values silently or panicked.
fn sweep(name: &str, stride: usize) -> (BTreeMap<&'static str, Counts>, Vec<String>) {
    let good = data(name);
    let (map, spans, max_key_size) = regions(&good);
    let names = RNTupleFile::from_root_file(
        RootFile::from_storage(Arc::new(MemoryStorage::new(good.clone()))).expect("good file"),
        ReadOptions::DEFAULT,
    )
    .rntuple_names()
    .expect("names");
    let expected = read_everything(good.clone(), &names).expect("the good file reads");
    let mut counts: BTreeMap<&'static str, Counts> = BTreeMap::new();
    let mut bad = Vec::new();
    for i in (0..good.len()).step_by(stride) {
        let c = counts.entry(map[i]).or_default();
        c.bytes += 1;
        for flip in [0xFFu8, 1 << (i % 8)] {
            let mut corrupt = good.clone();
            corrupt[i] ^= flip;
            c.trials += 1;
            match catch_unwind(AssertUnwindSafe(|| read_everything(corrupt, &names))) {
                Err(_) => {
                    c.panic += 1;
                    bad.push(format!("byte {i} ({}) ^ {flip:#04x}: panic", map[i]));
                }
                Ok(Err(_)) => c.error += 1,
                Ok(Ok(got)) if got == expected => {
                    c.same += 1;
                    if CHECKSUMMED.contains(&map[i]) {
                        // Only a change that leaves the decompressed envelope as it was may pass.
                        let span = spans.iter().find(|s| (s.0..s.0 + s.1).contains(&(i as u64)));
                        let mut corrupt = good.clone();
                        corrupt[i] ^= flip;
                        match span {
                            Some(&sp)
                                if envelope_at(&corrupt, sp, max_key_size) == envelope_at(&good, sp, max_key_size) =>
                            {
                                c.same_envelope += 1
                            }
                            _ => bad.push(format!("byte {i} ({}) ^ {flip:#04x}: not detected", map[i])),
                        }
                    }
                }
                Ok(Ok(got)) => {
                    c.silent += 1;
                    let names: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
                    let rows: Vec<usize> = got.iter().map(|g| g.1.num_rows()).collect();
                    bad.push(format!(
                        "byte {i} ({}) ^ {flip:#04x}: different values, no error (RNTuples {names:?}, rows {rows:?})",
                        map[i]
                    ));
                }
            }
        }
    }
    if let Some(dir) = std::env::var_os("RNTUPLE_SWEEP_REPORT") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("report dir");
        let regions: serde_json::Map<String, serde_json::Value> = counts
            .iter()
            .map(|(r, c)| {
                let v = serde_json::json!({"bytes": c.bytes, "trials": c.trials, "error": c.error,
                    "same": c.same, "same_envelope": c.same_envelope, "silent": c.silent, "panic": c.panic});
                (r.to_string(), v)
            })
            .collect();
        let report =
            serde_json::json!({"file": name, "size": good.len(), "stride": stride, "regions": regions, "bad": bad});
        std::fs::write(dir.join(format!("{name}.json")), serde_json::to_string_pretty(&report).expect("json"))
            .expect("write report");
    }
    (counts, bad)
}

fn check(name: &str, stride: usize) {
    let (counts, bad) = sweep(name, stride);
    eprintln!("{name}: {counts:#?}");
    assert!(bad.is_empty(), "{name}: {} trials went wrong:\n{}", bad.len(), bad.join("\n"));
    for region in CHECKSUMMED {
        if let Some(c) = counts.get(region) {
            assert_eq!(c.error + c.same_envelope, c.trials, "{name}: changes in the {region} not all detected: {c:?}");
        }
    }
    // The sweep saw the structures it is about.
    for region in ["anchor", "header envelope", "footer envelope", "page lists", "pages"] {
        assert!(counts.get(region).is_some_and(|c| c.bytes > 0), "{name}: no {region} found");
    }
}

/// A small file with many field types (collections, strings, variants): every byte.
#[test]
fn every_byte_of_a_small_file() {
    check("test_stl_containers_rntuple_v1-0-0-0.root", 1);
}

/// A multi-cluster file with several cluster groups (page lists): every
/// third byte here, every byte in `bench/corruption_sweep.py`.
#[test]
fn every_third_byte_of_a_multi_cluster_file() {
    let stride = std::env::var("RNTUPLE_SWEEP_STRIDE").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    check("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", stride);
}

/// The region map itself, on the small file: the anchor's 6-byte prefix and
/// 72 checksummed bytes (spec "Anchor"; DESIGN.md facts 2 and 3).
#[test]
fn region_map_finds_the_anchor() {
    let (map, spans, _) = regions(&data("test_stl_containers_rntuple_v1-0-0-0.root"));
    assert_eq!(spans.len(), 3, "header, footer, one page list");
    assert_eq!(map.iter().filter(|r| **r == "anchor prefix (not checksummed)").count(), 6);
    assert_eq!(map.iter().filter(|r| **r == "anchor").count(), 72);
    assert_eq!(map[0], "TFile header");
}
