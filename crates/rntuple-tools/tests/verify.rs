//! `verify` against the good files of `tests/data` (all pass), every corrupt
//! file of `tests/data/bad` (each reported with the right check), byte flips
//! and truncations of a good file (never a panic; every flip inside a
//! checksummed range reported), and structural damage with valid checksums.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::*;
use rntuple::format::checksum::xxh3_64;
use rntuple::format::envelope::{parse_page_list, write_page_list};
use rntuple_tools::verify::{verify_file, FileReport, VerifyOptions};
use rntuple_tools::{inspect_file, NoProgress, Progress};

fn verify(path: &Path) -> FileReport {
    verify_file(path, VerifyOptions::default(), &NoProgress)
}

#[test]
fn every_good_file_passes() {
    let files = good_files();
    assert!(files.len() >= 20, "{files:?}");
    for f in files {
        // 10^8 entries: too slow for a debug build; the release-built command
        // checks it in tests/python/test_tools_cli.py.
        if cfg!(debug_assertions) && f.ends_with("test_int_multicluster_rntuple_v1-0-0-0.root") {
            continue;
        }
        let r = verify(&f);
        assert!(r.is_ok(), "{}: {:#?}", f.display(), r.problems);
        assert!(r.num_pages > 0 || r.rntuples.is_empty(), "{}", f.display());
    }
}

/// Each corrupt file: the check that must report it and a fragment of the message.
const BAD: &[(&str, &str, &str)] = &[
    ("anchor_checksum_mismatch.root", "checksum", "RNTuple anchor"),
    ("anchor_cut_at_eof.root", "file", "extends past the end of the file"),
    ("anchor_epoch_2.root", "unsupported", "2.0.0.0"),
    ("anchor_len_header_huge.root", "size", "header envelope"),
    ("anchor_seek_footer_negative.root", "truncated", "footer envelope"),
    ("anchor_seek_header_past_eof.root", "truncated", "header envelope"),
    ("directory_seek_keys_negative.root", "truncated", "key list"),
    ("footer_checksum_mismatch.root", "checksum", "footer envelope"),
    ("footer_unknown_locator_type.root", "unsupported", "locator type 0x7e"),
    ("header_block_size_lies.root", "decompression", "header envelope"),
    ("header_block_unknown_algorithm.root", "decompression", "unknown compression algorithm"),
    ("header_checksum_mismatch.root", "checksum", "header envelope"),
    ("header_column_field_out_of_range.root", "schema", "refers to field 77"),
    ("header_envelope_cut_at_eof.root", "truncated", "header envelope"),
    ("header_field_count_absurd.root", "size", "field list frame"),
    ("header_field_parent_cycle.root", "schema", "parent cycle"),
    ("header_field_parent_out_of_range.root", "schema", "parent id 1000"),
    ("header_length_field_mismatch.root", "envelope", "envelope length field"),
    ("header_unknown_feature_flag.root", "unsupported", "feature flag bit 5"),
    ("header_nested_deferred_columns.root", "unsupported", "nested deferred columns (format 1.1)"),
    ("key_list_count_absurd.root", "file", "key count"),
    ("key_objlen_absurd.root", "size", "key 'Contributors'"),
    ("key_seek_huge.root", "file", "extends past the end of the file"),
    ("page_block_size_lies.root", "decompression", "compressed bytes"),
    ("page_checksum_mismatch.root", "checksum", "page"),
    ("page_cut_at_eof.root", "locator", "past the end of the file"),
    ("page_inflates_short.root", "decompression", "decompressed to"),
    ("page_list_cluster_entry_overflow.root", "schema", "overflows"),
    ("page_list_columns_missing.root", "clusters", "missing from the cluster's page list"),
    ("page_list_sharded_cluster.root", "unsupported", "sharded"),
    ("page_list_wrong_header_checksum.root", "checksum", "quotes header checksum"),
    ("page_locator_past_eof.root", "locator", "past the end of the file"),
    ("page_zstd_garbage.root", "decompression", "zstd"),
    ("truncated_in_file_header.root", "truncated", "file header"),
    ("truncated_in_key_list.root", "truncated", "key list"),
    ("truncated_in_top_directory.root", "truncated", "directory record"),
    ("truncated_mid_file.root", "truncated", "fEND"),
    ("wrong_file_magic.root", "file", "not a ROOT file"),
];

#[test]
fn every_corrupt_file_is_reported_by_the_right_check() {
    for (name, check, fragment) in BAD {
        let r = verify(&data("bad").join(name));
        assert!(!r.is_ok(), "{name} passed");
        assert!(
            r.problems.iter().any(|p| p.check == *check && p.message.contains(fragment)),
            "{name}: no '{check}' problem mentioning '{fragment}': {:#?}",
            r.problems
        );
        for p in &r.problems {
            assert!(p.to_string().starts_with(&r.file), "{p}");
        }
    }
}

#[test]
fn the_corrupt_file_table_covers_the_folder() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(data("bad"))
        .expect("bad/")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".root"))
        .collect();
    let listed: BTreeSet<String> = BAD.iter().map(|(n, _, _)| n.to_string()).collect();
    assert_eq!(on_disk, listed);
    assert_eq!(on_disk.len(), 38);
}

