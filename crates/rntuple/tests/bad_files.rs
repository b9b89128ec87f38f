//! The corrupt files of `tests/data/bad/` (made by `tests/bad_files/make_bad.py`,
//! each described in `tests/data/bad/README.md`): opening and reading
//! everything must fail with the right [`Error`] variant and a message that
//! names the place, quickly and without panicking.
//!
//! Every file has a test function of the same name, listed in [`CASES`];
//! [`every_bad_file_has_a_test`] fails when a file is added without one.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arrow_array::cast::AsArray;
use arrow_array::Array;
use rntuple::{Error, Location, RNTupleFile, ReadOptions};

/// Every file of `tests/data/bad/` (without `.root`), each tested by the function of that name.
const CASES: &[&str] = &[
    // ROOT file container
    "truncated_in_file_header",
    "truncated_in_top_directory",
    "truncated_in_key_list",
    "truncated_mid_file",
    "wrong_file_magic",
    "key_list_count_absurd",
    "key_objlen_absurd",
    "directory_seek_keys_negative",
    "key_seek_huge",
    "anchor_cut_at_eof",
    // anchor
    "anchor_checksum_mismatch",
    "anchor_epoch_2",
    "anchor_seek_header_past_eof",
    "anchor_seek_footer_negative",
    "anchor_len_header_huge",
    // header envelope
    "header_envelope_cut_at_eof",
    "header_checksum_mismatch",
    "header_field_count_absurd",
    "header_field_parent_out_of_range",
    "header_field_parent_cycle",
    "header_column_field_out_of_range",
    "header_unknown_feature_flag",
    "header_nested_deferred_columns",
    "header_length_field_mismatch",
    "header_block_unknown_algorithm",
    "header_block_size_lies",
    // footer and page list envelopes
    "footer_checksum_mismatch",
    "footer_unknown_locator_type",
    "page_list_sharded_cluster",
    "page_list_wrong_header_checksum",
    "page_list_cluster_entry_overflow",
    "page_list_columns_missing",
    // pages
    "page_checksum_mismatch",
    "page_locator_past_eof",
    "page_cut_at_eof",
    "page_block_size_lies",
    "page_zstd_garbage",
    "page_inflates_short",
];

/// Files whose defect is structural: they must fail the same way with checksum verification off.
const STRUCTURAL: &[&str] = &[
    "truncated_in_file_header",
    "truncated_in_top_directory",
    "truncated_in_key_list",
    "truncated_mid_file",
    "wrong_file_magic",
    "key_list_count_absurd",
    "key_objlen_absurd",
    "directory_seek_keys_negative",
    "key_seek_huge",
    "anchor_cut_at_eof",
    "anchor_epoch_2",
    "anchor_seek_header_past_eof",
    "anchor_seek_footer_negative",
    "anchor_len_header_huge",
    "header_envelope_cut_at_eof",
    "header_field_count_absurd",
    "header_field_parent_out_of_range",
    "header_field_parent_cycle",
    "header_column_field_out_of_range",
    "header_unknown_feature_flag",
    "header_nested_deferred_columns",
    "header_length_field_mismatch",
    "header_block_unknown_algorithm",
    "header_block_size_lies",
    "footer_unknown_locator_type",
    "page_list_sharded_cluster",
    "page_list_cluster_entry_overflow",
    "page_list_columns_missing",
    "page_locator_past_eof",
    "page_cut_at_eof",
    "page_block_size_lies",
    "page_zstd_garbage",
    "page_inflates_short",
];

/// Reading one small corrupt file must not take longer than this (it takes microseconds).
const TIME_LIMIT: Duration = Duration::from_secs(5);

const CHECKED: ReadOptions = ReadOptions::DEFAULT;
const UNCHECKED: ReadOptions = ReadOptions::DEFAULT.with_verify_checksums(false);

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/bad")
}

fn bad_path(name: &str) -> PathBuf {
    assert!(CASES.contains(&name), "'{name}' is not listed in CASES");
    bad_dir().join(format!("{name}.root"))
}

/// Opens the file, lists its RNTuples and reads every one completely.
fn read_everything(path: &Path, options: ReadOptions) -> Result<(), Error> {
    let file = RNTupleFile::open_with(path, options)?;
    for name in file.rntuple_names()? {
        file.rntuple(&name)?.read_all()?;
    }
    Ok(())
}

