//! Planned I/O (issues 12 and 13): opening reads the metadata in at most
//! two round trips, and reads are shaped by the storage's hints or the reader's
//! overrides, with values equal to the default read.

mod write_support;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rntuple::{FieldNode, RNTuple, RNTupleFile, ReadOptions, RootFile, WriteOptions};
use rntuple_container::{IoHints, LocalFile, ReadAt};
use write_support::*;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

/// A local file that counts the calls reaching it (every call is one round
/// trip to a remote store) and answers with the hints it is given.
#[derive(Debug)]
struct Counting {
    inner: LocalFile,
    hints: IoHints,
    calls: AtomicU64,
    ranges: Mutex<Vec<(u64, usize)>>,
}

impl Counting {
    fn open(path: &Path, hints: IoHints) -> Arc<Self> {
        let inner = LocalFile::open(path).expect("open");
        Arc::new(Counting { inner, hints, calls: 0.into(), ranges: Mutex::default() })
    }

    fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    fn record(&self, ranges: &[(u64, usize)]) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.ranges.lock().expect("lock").extend_from_slice(ranges);
    }
}

impl ReadAt for Counting {
    fn size(&self) -> rntuple::Result<u64> {
        self.inner.size()
    }
    fn hints(&self) -> IoHints {
        self.hints
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.record(&[(offset, buf.len())]);
        self.inner.read_exact_at(offset, buf)
    }
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> rntuple::Result<Vec<Vec<u8>>> {
        self.record(ranges);
        self.inner.read_ranges(ranges)
    }
    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> rntuple::Result<()> {
        self.record(ranges);
        self.inner.read_ranges_into(ranges, out)
    }
}

/// Round trips and bytes read of opening the RNTuple `name` of `path`
/// (`None`: the first one), the file's size and the RNTuple's entries.
fn open_round_trips(path: &Path, name: Option<&str>) -> (u64, u64, u64, u64) {
    let storage = Counting::open(path, IoHints::LOCAL);
    let root = RootFile::from_storage(storage.clone()).expect("root");
    let f = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let name = name.map_or_else(|| f.rntuple_names().expect("names").remove(0), str::to_string);
    let nt = f.rntuple(&name).expect("rntuple");
    let bytes = storage.ranges.lock().expect("lock").iter().map(|r| r.1 as u64).sum();
    (storage.calls(), bytes, storage.inner.size().expect("size"), nt.num_entries())
}

/// Many clusters in several groups, with pages enough that header, footer
/// and page lists lie far from both ends of a file of several MiB.
/// Written once per test process (the tests run in parallel).
fn ours() -> PathBuf {
    static WRITTEN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            let path = scratch("planned-io-ours.root");
            let options = WriteOptions {
                approx_zipped_cluster_size: 200_000,
                max_unzipped_page_size: 8192,
                cluster_group_size: 3,
                ..Default::default()
            };
            rntuple::write_batches(&path, "t", [everything(60_000, 41)], &HashMap::new(), options).expect("write");
            path
        })
        .clone()
}

#[test]
fn metadata_takes_at_most_two_round_trips() {
    // Written by ROOT (tests/data/ORIGIN.md), every RNTuple of every file.
    // The largest, ATLAS PHYSLITE (2 MiB, written and updated by Athena),
    // has its key list in the middle of the file and its four anchors at
    // three other places: a key list, an anchor and the envelopes would be
    // three round trips after the first without reading the small rest of
    // the file at once.
    let mut checked = 0;
    for entry in std::fs::read_dir(data("")).expect("tests/data") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "root") {
            continue;
        }
        let Ok(file) = RNTupleFile::open(&path) else { continue };
        let Ok(names) = file.rntuple_names() else { continue };
        for name in names {
            if file.rntuple(&name).is_err() {
                continue; // not readable at all (tested elsewhere)
            }
            let (trips, _, size, _) = open_round_trips(&path, Some(&name));
            println!("{} {name}: {trips} round trips for {size} bytes", path.display());
            assert!(trips <= 2, "{} {name}: {trips} round trips", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked} RNTuples checked");
    let physlite = data("uproot-physlite-rntuple_v1-0-0-0.root");
    for name in ["EventData", "DataHeader", "DataHeaderForm", "EventTag"] {
        let (trips, _, size, entries) = open_round_trips(&physlite, Some(name));
        assert!(size > 2_000_000 && trips <= 2, "PHYSLITE {name}: {trips} round trips");
        assert!(name != "EventData" || entries > 0);
    }
    let nano = data("cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root");
    assert!(open_round_trips(&nano, None).3 > 0);
    let path = ours();
    let (trips, bytes, size, entries) = open_round_trips(&path, None);
    assert!(entries > 0);
    println!("ours: {trips} round trips, {bytes} bytes for {size} bytes");
    let nt = RNTupleFile::open(&path).expect("open").rntuple("t").expect("rntuple");
    assert!(size > 4 << 20 && nt.descriptor().num_cluster_groups > 2, "{size} bytes");
    assert!(trips <= 2, "ours: {trips} round trips");
    // A file larger than head, tail and the rest read at once is not read
    // whole: head, tail, and the page lists.
    use rntuple_container::file::speculative::{SPECULATIVE_HEAD, SPECULATIVE_TAIL};
    assert!(bytes < SPECULATIVE_HEAD + SPECULATIVE_TAIL + (64 << 10), "ours: {bytes} bytes read on open");
}

