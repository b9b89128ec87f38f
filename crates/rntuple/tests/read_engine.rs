//! The read engine's promises (DESIGN.md "I/O is planned", "Parallel by
//! default"): the same arrays and the same errors for any number of threads,
//! entry ranges that give exactly the written rows, and I/O that is planned
//! and merged — counted by `IoStats` and checked here against the page
//! lists and the documented gap policy.

mod write_support;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rntuple::{FieldNode, IoStats, RNTuple, RNTupleFile, ReadOptions, RootFile, WriteOptions, MAX_GAP};
use rntuple_container::{LocalFile, ReadAt};
use write_support::*;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "root"))
        .collect();
    v.sort();
    v
}

fn threads(n: usize) -> ReadOptions {
    ReadOptions::DEFAULT.with_threads(n)
}

/// Many small clusters in several groups, small pages: every kind of field.
fn small_clusters() -> WriteOptions {
    WriteOptions {
        approx_zipped_cluster_size: 4000,
        max_unzipped_cluster_size: 64 * 1024,
        initial_unzipped_page_size: 16,
        max_unzipped_page_size: 512,
        cluster_group_size: 4,
        ..Default::default()
    }
}

/// Writes `everything(n, seed)` once per test process and returns its path.
fn written(name: &str, n: usize, seed: u64, options: WriteOptions) -> (PathBuf, arrow_array::RecordBatch) {
    let batch = everything(n, seed);
    let path = scratch(&format!("read-engine-{name}.root"));
    rntuple::write_batches(&path, "t", [batch.clone()], &HashMap::new(), options).expect("write");
    (path, batch)
}

#[test]
fn any_number_of_threads_reads_the_same_arrays() {
    let (path, _) = written("threads", 3000, 5, small_clusters());
    let mut paths = files_in(&data(""));
    paths.push(path);
    for path in paths {
        let f = RNTupleFile::open(&path).expect("open");
        // The 2,402-field file once (it takes long in debug builds), the others in several ranges.
        let many = path.to_string_lossy().contains("physlite");
        for name in f.rntuple_names().expect("names") {
            let nt = f.rntuple(&name).expect("rntuple");
            let n = nt.num_entries();
            let ranges = if many {
                vec![(0, n)]
            } else if n > 3_000_000 {
                // The 10^8-entry file: its first and last clusters.
                vec![(0, 2_000_000), (n - 1_500_000, n)]
            } else {
                vec![(0, n), (n / 3, 2 * n / 3), (1.min(n), n.saturating_sub(1))]
            };
            for (a, b) in ranges {
                let one = nt.read_with(None, a, b, &threads(1)).expect("read");
                for t in if many { &[2][..] } else { &[2, 3][..] } {
                    let other = nt.read_with(None, a, b, &threads(*t)).expect("read");
                    assert_eq!(one, other, "{}:{name} entries {a}..{b}, {t} threads", path.display());
                }
            }
        }
    }
}