/// [`read_everything`] on a bad file; a panic or a slow read fails the test.
fn outcome(name: &str, options: ReadOptions) -> Result<(), Error> {
    let path = bad_path(name);
    let start = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| read_everything(&path, options)));
    let elapsed = start.elapsed();
    let result = result.unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        panic!("reading {name}.root panicked instead of returning an error: {msg}")
    });
    assert!(elapsed < TIME_LIMIT, "reading {name}.root took {elapsed:?}");
    result
}

/// The error reading a bad file (with checksum verification on) must return.
fn error_of(name: &str) -> Error {
    match outcome(name, CHECKED) {
        Ok(()) => panic!("{name}.root was read without error"),
        Err(e) => e,
    }
}

fn location(err: &Error) -> Option<&Location> {
    err.location()
}

/// The message mentions every one of `words` (case-insensitively).
fn assert_mentions(err: &Error, words: &[&str]) {
    let msg = err.to_string().to_lowercase();
    for w in words {
        assert!(msg.contains(&w.to_lowercase()), "error message does not mention '{w}': {err}");
    }
}

/// The error's location carries this byte offset.
fn assert_offset(err: &Error, offset: u64) {
    let at = location(err).and_then(|l| l.offset);
    assert_eq!(at, Some(offset), "error location should point at byte offset {offset}: {err}");
    assert_mentions(err, &[&format!("offset {offset}")]);
}

/// The error's location carries some byte offset.
fn assert_has_offset(err: &Error) {
    assert!(location(err).and_then(|l| l.offset).is_some(), "error has no byte offset: {err}");
}

// ---------------------------------------------------------------- the folder --

#[test]
fn every_bad_file_has_a_test() {
    let mut on_disk: Vec<String> = std::fs::read_dir(bad_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "root"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let untested: Vec<_> = on_disk.iter().filter(|n| !CASES.contains(&n.as_str())).collect();
    assert!(untested.is_empty(), "files in tests/data/bad without a test (add one and list it in CASES): {untested:?}");
    let missing: Vec<_> = CASES.iter().filter(|n| !on_disk.iter().any(|d| d == *n)).collect();
    assert!(missing.is_empty(), "CASES lists files that are not in tests/data/bad: {missing:?}");
    // Each case has a test function of its name that reads its file.
    let source = include_str!("bad_files.rs");
    for name in CASES {
        assert!(source.contains(&format!("fn {name}() {{")), "no test function `{name}` for {name}.root");
        assert!(source.contains(&format!("error_of(\"{name}\")")), "test `{name}` does not read {name}.root");
    }
    let readme = std::fs::read_to_string(bad_dir().join("README.md")).unwrap();
    for name in CASES {
        assert!(
            readme.contains(&format!("`{name}.root`")),
            "README.md of tests/data/bad does not describe {name}.root"
        );
    }
}

#[test]
fn no_bad_file_panics_without_checksums() {
    for name in CASES {
        let _ = outcome(name, UNCHECKED);
    }
}

#[test]
fn structural_defects_are_caught_without_checksums() {
    for name in STRUCTURAL {
        let checked = error_of(name);
        let unchecked = match outcome(name, UNCHECKED) {
            Ok(()) => panic!("{name}.root read without error when checksums are not verified"),
            Err(e) => e,
        };
        assert_eq!(
            std::mem::discriminant(&checked),
            std::mem::discriminant(&unchecked),
            "{name}.root: different errors with and without checksum verification: {checked} / {unchecked}"
        );
    }
}

#[test]
fn checksum_only_defects_read_without_checksums() {
    // These files differ from a good one only in bytes that a checksum covers
    // without the reader needing them to be consistent.
    for name in ["anchor_checksum_mismatch", "header_checksum_mismatch", "page_list_wrong_header_checksum"] {
        assert!(matches!(error_of(name), Error::ChecksumMismatch { .. }));
        outcome(name, UNCHECKED).unwrap_or_else(|e| panic!("{name}.root without checksum verification: {e}"));
    }
}

#[test]
fn page_bit_flip_reads_without_checksums() {
    let path = bad_path("page_checksum_mismatch");
    let file = RNTupleFile::open_with(&path, UNCHECKED).unwrap();
    let batch = file.rntuple("Contributors").unwrap().read_all().unwrap();
    let last = batch.column_by_name("lastName").unwrap();
    // The flipped bit turns the first character of the page, 'B' of "Blomer", into 'b'.
    let first = if let Some(a) = last.as_string_opt::<i32>() {
        a.value(0)
    } else if let Some(a) = last.as_string_opt::<i64>() {
        a.value(0)
    } else {
        last.as_string_view_opt().unwrap_or_else(|| panic!("lastName is {}", last.data_type())).value(0)
    };
    assert_eq!(first, "blomer");
}

// ------------------------------------------------------- ROOT file container --

#[test]
fn truncated_in_file_header() {
    let err = error_of("truncated_in_file_header");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["file header"]);
    assert_has_offset(&err);
}