/// The page extents of the columns of `fields` in every cluster.
fn extents(nt: &RNTuple, fields: &[&FieldNode]) -> BTreeSet<(u64, u64)> {
    page_extents(nt, fields, 0..nt.descriptor().clusters.len())
}

/// Merges sorted extents across gaps of at most `gap` into requests of at
/// most `max` bytes, independently of the planner; returns the requests.
fn merged(extents: &BTreeSet<(u64, u64)>, gap: u64, max: u64) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &(offset, len) in extents {
        match ranges.last_mut() {
            Some(last) if offset <= last.1 + gap && (offset + len).max(last.1) - last.0 <= max => {
                last.1 = last.1.max(offset + len)
            }
            _ => ranges.push((offset, offset + len)),
        }
    }
    ranges
}

/// A projection of one cluster read with the storage's hints and with the
/// reader's overrides: the requests reaching the storage are the plan of
/// the page locators under those limits, and the values do not change.
#[test]
fn requests_follow_the_storage_hints_and_the_overrides() {
    let path = ours();
    let reference = RNTupleFile::open(&path).expect("open").rntuple("t").expect("rntuple");
    let first = reference.descriptor().clusters[0].clone();
    let (a, b) = (first.first_entry, first.first_entry + first.num_entries);
    let fields = reference.readable_fields();
    let chosen: Vec<&FieldNode> = fields.iter().copied().step_by(3).collect();
    let names: Vec<&str> = chosen.iter().map(|f| f.name.as_str()).collect();
    let expected = reference.read_with(Some(&names), a, b, &ReadOptions::DEFAULT.with_threads(1)).expect("read");
    let in_cluster: BTreeSet<(u64, u64)> = {
        let all = extents(&reference, &chosen);
        let c = &reference.descriptor().clusters[0];
        let inside = |e: &(u64, u64)| c.columns.iter().any(|r| r.pages.iter().any(|p| p.locator.offset == e.0));
        all.into_iter().filter(inside).collect()
    };
    let wide = IoHints { coalesce_gap: 1 << 20, max_request: 64 << 20, max_in_flight: 4 };
    let cases = [
        // (storage hints, reader overrides, gap and max request in force)
        (IoHints::LOCAL, ReadOptions::DEFAULT, IoHints::LOCAL.coalesce_gap, IoHints::LOCAL.max_request),
        (wide, ReadOptions::DEFAULT, 1 << 20, 64 << 20),
        (wide, ReadOptions::DEFAULT.with_coalesce_gap(0), 0, 64 << 20),
        (IoHints::LOCAL, ReadOptions::DEFAULT.with_coalesce_gap(0).with_max_request(4096), 0, 4096),
    ];
    for (hints, options, gap, max) in cases {
        for t in [1, 2] {
            let storage = Counting::open(&path, hints);
            let root = RootFile::from_storage(storage.clone()).expect("root");
            let nt = RNTupleFile::from_root_file(root, options).rntuple("t").expect("rntuple");
            storage.ranges.lock().expect("lock").clear();
            let got = nt.read_with(Some(&names), a, b, &options.with_threads(t)).expect("read");
            assert_eq!(got, expected, "{hints:?} {options:?}");
            let mut sent: Vec<(u64, u64)> =
                storage.ranges.lock().expect("lock").iter().map(|&(o, l)| (o, o + l as u64)).collect();
            sent.sort();
            assert_eq!(sent, merged(&in_cluster, gap, max), "gap {gap}, max {max}, {t} threads");
        }
    }
}

/// A remote store for tests: serves a local file under the `plannedio://`
/// scheme (`plannedio://host/<absolute path>`) and counts the bytes it sends.
#[derive(Debug, Default)]
struct Served {
    bytes: AtomicU64,
}

