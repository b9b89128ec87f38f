//! Reads the ROOT-written files of `tests/data/` (origin: scikit-hep-testdata,
//! see `tests/data/ORIGIN.md`). Values are compared with ROOT 6.40 itself by
//! the Python suite (`tests/python/test_root_reference.py`); these tests check
//! the engine's own invariants: everything reads, entry ranges and batches
//! agree with a full read, projections read only their pages.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rntuple::{Error, RNTupleFile, ReadOptions, RootFile};
use rntuple_container::{LocalFile, ReadAt};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn data(name: &str) -> PathBuf {
    data_dir().join(name)
}

fn root_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .expect("tests/data")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "root"))
        .collect();
    v.sort();
    v
}

fn rows(nt: &rntuple::RNTuple, batch: &arrow_array::RecordBatch) -> Vec<String> {
    let fields = nt.readable_fields();
    rntuple::json::entry_lines(&fields, batch).collect()
}

#[test]
fn every_rntuple_of_every_file_reads_completely() {
    let mut n_ntuples = 0;
    for path in root_files() {
        let f = RNTupleFile::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for name in f.rntuple_names().expect("names") {
            let nt = f.rntuple(&name).unwrap_or_else(|e| panic!("{}:{name}: {e}", path.display()));
            // Read in batches so the 10^8-entry file stays small in memory.
            let mut total = 0;
            for b in nt.iter_batches(None, 20_000_000, 0, u64::MAX) {
                let b = b.unwrap_or_else(|e| panic!("{}:{name}: {e}", path.display()));
                total += b.num_rows() as u64;
            }
            assert_eq!(total, nt.num_entries(), "{}:{name}", path.display());
            // The spec asks to skip fields of unknown types; none of ROOT's files has one.
            assert_eq!(nt.readable_fields().len(), nt.schema().fields.len(), "{}:{name}", path.display());
            n_ntuples += 1;
        }
    }
    assert!(n_ntuples >= 25, "only {n_ntuples} RNTuples found");
}

/// Entry ranges crossing cluster and cluster-group boundaries give exactly
/// the rows of a full read.
#[test]
fn entry_ranges_equal_slices_of_a_full_read() {
    let cases = [
        ("test_multiple_cluster_groups_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_index_multicluster_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_extension_columns_rntuple_v1-0-0-0.root", "ntuple"),
        ("Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root", "Events"),
        ("test_stl_containers_rntuple_v1-0-0-0.root", "ntuple"),
        ("test_emptystruct_invalidvar_rntuple_v1-0-0-0.root", "ntuple"),
    ];
    for (file, name) in cases {
        let f = RNTupleFile::open(data(file)).expect("open");
        let nt = f.rntuple(name).expect("rntuple");
        let all = rows(&nt, &nt.read_all().expect("read"));
        let n = all.len() as u64;
        assert!(n > 0);
        let mut bounds: Vec<u64> = vec![0, 1, n / 3, n / 2, n - 1, n];
        for c in &nt.descriptor().clusters {
            bounds.extend([c.first_entry, c.first_entry + 1, c.first_entry.saturating_sub(1)]);
        }
        bounds.sort();
        bounds.dedup();
        for &a in &bounds {
            for &b in bounds.iter().filter(|&&b| b >= a).take(6) {
                let part = rows(&nt, &nt.read(None, a, b).expect("range read"));
                assert_eq!(part, all[a as usize..b as usize], "{file} entries {a}..{b}");
            }
        }
        // Iteration in odd-sized steps concatenates to the full read.
        let mut it = Vec::new();
        for batch in nt.iter_batches(None, 7, 0, u64::MAX) {
            it.extend(rows(&nt, &batch.expect("batch")));
        }
        assert_eq!(it, all, "{file} iterated");
    }
}