#[test]
fn truncated_in_top_directory() {
    let err = error_of("truncated_in_top_directory");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["directory"]);
    assert_has_offset(&err);
}

#[test]
fn truncated_in_key_list() {
    let err = error_of("truncated_in_key_list");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["key list"]);
    assert_offset(&err, 1967); // fSeekKeys of the top directory
}

#[test]
fn truncated_mid_file() {
    let err = error_of("truncated_mid_file");
    assert!(matches!(err, Error::Truncated { needed: 1561, available: 780, .. }), "{err}");
    assert_mentions(&err, &["fEND"]);
}

#[test]
fn wrong_file_magic() {
    let err = error_of("wrong_file_magic");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["file header", "not a ROOT file"]);
    assert_offset(&err, 0);
}

#[test]
fn key_list_count_absurd() {
    let err = error_of("key_list_count_absurd");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["key list", "2147483647"]);
    assert_has_offset(&err);
}

#[test]
fn key_objlen_absurd() {
    let err = error_of("key_objlen_absurd");
    assert!(matches!(err, Error::WouldOverAllocate { requested: 0x7fff_ffff, .. }), "{err}");
    assert_mentions(&err, &["Contributors"]);
    assert_has_offset(&err);
}

#[test]
fn directory_seek_keys_negative() {
    let err = error_of("directory_seek_keys_negative");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["key list"]);
    assert_offset(&err, 0xffff_ffff);
}

#[test]
fn key_seek_huge() {
    let err = error_of("key_seek_huge");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["Contributors", "past the end"]);
    assert_offset(&err, 0x7fff_fff0);
}

#[test]
fn anchor_cut_at_eof() {
    let err = error_of("anchor_cut_at_eof");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["Contributors", "past the end"]);
    assert_offset(&err, 2514); // where the cut copy of the anchor's key starts
}

// -------------------------------------------------------------------- anchor --

#[test]
fn anchor_checksum_mismatch() {
    let err = error_of("anchor_checksum_mismatch");
    assert!(matches!(err, Error::ChecksumMismatch { stored, computed, .. } if stored ^ computed == 1), "{err}");
    assert_mentions(&err, &["anchor"]);
    assert_has_offset(&err);
}

#[test]
fn anchor_epoch_2() {
    let err = error_of("anchor_epoch_2");
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_mentions(&err, &["anchor", "2.0.0.0"]);
    assert_has_offset(&err);
}

#[test]
fn anchor_seek_header_past_eof() {
    let err = error_of("anchor_seek_header_past_eof");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["header envelope"]);
    assert_offset(&err, 1 << 40);
}

#[test]
fn anchor_seek_footer_negative() {
    let err = error_of("anchor_seek_footer_negative");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["footer envelope"]);
    assert_offset(&err, u64::MAX);
}

#[test]
fn anchor_len_header_huge() {
    let err = error_of("anchor_len_header_huge");
    // 1 TiB claimed: over the envelope cap (max_envelope_size), refused before it is read
    let cap = rntuple::DEFAULT_MAX_ENVELOPE_SIZE;
    assert!(matches!(err, Error::OverBudget { requested, limit, .. } if requested == 1 << 40 && limit == cap), "{err}");
    assert_mentions(&err, &["header envelope"]);
    assert_has_offset(&err);
}

// ----------------------------------------------------------- header envelope --

#[test]
fn header_envelope_cut_at_eof() {
    let err = error_of("header_envelope_cut_at_eof");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["header envelope"]);
    assert_offset(&err, 2514);
}

#[test]
fn header_checksum_mismatch() {
    let err = error_of("header_checksum_mismatch");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    assert_mentions(&err, &["header envelope"]);
    assert_has_offset(&err);
}

#[test]
fn header_field_count_absurd() {
    let err = error_of("header_field_count_absurd");
    assert!(matches!(err, Error::WouldOverAllocate { .. }), "{err}");
    assert_mentions(&err, &["header envelope", "field"]);
    assert_has_offset(&err);
}

#[test]
fn header_field_parent_out_of_range() {
    let err = error_of("header_field_parent_out_of_range");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["field 1", "parent", "1000"]);
}