#[derive(Debug)]
struct ServedFile {
    file: LocalFile,
    served: Arc<Served>,
}

impl ReadAt for ServedFile {
    fn size(&self) -> rntuple::Result<u64> {
        self.file.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.served.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.file.read_exact_at(offset, buf)
    }
}

impl rntuple_container::storage::Backend for Served {
    fn open(&self, url: &str) -> rntuple::Result<Arc<dyn ReadAt>> {
        let path = url.strip_prefix("plannedio://host").expect("test URL");
        let served = SERVED.get().expect("registered").clone();
        Ok(Arc::new(ServedFile { file: LocalFile::open(path)?, served }))
    }
}

static SERVED: std::sync::OnceLock<Arc<Served>> = std::sync::OnceLock::new();

/// The second read of the same columns, in another handle (another
/// process), transfers no remote bytes; the values are those of a local read.
#[test]
fn the_second_read_through_the_cache_transfers_no_remote_bytes() {
    let served = SERVED.get_or_init(Arc::default).clone();
    rntuple_container::storage::register_backend("plannedio", served.clone());
    let path = ours();
    let url = format!("plannedio://host{}", path.display());
    let cache_dir = scratch("planned-io-cache");
    let _ = std::fs::remove_dir_all(&cache_dir);
    let cache = rntuple_container::CacheConfig::new(&cache_dir);
    let local = RNTupleFile::open(&path).expect("open").rntuple("t").expect("rntuple");
    let names: Vec<String> = local.readable_fields().iter().step_by(4).map(|f| f.name.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let expected = local.read(Some(&names), 0, u64::MAX).expect("read");
    let mut transferred = Vec::new();
    for _ in 0..2 {
        let before = served.bytes.load(Ordering::Relaxed);
        let f = RNTupleFile::open_cached(&url, ReadOptions::DEFAULT, Some(cache.clone())).expect("open");
        let nt = f.rntuple("t").expect("rntuple");
        assert_eq!(nt.read(Some(&names), 0, u64::MAX).expect("read"), expected);
        let stats = f.root_file().storage().transport_stats().expect("cache stats");
        transferred.push((served.bytes.load(Ordering::Relaxed) - before, stats.cache_bytes));
    }
    let needed = local.io_stats().bytes_needed;
    assert!(transferred[0].0 >= needed, "{transferred:?}");
    assert_eq!(transferred[1].0, 0, "{transferred:?}");
    assert!(transferred[1].1 >= needed, "{transferred:?}");
    let _ = std::fs::remove_dir_all(&cache_dir);
}

/// The report's figures are those of the plan computed here from the page
/// locators of the fields read (leaf fields: pages are read in file order).
#[test]
fn the_io_report_matches_the_plan_of_the_fields_read() {
    let path = ours();
    let f = RNTupleFile::open(&path).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    let leaves: Vec<&FieldNode> = nt.readable_fields().into_iter().filter(|f| f.children.is_empty()).take(3).collect();
    assert_eq!(leaves.len(), 3);
    let names: Vec<&str> = leaves.iter().map(|f| f.name.as_str()).collect();
    let needed = extents(&nt, &leaves);
    let plan = merged(&needed, rntuple::MAX_GAP, rntuple::MAX_REQUEST);
    let (requests, read) = (plan.len() as u64, plan.iter().map(|r| r.1 - r.0).sum::<u64>());
    let needed_bytes: u64 = needed.iter().map(|e| e.1).sum();
    nt.read(Some(&names), 0, u64::MAX).expect("read");
    let report = nt.io_report();
    assert_eq!((report.io.requests, report.io.bytes_read, report.io.bytes_needed), (requests, read, needed_bytes));
    assert_eq!(report.file_size, std::fs::metadata(&path).expect("size").len());
    assert_eq!(report.average_request(), read / requests);
    assert!(report.wall_time() > std::time::Duration::ZERO && report.read_rate() > 0.0);
    assert_eq!(report.wire, None, "a local file has no wire figures");
    let text = report.to_string();
    println!("{text}");
    for line in [
        format!("rntuple I/O report: {} (t)", path.display()),
        format!("requests:     {requests} in 1 vectored reads, {} pages", needed.len()),
        format!("bytes:        {needed_bytes} B"),
        format!("{read} B"),
        format!("file read:    {:.2}% of {} B", 100.0 * read as f64 / report.file_size as f64, report.file_size),
        "cache hits:   0 (0 B)".to_string(),
    ] {
        assert!(text.contains(&line), "{line:?} not in\n{text}");
    }
}