#[test]
fn problems_carry_their_location() {
    let r = verify(&data("bad/page_checksum_mismatch.root"));
    assert_eq!(r.num_problems, 1, "{:#?}", r.problems);
    let p = &r.problems[0];
    assert_eq!(p.rntuple.as_deref(), Some("Contributors"));
    assert_eq!((p.cluster, p.column, p.page), (Some(0), Some(3), Some(0)));
    assert_eq!(p.field.as_deref(), Some("lastName"));
    assert!(p.offset.is_some());
    // Every page was still read: the problem did not stop the check.
    assert_eq!(r.num_pages, 4);
}

#[test]
fn a_checksum_mismatch_does_not_stop_the_other_checks() {
    let r = verify(&data("bad/header_checksum_mismatch.root"));
    assert_eq!(r.num_problems, 1, "{:#?}", r.problems);
    assert_eq!(r.num_pages, 4, "the pages were checked after the header's checksum failed");
}

#[test]
fn missing_files_and_interruptions() {
    let r = verify(Path::new("/nonexistent/file.root"));
    assert!(!r.is_ok());
    assert_eq!(r.problems[0].check, "io");
    assert!(r.problems[0].message.contains("/nonexistent/file.root"), "{}", r.problems[0].message);

    struct Stop;
    impl Progress for Stop {
        fn cancelled(&self) -> bool {
            true
        }
    }
    let r = verify_file(&data("test_int_5e4_rntuple_v1-0-0-0.root"), VerifyOptions::default(), &Stop);
    assert!(r.interrupted && !r.is_ok());
}

/// Byte ranges that checksums cover: envelopes and pages (with their checksums).
fn checksummed_ranges(path: &Path) -> Vec<(u64, u64)> {
    let i = inspect_file(path, None, true).expect("inspect");
    let mut v = Vec::new();
    for r in &i.rntuples {
        v.push((r.header.offset, r.header.offset + r.header.compressed));
        v.push((r.footer.offset, r.footer.offset + r.footer.compressed));
        for g in &r.cluster_groups {
            v.push((g.page_list.offset, g.page_list.offset + g.page_list.compressed));
        }
    }
    let f = rntuple::RNTupleFile::open(path).expect("open");
    for name in f.rntuple_names().expect("names") {
        let nt = f.rntuple(&name).expect("rntuple");
        for c in &nt.descriptor().clusters {
            for p in c.columns.iter().flat_map(|r| &r.pages) {
                assert!(p.has_checksum);
                v.push((p.locator.offset, p.locator.offset + p.locator.size + 8));
            }
        }
    }
    v
}

#[test]
fn flipped_bytes_and_truncations_never_panic_and_checksummed_flips_are_found() {
    let original = std::fs::read(data("rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root")).expect("read");
    let ranges = checksummed_ranges(&data("rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root"));
    let path = scratch("flipped.root");
    let mut missed = Vec::new();
    for at in 0..original.len() {
        let mut bytes = original.clone();
        bytes[at] ^= 0x5A;
        std::fs::write(&path, &bytes).expect("write");
        let r = verify_file(&path, VerifyOptions { read_values: false, ..Default::default() }, &NoProgress);
        let covered = ranges.iter().any(|&(a, b)| (a..b).contains(&(at as u64)));
        if covered && r.is_ok() {
            missed.push(at);
        }
    }
    assert!(missed.is_empty(), "flips at {missed:?} inside checksummed data were not reported");
    for len in (0..original.len()).step_by(13) {
        std::fs::write(&path, &original[..len]).expect("write");
        assert!(!verify(&path).is_ok(), "truncated to {len} bytes");
    }
}

/// Rewrites, in place, the page list of cluster group `g` of an uncompressed
/// file (same length), after `edit` changed it.
fn edit_page_list(path: &Path, edit: impl FnOnce(&mut rntuple::format::model::PageList)) {
    let mut bytes = std::fs::read(path).expect("read");
    let i = inspect_file(path, None, true).expect("inspect");
    let g = &i.rntuples[0].cluster_groups[0].page_list;
    assert_eq!(g.compressed, g.uncompressed, "the page list must be stored uncompressed");
    let (a, b) = (g.offset as usize, (g.offset + g.compressed) as usize);
    let mut pl = parse_page_list(&bytes[a..b], true).expect("parse");
    edit(&mut pl);
    let (new, _) = write_page_list(&pl).expect("write");
    assert_eq!(new.len(), b - a);
    bytes[a..b].copy_from_slice(&new);
    std::fs::write(path, bytes).expect("write");
}

fn checks(r: &FileReport) -> Vec<&'static str> {
    r.problems.iter().map(|p| p.check).collect()
}