#[test]
fn corrupt_files_fail_the_same_way_with_any_number_of_threads() {
    let mut checked = 0;
    for path in files_in(&data("bad")) {
        let outcome = |t: usize| -> String {
            let opts = threads(t);
            let run = || -> rntuple::Result<()> {
                let root = RootFile::open(&path)?;
                let f = RNTupleFile::from_root_file(root, opts);
                for name in f.rntuple_names()? {
                    let nt = f.rntuple(&name)?;
                    nt.read_with(None, 0, 1 << 16, &opts)?;
                }
                Ok(())
            };
            match run() {
                Ok(()) => "ok".into(),
                Err(e) => e.to_string(),
            }
        };
        let one = outcome(1);
        for t in [2, 3] {
            assert_eq!(one, outcome(t), "{} with {t} threads", path.display());
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} corrupt files");
}

/// Every single-entry range and a sweep of ranges give exactly the rows written
/// (ranges cut collections, strings, optionals and variants in every cluster).
#[test]
fn entry_ranges_give_the_rows_written() {
    let (path, batch) = written("ranges", 1500, 9, small_clusters());
    let expected = rows(&batch);
    let f = RNTupleFile::open(&path).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    assert!(nt.descriptor().clusters.len() > 5);
    for t in [1, 2] {
        for i in (0..1500).step_by(7) {
            let got = rows(&nt.read_with(None, i, i + 1, &threads(t)).expect("read"));
            assert_eq!(got, expected[i as usize..i as usize + 1], "entry {i}, {t} threads");
        }
        for (a, b) in [(0, 1500), (13, 1499), (100, 900), (750, 751), (1, 2), (1499, 1500), (600, 600)] {
            let got = rows(&nt.read_with(None, a, b, &threads(t)).expect("read"));
            assert_eq!(got, expected[a as usize..b as usize], "entries {a}..{b}, {t} threads");
        }
    }
}

/// The page extents of the columns of `fields` in `cluster`.
fn extents(nt: &RNTuple, fields: &[&FieldNode], cluster: usize) -> BTreeSet<(u64, u64)> {
    page_extents(nt, fields, [cluster])
}

/// The documented policy, independently: sorted extents merge when the gap
/// to the previous one is at most `MAX_GAP`. Returns (requests, bytes).
fn merged(extents: &BTreeSet<(u64, u64)>) -> (u64, u64) {
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &(offset, len) in extents {
        match ranges.last_mut() {
            Some(last) if offset <= last.1 + MAX_GAP => last.1 = last.1.max(offset + len),
            _ => ranges.push((offset, offset + len)),
        }
    }
    (ranges.len() as u64, ranges.iter().map(|r| r.1 - r.0).sum())
}

fn stats_of(nt: &RNTuple, fields: Option<&[&str]>, a: u64, b: u64, t: usize) -> IoStats {
    nt.reset_io_stats();
    nt.read_with(fields, a, b, &threads(t)).expect("read");
    nt.io_stats()
}

#[test]
fn a_whole_cluster_is_one_request_whatever_its_columns() {
    let (path, _) = written("clusters", 3000, 17, small_clusters());
    let f = RNTupleFile::open(&path).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    let fields = nt.readable_fields();
    let d = nt.descriptor();
    assert!(d.clusters.len() > 5 && d.columns.len() > 40, "{} clusters, {} columns", d.clusters.len(), d.columns.len());
    for (i, c) in d.clusters.iter().enumerate() {
        let needed = extents(&nt, &fields, i);
        let pages: u64 = needed.iter().map(|e| e.1).sum();
        let first = needed.iter().next().expect("pages").0;
        let end = needed.iter().map(|e| e.0 + e.1).max().expect("pages");
        for t in [1, 2] {
            let s = stats_of(&nt, None, c.first_entry, c.first_entry + c.num_entries, t);
            assert_eq!(s.requests, 1, "cluster {i}: {s:?}");
            assert_eq!(s.vectored_calls, 1, "cluster {i}: {s:?}");
            assert_eq!(s.bytes_needed, pages, "cluster {i}: {s:?}");
            assert_eq!(s.bytes_read, end - first, "cluster {i}: {s:?}");
        }
    }
    // All clusters at once: one batch, neighbouring clusters merged.
    let s = stats_of(&nt, None, 0, u64::MAX, 2);
    assert_eq!(s.vectored_calls, 1, "{s:?}");
    assert!(s.requests <= d.num_cluster_groups as u64, "{s:?}");
}

/// Three fields of the 2,402-field PHYSLITE file: their pages, plus gaps of at
/// most `MAX_GAP` between them, and nothing else.
#[test]
fn a_projection_reads_its_pages_and_small_gaps_only() {
    let f = RNTupleFile::open(data("uproot-physlite-rntuple_v1-0-0-0.root")).expect("open");
    let nt = f.rntuple(&f.rntuple_names().expect("names")[0]).expect("rntuple");
    assert_eq!(nt.descriptor().clusters.len(), 1);
    let all = nt.readable_fields();
    // Fields far apart in column order, with data.
    let with_pages: Vec<&FieldNode> = all.iter().copied().filter(|f| !extents(&nt, &[f], 0).is_empty()).collect();
    let chosen = [with_pages[0], with_pages[with_pages.len() / 2], with_pages[with_pages.len() - 1]];
    let names: Vec<&str> = chosen.iter().map(|f| f.name.as_str()).collect();
    let needed = extents(&nt, &chosen, 0);
    let (requests, bytes) = merged(&needed);
    for t in [1, 2] {
        let s = stats_of(&nt, Some(&names), 0, u64::MAX, t);
        assert_eq!(s.bytes_needed, needed.iter().map(|e| e.1).sum::<u64>(), "{names:?}: {s:?}");
        assert_eq!((s.requests, s.bytes_read), (requests, bytes), "{names:?}: {s:?}");
    }
    let file_size = std::fs::metadata(data("uproot-physlite-rntuple_v1-0-0-0.root")).expect("size").len();
    assert!(bytes * 20 < file_size, "{bytes} of {file_size} bytes for three fields");
}

/// Storage that counts the calls and bytes that reach it.
#[derive(Debug)]
struct Counting {
    inner: LocalFile,
    calls: AtomicU64,
    bytes: AtomicU64,
}

impl ReadAt for Counting {
    fn size(&self) -> rntuple::Result<u64> {
        self.inner.size()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(buf.len() as u64, Ordering::Relaxed);
        self.inner.read_exact_at(offset, buf)
    }
}

/// The counters match what the storage sees, and an entry range of 1% of a
/// big cluster reads a small fraction of it, in one request per nesting
/// level of the fields it cuts.
#[test]
fn io_stats_match_the_storage_and_ranges_read_a_fraction() {
    let options = WriteOptions { max_unzipped_page_size: 4096, ..Default::default() };
    let (path, batch) = written("fraction", 20_000, 23, options);
    let storage = Arc::new(Counting { inner: LocalFile::open(&path).expect("open"), calls: 0.into(), bytes: 0.into() });
    let root = RootFile::from_storage(storage.clone()).expect("root");
    let f = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let nt = f.rntuple("t").expect("rntuple");
    assert_eq!(nt.descriptor().clusters.len(), 1);
    let (calls, bytes) = (storage.calls.load(Ordering::Relaxed), storage.bytes.load(Ordering::Relaxed));
    let full = stats_of(&nt, None, 0, u64::MAX, 2);
    assert_eq!(full.requests, storage.calls.load(Ordering::Relaxed) - calls);
    assert_eq!(full.bytes_read, storage.bytes.load(Ordering::Relaxed) - bytes);
    assert_eq!(full.requests, 1, "{full:?}");

    let expected = rows(&batch);
    let (a, b) = (10_000, 10_200);
    nt.reset_io_stats();
    let got = rows(&nt.read_with(None, a, b, &threads(2)).expect("read"));
    assert_eq!(got, expected[a as usize..b as usize]);
    let part = nt.io_stats();
    // Pages of 1% of the entries (the small gaps between them are read too).
    assert!(part.bytes_needed * 10 < full.bytes_needed, "1% of the entries: {part:?} vs all: {full:?}");
    assert!(part.bytes_read <= full.bytes_read, "{part:?} vs all: {full:?}");
    // Offsets of cut collections first (vectors of vectors: two levels), then the rest.
    assert!(part.vectored_calls <= 3, "{part:?}");
}

#[test]
fn read_column_gives_the_values_of_a_read() {
    let (path, _) = written("column", 1000, 3, small_clusters());
    let f = RNTupleFile::open(path).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    assert!(nt.descriptor().clusters.len() > 1);
    let batch = nt.read_all().expect("read");
    let col = nt.readable_fields()[0].representations[0][0];
    let mut values = Vec::new();
    for c in &nt.descriptor().clusters {
        let into = Some(rntuple_format::ColumnValues::I64(Vec::new()));
        match nt.page_source().read_column_into(col, c, 0, c.num_entries, into).expect("column") {
            rntuple_format::ColumnValues::I64(v) => values.extend(v),
            other => panic!("unexpected {}", other.kind()),
        }
    }
    let wide = arrow_cast::cast(batch.column(0), &arrow_schema::DataType::Int64).expect("cast");
    let wide = wide.as_any().downcast_ref::<arrow_array::Int64Array>().expect("int64");
    assert_eq!(wide.values().to_vec(), values);
}

/// A `double` field stored as Real32Quant is dequantised in double precision,
/// as ROOT does for double fields (spec "Real32Quant"; ROOT's
/// `Quantize::UnquantizeReals`). The file and the expected values come from
/// ROOT 6.40 (`tests/reference/make_quant_double.py` writes the file and
/// prints what ROOT reads back): x is 32 bits in [-10, 25], y 20 bits in [-1, 1].
#[test]
fn double_fields_stored_as_real32quant_read_as_root_reads_them() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float64Type;
    let x_root = [
        1.9999999965075403,
        -10.0,
        25.0,
        3.2999999991850935,
        0.10000000011641497,
        12.500000000582077,
        -9.999998997664079,
        24.999999991850927,
    ];
    let y_root = [
        0.49999952316238705,
        -1.0,
        1.0,
        0.300000476837613,
        0.09999952316238714,
        -0.7000004768376129,
        9.536752259009518e-07,
        0.9990005483632549,
    ];
    let file = RNTupleFile::open(data("double_real32quant_rntuple_v1-0-2-0.root")).unwrap();
    let nt = file.rntuple("quant").unwrap();
    for t in [1, 2] {
        let batch = nt.read_with(None, 0, u64::MAX, &threads(t)).unwrap();
        for (name, expected) in [("x", &x_root), ("y", &y_root)] {
            let got = batch.column_by_name(name).unwrap().as_primitive::<Float64Type>();
            assert_eq!(got.values().to_vec(), expected.to_vec(), "{name}, {t} threads");
        }
        // An entry range cut inside the page takes the other decoding path.
        let batch = nt.read_with(Some(&["x"]), 3, 5, &threads(t)).unwrap();
        assert_eq!(batch.column(0).as_primitive::<Float64Type>().values().to_vec(), x_root[3..5].to_vec());
    }
    // The column read on its own, into doubles.
    let src = nt.page_source();
    let cluster = &nt.descriptor().clusters[0];
    let col = nt.schema().field("x").unwrap().representations[0][0];
    let values = src.read_column_into(col, cluster, 0, 8, Some(rntuple_format::ColumnValues::F64(Vec::new()))).unwrap();
    assert_eq!(values, rntuple_format::ColumnValues::F64(x_root.to_vec()));
}

