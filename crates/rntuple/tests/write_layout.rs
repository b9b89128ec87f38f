//! Issue 23: the default writer lays a cluster's pages out as ROOT's
//! buffered sink does (grouped by column, coalesced into keys, same-page
//! merging) while holding no cluster's worth of compressed pages: its pages
//! wait in a scratch file until the commit. Its files are byte for byte
//! those of `group_pages_by_column` (pages held in memory), a sparse read
//! of them needs the same few ranges, and its memory stays that of its
//! page buffers.

mod write_support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use rntuple::container::write::{FileWriter, WriterOptions};
use rntuple::{RNTupleFile, RNTupleWriter, WriteOptions};
use write_support::*;

/// A written file: its bytes, its path and the writer's high-water mark.
struct Written {
    bytes: Vec<u8>,
    path: PathBuf,
    high_water: u64,
}

/// Writes `batches` into `<dir>/out.root` at a fixed time, so that equal
/// RNTuples give equal files.
fn write(dir: &str, batches: &[RecordBatch], options: WriteOptions, keys: WriterOptions) -> Written {
    let dir = scratch(&format!("layout-{dir}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("out.root");
    let mut file = FileWriter::create(&path, keys.timestamp(1_700_000_000)).expect("create");
    let mut w = RNTupleWriter::new(&mut file, "t", &batches[0].schema(), &HashMap::new(), options).expect("writer");
    for b in batches {
        w.write_batch(b).expect("write");
    }
    let high_water = w.memory_use().high_water;
    w.close().expect("close");
    file.finish().expect("finish");
    assert_eq!(std::fs::read_dir(&dir).expect("dir").count(), 1, "{}: a scratch file was left", dir.display());
    Written { bytes: std::fs::read(&path).expect("read"), path, high_water }
}

/// Writes `batches` streamed (the default) and grouped in memory; checks
/// that the files are the same bytes and read back; returns both.
fn both(name: &str, batches: &[RecordBatch], options: WriteOptions, keys: WriterOptions) -> (Written, Written) {
    let streamed = write(name, batches, WriteOptions { group_pages_by_column: false, ..options.clone() }, keys.clone());
    let grouped =
        write(&format!("{name}-grouped"), batches, WriteOptions { group_pages_by_column: true, ..options }, keys);
    assert!(streamed.bytes == grouped.bytes, "{name}: the default writer's bytes differ from the grouped writer's");
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let nt = RNTupleFile::open(&streamed.path).expect("open").rntuple("t").expect("rntuple").read_all().expect("read");
    assert_same_rows(&expected, &rows(&nt), name);
    (streamed, grouped)
}

fn clusters(w: &Written) -> usize {
    RNTupleFile::open(&w.path).expect("open").rntuple("t").expect("rntuple").descriptor().clusters.len()
}

/// `n` entries of `columns` double columns, a tenth of them equal (so that
/// same-page merging applies) and an int column.
fn wide(n: usize, columns: usize, seed: u64) -> RecordBatch {
    let mut rng = Rng::new(seed);
    let mut fields = vec![Field::new("id", DataType::Int32, false)];
    let mut arrays: Vec<ArrayRef> = vec![Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i * 3)))];
    for c in 0..columns {
        let v: Vec<f64> = if c % 10 == 9 {
            (0..n).map(|i| (i % 97) as f64).collect()
        } else {
            (0..n).map(|_| (rng.below(1000) as f64) / 8.0).collect()
        };
        fields.push(Field::new(format!("c{c}"), DataType::Float64, false));
        arrays.push(Arc::new(Float64Array::from(v)));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("batch")
}