#[test]
fn structural_damage_under_valid_checksums_is_found() {
    let build = |name: &str| {
        let p = scratch(name);
        let options = rntuple::WriteOptions { cluster_group_size: 0, ..small(0) };
        write(&p, "t", vec![batch(0, 300, false), batch(300, 200, false)], options);
        assert!(verify(&p).is_ok(), "{:#?}", verify(&p).problems);
        p
    };

    // An element offset that does not continue from the previous cluster.
    let p = build("bad-offset.root");
    edit_page_list(&p, |pl| pl.page_locations[1][0].element_offset += 1);
    let r = verify(&p);
    assert!(checks(&r).contains(&"offsets"), "{:#?}", r.problems);

    // A page claiming one element more than it holds: the cluster's element
    // count and the page size disagree.
    let p = build("bad-count.root");
    edit_page_list(&p, |pl| pl.page_locations[0][0].pages[0].num_elements += 1);
    let r = verify(&p);
    assert!(checks(&r).contains(&"elements"), "{:#?}", r.problems);
    // The page's bytes no longer match its element count either (with
    // compression 0 they are taken for a compressed block).
    assert!(checks(&r).iter().any(|c| *c == "page" || *c == "decompression"), "{:#?}", r.problems);

    // Two pages whose bytes overlap partially.
    let p = build("bad-overlap.root");
    edit_page_list(&p, |pl| {
        let first = pl.page_locations[0][0].pages[0].locator;
        let second = &mut pl.page_locations[0][1].pages[0].locator;
        second.offset = first.offset + 1;
    });
    let r = verify(&p);
    assert!(checks(&r).contains(&"overlap"), "{:#?}", r.problems);

    // An offset column that decreases, with its page checksum recomputed.
    let p = build("bad-index.root");
    let f = rntuple::RNTupleFile::open(&p).expect("open");
    let nt = f.rntuple("t").expect("rntuple");
    let d = nt.descriptor();
    let col = d.columns.iter().position(|c| c.column_type.is_index()).expect("an index column");
    let page = d.clusters[0].columns[col].pages[0];
    assert!(page.num_elements >= 3 && page.has_checksum);
    let mut bytes = std::fs::read(&p).expect("read");
    let (o, size) = (page.locator.offset as usize, page.locator.size as usize);
    let width = size / page.num_elements as usize;
    // Element 1 becomes larger than element 2.
    let big = u64::MAX >> 8;
    bytes[o + width..o + 2 * width].copy_from_slice(&big.to_le_bytes()[..width]);
    let sum = xxh3_64(&bytes[o..o + size]);
    bytes[o + size..o + size + 8].copy_from_slice(&sum.to_le_bytes());
    drop(f);
    std::fs::write(&p, bytes).expect("write");
    let r = verify(&p);
    assert!(r.problems.iter().any(|p| p.check == "offsets" && p.message.contains("decreases")), "{:#?}", r.problems);
}

#[test]
fn a_corrupt_page_of_an_attribute_set_is_reported_under_the_set() {
    let original = data("attributes_root640.root");
    let f = rntuple::RNTupleFile::open(&original).expect("open");
    let nt = f.rntuple("Events").expect("rntuple");
    let link = nt.attribute_sets().first().expect("the file has an attribute set").clone();
    let set = nt.attribute_set(&link.name).expect("attribute set");
    let page = set.rntuple().descriptor().clusters[0].columns[0].pages[0].locator;
    assert!(verify(&original).is_ok());
    let mut bytes = std::fs::read(&original).expect("read");
    bytes[page.offset as usize] ^= 0x5A;
    let path = scratch("attribute_page_flipped.root");
    std::fs::write(&path, &bytes).expect("write");
    let r = verify(&path);
    let expected = format!("Events/attribute set {}", link.name);
    let p = r.problems.iter().find(|p| p.check == "checksum").expect("a checksum problem");
    assert_eq!(p.rntuple.as_deref(), Some(expected.as_str()), "{:#?}", r.problems);
    assert_eq!(p.cluster, Some(0));
    assert_eq!(p.column, Some(0));
}

#[test]
fn pages_split_over_keys_pass() {
    // Pages of 4 KiB (uncompressed) under keys of at most 1000 bytes: each page
    // is split over keys and its first key, written after its other chunks,
    // may end the page data; the last page's chunks lie before its offset.
    use std::collections::HashMap;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use rntuple::container::write::{FileWriter, WriterOptions};
    use rntuple::{RNTupleWriter, WriteOptions};

    let v: ArrayRef = Arc::new(Float64Array::from((0..5_000).map(|i| f64::from(i).sin()).collect::<Vec<_>>()));
    let b =
        RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("v", DataType::Float64, false)])), vec![v]).unwrap();
    for group in [false, true] {
        let path = scratch(&format!("split-pages-{group}.root"));
        let mut file = FileWriter::create(&path, WriterOptions { max_key_size: 1000, ..Default::default() }).unwrap();
        let options = WriteOptions {
            compression: 0,
            max_unzipped_page_size: 4096,
            group_pages_by_column: group,
            ..Default::default()
        };
        let mut w = RNTupleWriter::new(&mut file, "t", &b.schema(), &HashMap::new(), options).unwrap();
        w.write_batch(&b).unwrap();
        w.close().unwrap();
        file.finish().unwrap();
        let r = verify(&path);
        assert!(r.is_ok() && r.num_pages >= 10, "{group}: {} pages, {:#?}", r.num_pages, r.problems);
    }
}