/// Values ROOT 6.40 prints for this file (`tests/reference/root_dump.py
/// test_extension_columns_rntuple_v1-0-0-0.root ntuple --entries 198:202`):
/// the columns added by the model updater read as zeros before their first
/// element.
#[test]
fn deferred_columns_read_as_zeros_before_their_first_element() {
    let f = RNTupleFile::open(data("test_extension_columns_rntuple_v1-0-0-0.root")).expect("open");
    let nt = f.rntuple("ntuple").expect("rntuple");
    let got = rows(&nt, &nt.read(None, 198, 202).expect("read"));
    assert_eq!(
        got,
        [
            r#"{"int_field":198,"float_field":0.0,"intvec_field":[]}"#,
            r#"{"int_field":199,"float_field":0.0,"intvec_field":[]}"#,
            r#"{"int_field":0,"float_field":0.5,"intvec_field":[]}"#,
            r#"{"int_field":1,"float_field":1.5,"intvec_field":[]}"#,
        ]
    );
}

#[test]
fn unknown_field_is_a_not_found_error() {
    let f = RNTupleFile::open(data("test_int_float_rntuple_v1-0-0-0.root")).expect("open");
    let nt = f.rntuple("ntuple").expect("rntuple");
    let err = nt.read(Some(&["no_such_field"]), 0, 1).expect_err("must fail");
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("no_such_field"));
    let err = f.rntuple("nope").expect_err("must fail");
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

/// Storage that counts the bytes read through it.
#[derive(Debug)]
struct Counting {
    inner: LocalFile,
    bytes: AtomicU64,
}

impl ReadAt for Counting {
    fn size(&self) -> rntuple::Result<u64> {
        self.inner.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.inner.read_exact_at(offset, buf)
    }
}

/// A projection reads the pages of its columns and nothing else.
#[test]
fn a_projection_reads_only_its_pages() {
    let path = data("cmsopendata2015_ttbar_19980_NANOAOD_RNTupleImporter_rntuple_v1-0-0-1.root");
    let storage = Arc::new(Counting { inner: LocalFile::open(&path).expect("open"), bytes: AtomicU64::new(0) });
    let root = RootFile::from_storage(storage.clone()).expect("root");
    let f = RNTupleFile::from_root_file(root, ReadOptions::default());
    let nt = f.rntuple("Events").expect("rntuple");
    let field = nt.schema().field("run").expect("run");
    let cols = field.representations[0].clone();
    let page_bytes: u64 = nt
        .descriptor()
        .clusters
        .iter()
        .flat_map(|c| cols.iter().filter_map(move |&col| c.columns.get(col as usize)))
        .flat_map(|r| r.pages.iter())
        .map(|p| p.locator.size + if p.has_checksum { 8 } else { 0 })
        .sum();
    let before = storage.bytes.load(Ordering::Relaxed);
    let batch = nt.read(Some(&["run"]), 0, u64::MAX).expect("read");
    assert_eq!(batch.num_rows() as u64, nt.num_entries());
    let read = storage.bytes.load(Ordering::Relaxed) - before;
    assert_eq!(read, page_bytes, "bytes read for one column");
}

/// Checksums are verified by default; a corrupted page is reported with its
/// place, and the check can be turned off.
#[test]
fn page_checksum_mismatch_names_the_page() {
    let path = data("test_int_float_rntuple_v1-0-0-0.root");
    let f = RNTupleFile::open(&path).expect("open");
    let nt = f.rntuple("ntuple").expect("rntuple");
    let page = nt.descriptor().clusters[0].columns[0].pages[0];
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[page.locator.offset as usize] ^= 0x40;
    let open = |verify| {
        let storage = Arc::new(rntuple_container::MemoryStorage::new(bytes.clone()));
        let root = RootFile::from_storage(storage).expect("root");
        RNTupleFile::from_root_file(root, ReadOptions::DEFAULT.with_verify_checksums(verify))
    };
    let err = open(true).rntuple("ntuple").expect("rntuple").read_all().expect_err("corrupt page");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("page 0 of column 0 in cluster 0"), "{msg}");
    assert!(msg.contains(&page.locator.offset.to_string()), "{msg}");
    // Without verification the flipped bit is no checksum error (it may or
    // may not decompress, but it never panics).
    if let Err(e) = open(false).rntuple("ntuple").expect("rntuple").read_all() {
        assert!(!matches!(e, Error::ChecksumMismatch { .. }), "{e}");
    }
}