#[test]
fn the_default_writer_writes_the_grouped_bytes() {
    let nested = [everything(8_000, 5), everything(5_000, 6)];
    let many = [wide(12_000, 120, 7)];
    let multi = WriteOptions {
        approx_zipped_cluster_size: 60_000,
        max_unzipped_page_size: 8192,
        cluster_group_size: 2,
        ..Default::default()
    };
    let keys = WriterOptions::default();
    let small_keys = WriterOptions { max_key_size: 3000, ..Default::default() };
    let cases: Vec<(&str, &[RecordBatch], WriteOptions, WriterOptions)> = vec![
        ("nested", &nested, multi.clone(), keys.clone()),
        ("nested-uncompressed", &nested, WriteOptions { compression: 0, ..multi.clone() }, keys.clone()),
        ("nested-no-checksums", &nested, WriteOptions { page_checksums: false, ..multi.clone() }, keys.clone()),
        (
            "nested-lz4-2-threads",
            &nested,
            WriteOptions { compression: 404, compression_threads: 2, ..multi.clone() },
            keys.clone(),
        ),
        ("nested-small-keys", &nested, multi.clone(), small_keys.clone()),
        ("many", &many, multi.clone(), keys.clone()),
        ("many-unmerged", &many, WriteOptions { same_page_merging: false, ..multi.clone() }, keys.clone()),
        ("many-one-cluster", &many, WriteOptions::default(), keys.clone()),
        ("many-small-keys-uncompressed", &many, WriteOptions { compression: 0, ..multi.clone() }, small_keys),
    ];
    for (name, batches, options, keys) in cases {
        let (streamed, _) = both(name, batches, options.clone(), keys);
        if options.approx_zipped_cluster_size == multi.approx_zipped_cluster_size {
            assert!(clusters(&streamed) >= 3, "{name}: {} clusters", clusters(&streamed));
        }
    }
    // Merging found the equal columns: the merged file is smaller.
    let merged = write("many-merged", &many, multi.clone(), WriterOptions::default());
    let unmerged =
        write("many-unmerged-2", &many, WriteOptions { same_page_merging: false, ..multi }, WriterOptions::default());
    assert!(merged.bytes.len() < unmerged.bytes.len(), "{} vs {}", merged.bytes.len(), unmerged.bytes.len());
}

#[test]
fn a_sparse_read_needs_the_ranges_of_the_grouped_layout() {
    let batches = [wide(40_000, 60, 11)];
    let options =
        WriteOptions { approx_zipped_cluster_size: 400_000, max_unzipped_page_size: 16384, ..Default::default() };
    let (streamed, grouped) = both("sparse", &batches, options, WriterOptions::default());
    let n_clusters = clusters(&streamed);
    assert!(n_clusters >= 3, "{n_clusters} clusters");
    let requests = |w: &Written| {
        let f = RNTupleFile::open(&w.path).expect("open");
        let nt = f.rntuple("t").expect("rntuple");
        nt.read(Some(&["c3", "c17", "c42"]), 0, u64::MAX).expect("read");
        let report = nt.io_report();
        // Each column's pages of a cluster lie together: one extent per
        // column and cluster.
        let fields: Vec<&rntuple::FieldNode> =
            nt.readable_fields().into_iter().filter(|f| ["c3", "c17", "c42"].contains(&f.name.as_str())).collect();
        let mut pages = 0;
        for cluster in 0..n_clusters {
            for f in &fields {
                let extents: Vec<(u64, u64)> = page_extents(&nt, &[f], [cluster]).into_iter().collect();
                pages += extents.len();
                assert!(
                    extents.windows(2).all(|e| e[0].0 + e[0].1 == e[1].0),
                    "{}: pages of cluster {cluster} apart: {extents:?}",
                    f.name
                );
            }
        }
        assert!(pages > 2 * fields.len() * n_clusters, "{pages} pages");
        report.io.requests
    };
    let (ours, theirs) = (requests(&streamed), requests(&grouped));
    assert_eq!(ours, theirs);
    assert!(ours <= 3 * n_clusters as u64, "{ours} requests for 3 columns of {n_clusters} clusters");
}

#[test]
fn the_default_writer_holds_no_cluster() {
    // One cluster of about 19 MB of pages, 96 columns.
    let batches = [wide(25_000, 95, 13)];
    let options = WriteOptions { page_buffer_budget: 4 << 20, compression: 0, ..Default::default() };
    let (streamed, grouped) = both("memory", &batches, options, WriterOptions::default());
    assert_eq!(clusters(&streamed), 1);
    assert!(grouped.high_water > 15_000_000, "grouped: {}", grouped.high_water);
    // The page buffers (4 MiB), the queue (1 MiB, twice), a blob on its way
    // to the scratch file (a page or two of 1 MiB) and the 1 MiB buffer that
    // copies the pages.
    let bound = (4 << 20) + 2 * (2 << 20) + 3 * (1 << 20);
    assert!(streamed.high_water <= bound, "streamed: {} (bound {bound})", streamed.high_water);
}