#[test]
fn header_field_parent_cycle() {
    let err = error_of("header_field_parent_cycle");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["field", "cycle"]);
}

#[test]
fn header_column_field_out_of_range() {
    let err = error_of("header_column_field_out_of_range");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["column 0", "field 77"]);
}

#[test]
fn header_unknown_feature_flag() {
    let err = error_of("header_unknown_feature_flag");
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_mentions(&err, &["header envelope", "feature flag", "bit 5"]);
    assert_offset(&err, 8); // inside the envelope
}

#[test]
fn header_nested_deferred_columns() {
    // Format 1.1.0.0's first feature flag: refused by name, not as a bare bit.
    let err = error_of("header_nested_deferred_columns");
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_mentions(&err, &["header envelope", "feature flag bit 0", "nested deferred columns (format 1.1)"]);
    assert_offset(&err, 8);
}

#[test]
fn header_length_field_mismatch() {
    let err = error_of("header_length_field_mismatch");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["header envelope", "length", "340", "332"]);
}

#[test]
fn header_block_unknown_algorithm() {
    let err = error_of("header_block_unknown_algorithm");
    assert!(matches!(err, Error::Decompression { .. }), "{err}");
    assert_mentions(&err, &["header envelope", "QQ"]);
    assert_offset(&err, 302); // fSeekHeader
}

#[test]
fn header_block_size_lies() {
    let err = error_of("header_block_size_lies");
    assert!(matches!(err, Error::Decompression { .. }), "{err}");
    assert_mentions(&err, &["header envelope"]);
    assert_offset(&err, 302);
}

// ------------------------------------------------ footer and page list envelopes --

#[test]
fn footer_checksum_mismatch() {
    let err = error_of("footer_checksum_mismatch");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    assert_mentions(&err, &["footer envelope"]);
    assert_has_offset(&err);
}

#[test]
fn footer_unknown_locator_type() {
    let err = error_of("footer_unknown_locator_type");
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_mentions(&err, &["footer envelope", "locator type 0x7e"]);
    assert_has_offset(&err);
}

#[test]
fn page_list_sharded_cluster() {
    let err = error_of("page_list_sharded_cluster");
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert_mentions(&err, &["page list", "sharded"]);
    assert_has_offset(&err);
}

#[test]
fn page_list_wrong_header_checksum() {
    let err = error_of("page_list_wrong_header_checksum");
    assert!(matches!(err, Error::ChecksumMismatch { stored, computed, .. } if stored ^ computed == 1), "{err}");
    assert_mentions(&err, &["header checksum", "page list"]);
    assert_has_offset(&err);
}

#[test]
fn page_list_cluster_entry_overflow() {
    // Found by the whole_file fuzz target (it panicked: "attempt to add with overflow").
    let err = error_of("page_list_cluster_entry_overflow");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["cluster 0", "entr"]);
}

#[test]
fn page_list_columns_missing() {
    // The root cause of fuzz/regressions/whole_file/array-size-zero-fill-alloc: columns of the
    // header missing from a cluster's page list were read as zeros.
    let err = error_of("page_list_columns_missing");
    assert!(matches!(err, Error::OutOfSpec { .. }), "{err}");
    assert_mentions(&err, &["cluster 0", "column"]);
}

// --------------------------------------------------------------------- pages --

#[test]
fn page_checksum_mismatch() {
    let err = error_of("page_checksum_mismatch");
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 3", "cluster 0"]);
    assert_offset(&err, 1174); // the page
}

#[test]
fn page_locator_past_eof() {
    let err = error_of("page_locator_past_eof");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 0"]);
    assert_offset(&err, 1 << 40);
}

#[test]
fn page_cut_at_eof() {
    let err = error_of("page_cut_at_eof");
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 3"]);
    assert_offset(&err, 2514);
}

#[test]
fn page_block_size_lies() {
    let err = error_of("page_block_size_lies");
    assert!(matches!(err, Error::Decompression { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 15"]);
    assert_offset(&err, 1404);
}

#[test]
fn page_zstd_garbage() {
    let err = error_of("page_zstd_garbage");
    assert!(matches!(err, Error::Decompression { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 15", "zstd"]);
    assert_offset(&err, 1404);
}

#[test]
fn page_inflates_short() {
    let err = error_of("page_inflates_short");
    assert!(matches!(err, Error::Decompression { .. }), "{err}");
    assert_mentions(&err, &["page 0", "column 15"]);
    assert_offset(&err, 1404);
}
