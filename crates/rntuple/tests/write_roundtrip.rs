//! Write → read round trips through our own reader over a matrix of types,
//! compression settings, page and cluster sizes and cluster groups.

mod write_support;

use std::collections::HashMap;

use rntuple::{RNTupleFile, WriteOptions};
use write_support::*;

/// Small pages and clusters: many pages per cluster, many clusters, groups.
fn small(compression: u32) -> WriteOptions {
    WriteOptions {
        compression,
        approx_zipped_cluster_size: 3000,
        max_unzipped_cluster_size: 64 * 1024,
        initial_unzipped_page_size: 16,
        max_unzipped_page_size: 256,
        cluster_group_size: 3,
        ..Default::default()
    }
}

#[test]
fn every_type_every_compression_small_pages() {
    let batches = [everything(700, 1), everything(1, 2), everything(0, 3), everything(523, 4)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    for compression in [0, 505, 101, 207, 404] {
        let path = scratch(&format!("matrix-{compression}.root"));
        let back = round_trip(&path, &batches, &HashMap::new(), small(compression));
        assert_same_rows(&expected, &rows(&back), &format!("compression {compression}"));
        let f = RNTupleFile::open(&path).expect("open");
        let t = f.rntuple("t").expect("rntuple");
        let d = t.descriptor();
        assert!(d.clusters.len() > 5, "compression {compression}: {} clusters", d.clusters.len());
        assert!(d.num_cluster_groups > 1, "compression {compression}: {} groups", d.num_cluster_groups);
        let pages: usize = d.clusters[0].columns.iter().map(|c| c.pages.len()).sum();
        assert!(pages > d.columns.len(), "compression {compression}: {pages} pages in cluster 0");
    }
}

#[test]
fn default_options_one_cluster() {
    let batches = [everything(3000, 11)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let path = scratch("defaults.root");
    let back = round_trip(&path, &batches, &HashMap::new(), WriteOptions::default());
    assert_same_rows(&expected, &rows(&back), "defaults");
    let f = RNTupleFile::open(&path).expect("open");
    let t = f.rntuple("t").expect("rntuple");
    assert_eq!(t.descriptor().clusters.len(), 1);
    assert_eq!(t.descriptor().num_cluster_groups, 1);
    assert_eq!(t.anchor().version_minor, 2);
}

#[test]
fn without_checksums_with_index32_one_group_per_cluster() {
    let batches = [everything(900, 41)];
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let options = WriteOptions {
        page_checksums: false,
        index32: true,
        cluster_group_size: 1,
        compression_threads: 1,
        ..small(207)
    };
    let path = scratch("no-checksums.root");
    let back = round_trip(&path, &batches, &HashMap::new(), options);
    assert_same_rows(&expected, &rows(&back), "no checksums, index32");
    assert_same_rows(&expected, &our_dump(&path, "t"), "no checksums, index32 (dump)");
    let f = RNTupleFile::open(&path).expect("open");
    let t = f.rntuple("t").expect("rntuple");
    let d = t.descriptor();
    assert_eq!(d.num_cluster_groups, d.clusters.len());
    assert!(d.clusters.iter().flat_map(|c| &c.columns).flat_map(|c| &c.pages).all(|p| !p.has_checksum));
    assert!(d.columns.iter().filter(|c| c.column_type.is_index()).all(|c| c.bits_on_storage == 32));
}