/// A read of more than two batches of pages ([`rntuple::BATCH_BYTES`]
/// each): with several threads the pages of the next batch are decoded
/// while those of the previous one finish. The values are the ones written,
/// and with one page corrupted in the second batch and one in the third,
/// every number of threads reports the earlier page.
#[test]
fn reads_of_several_batches_give_the_values_written_and_the_first_error() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let n = 3 * rntuple::BATCH_BYTES as usize / 8;
    let x: Vec<i64> = (0..n as i64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as i64)).collect();
    let column: arrow_array::ArrayRef = Arc::new(arrow_array::Int64Array::from(x.clone()));
    let batch = arrow_array::RecordBatch::try_from_iter([("x", column)]).expect("batch");
    let path = scratch("read-engine-batches.root");
    let options = WriteOptions { compression: 0, ..Default::default() };
    rntuple::write_batches(&path, "t", [batch], &HashMap::new(), options).expect("write");
    let f = RNTupleFile::open(&path).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    for t in [1, 2, 3] {
        let stats = stats_of(&nt, None, 0, n as u64, t);
        assert!(stats.vectored_calls >= 3, "{stats:?}");
        let got = nt.read_with(None, 0, n as u64, &threads(t)).expect("read");
        assert_eq!(got.column(0).as_primitive::<Int64Type>().values().to_vec(), x, "{t} threads");
    }
    // One page past 9 MiB (second batch), one past 17 MiB (third batch).
    let x_field = nt.schema().field("x").expect("field");
    let pages: Vec<(u64, u64)> = page_extents(&nt, &[x_field], 0..nt.descriptor().clusters.len()).into_iter().collect();
    let start = pages[0].0;
    let at = |mib: u64| pages.iter().find(|p| p.0 >= start + (mib << 20)).expect("page").0;
    let (early, late) = (at(9), at(17));
    let mut bytes = std::fs::read(&path).expect("read file");
    bytes[early as usize + 100] ^= 0xff;
    bytes[late as usize + 100] ^= 0xff;
    let bad = scratch("read-engine-batches-corrupt.root");
    std::fs::write(&bad, bytes).expect("write file");
    let f = RNTupleFile::open(&bad).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    let errors: Vec<String> = [1, 2, 3]
        .into_iter()
        .map(|t| nt.read_with(None, 0, n as u64, &threads(t)).expect_err("corrupt page").to_string())
        .collect();
    assert!(errors[0].contains("checksum mismatch") && errors[0].contains(&early.to_string()), "{}", errors[0]);
    assert_eq!(errors[1], errors[0]);
    assert_eq!(errors[2], errors[0]);
}
