//! Streamer fields decoded by the reader at any depth:
//! `tests/data/streamer_nested_root640.root` (ROOT 6.40, made by
//! `tests/reference/streamer_nested_root.py`) has the class `Inner26`
//! streamed as the member `outer.in` and the items `outer.ins._0` and
//! `inners._0`; `streamer_nested_root640.json` is ROOT's `RNTupleReader`
//! reading of it.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::Array;
use rntuple::{RNTupleFile, ReadOptions, UndecodedStreamer};

const FILE: &str = "streamer_nested_root640.root";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn roots_values() -> serde_json::Value {
    let text = std::fs::read_to_string(data("streamer_nested_root640.json")).expect("json");
    let v: serde_json::Value = serde_json::from_str(&text).expect("parse");
    v["Events"].clone()
}

/// Reads all of `path`'s `Events` (checksums not verified: the altered
/// copies below keep the checksums of the original).
fn read(path: &Path, streamer_bytes: bool) -> (arrow_array::RecordBatch, Vec<UndecodedStreamer>, Vec<String>) {
    let options = ReadOptions { verify_checksums: false, streamer_bytes, ..ReadOptions::DEFAULT };
    let f = RNTupleFile::open_with(path, options).expect("open");
    let nt = f.rntuple("Events").expect("Events");
    let (batch, notes) = nt.read_with_notes(None, 0, u64::MAX, &options).expect("read");
    let lines = rntuple::json::entry_lines(&nt.readable_fields(), &batch).collect();
    (batch, notes, lines)
}

/// A copy of the file with `from` replaced by `to` (same length) at its first occurrence.
fn altered(name: &str, from: &[u8], to: &[u8]) -> PathBuf {
    assert_eq!(from.len(), to.len());
    let mut bytes = std::fs::read(data(FILE)).expect("read");
    let at = bytes.windows(from.len()).position(|w| w == from).expect("pattern in the file");
    bytes[at..at + to.len()].copy_from_slice(to);
    let path = std::env::temp_dir().join(format!("rntuple-streamer-{}-{name}.root", std::process::id()));
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn nested_streamer_fields_decode_to_roots_values() {
    let (batch, notes, lines) = read(&data(FILE), false);
    assert!(notes.is_empty(), "{notes:?}");
    // outer.in is a record of the class's members (base as ":_0"), not bytes.
    let outer = batch.column_by_name("outer").expect("outer").as_struct();
    let inner = outer.column_by_name("in").expect("in");
    let arrow_schema::DataType::Struct(members) = inner.data_type() else {
        panic!("outer.in is {}", inner.data_type())
    };
    let names: Vec<&str> = members.iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, [":_0", "a", "v", "s"]);
    // The items of both vectors too.
    let ins = outer.column_by_name("ins").expect("ins").as_list::<i64>();
    assert!(matches!(ins.values().data_type(), arrow_schema::DataType::Struct(_)));
    let inners = batch.column_by_name("inners").expect("inners").as_list::<i64>();
    assert!(matches!(inners.values().data_type(), arrow_schema::DataType::Struct(_)));
    let ours: Vec<serde_json::Value> = lines.iter().map(|l| serde_json::from_str(l).expect("line")).collect();
    assert_eq!(serde_json::Value::Array(ours), roots_values());
}

#[test]
fn the_arrow_schema_is_the_schema_of_the_batches_read() {
    for streamer_bytes in [false, true] {
        let options = ReadOptions { streamer_bytes, ..ReadOptions::DEFAULT };
        let f = RNTupleFile::open_with(data(FILE), options).expect("open");
        let nt = f.rntuple("Events").expect("Events");
        let batch = nt.read(None, 0, u64::MAX).expect("read");
        assert_eq!(nt.arrow_schema(), batch.schema(), "streamer_bytes: {streamer_bytes}");
        let outer = nt.arrow_schema().field_with_name("outer").expect("outer").data_type().clone();
        let arrow_schema::DataType::Struct(members) = outer else { panic!("outer is {outer}") };
        let inner = members.iter().find(|m| m.name() == "in").expect("in").data_type().clone();
        assert_eq!(matches!(inner, arrow_schema::DataType::Struct(_)), !streamer_bytes, "outer.in is {inner}");
    }
}

#[test]
fn streamer_bytes_keeps_the_stored_bytes() {
    let (batch, notes, _) = read(&data(FILE), true);
    assert!(notes.is_empty());
    let outer = batch.column_by_name("outer").expect("outer").as_struct();
    assert_eq!(outer.column_by_name("in").expect("in").data_type(), &arrow_schema::DataType::LargeBinary);
}

#[test]
fn a_class_missing_from_the_streamer_info_stays_bytes_with_the_reason() {
    // The type of field outer.in renamed in the header: no streamer info has that class.
    let path =
        altered("missing", b"\x02\x00\x00\x00in\x07\x00\x00\x00Inner26", b"\x02\x00\x00\x00in\x07\x00\x00\x00Inner2X");
    let (batch, notes, _) = read(&path, false);
    std::fs::remove_file(&path).ok();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!((notes[0].path.as_str(), notes[0].type_name.as_str()), ("outer.in", "Inner2X"));
    assert!(notes[0].reason.contains("class Inner2X is missing from the streamer info"), "{}", notes[0].reason);
    let outer = batch.column_by_name("outer").expect("outer").as_struct();
    assert_eq!(outer.column_by_name("in").expect("in").data_type(), &arrow_schema::DataType::LargeBinary);
    // The other streamer fields still decode.
    let ins = outer.column_by_name("ins").expect("ins").as_list::<i64>();
    assert!(matches!(ins.values().data_type(), arrow_schema::DataType::Struct(_)));
}

#[test]
fn bytes_that_disagree_with_the_streamer_info_stay_bytes_with_the_reason() {
    // A string length one short inside an item of `inners`: the class's byte count no longer fits.
    let path = altered("lying", b"\x05inner", b"\x04inner");
    let (batch, notes, _) = read(&path, false);
    std::fs::remove_file(&path).ok();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!((notes[0].path.as_str(), notes[0].type_name.as_str()), ("inners._0", "Inner26"));
    assert!(notes[0].reason.contains("byte count"), "{}", notes[0].reason);
    let inners = batch.column_by_name("inners").expect("inners").as_list::<i64>();
    assert_eq!(inners.values().data_type(), &arrow_schema::DataType::LargeBinary);
}

#[test]
fn decode_entries_refuses_offsets_past_the_bytes() {
    let f = RNTupleFile::open(data(FILE)).expect("open");
    let infos = f.rntuple("Events").expect("Events").streamer_infos().expect("infos");
    let err = rntuple::streamer::decode_entries(&infos, "Inner26", &[0, 100], &[0u8; 10]).expect_err("refused");
    assert!(err.contains("object 0: bytes 0..100 are not within the 10 there are"), "{err}");
    let err = rntuple::streamer::decode_entries(&infos, "Inner26", &[5, 2], &[0u8; 10]).expect_err("refused");
    assert!(err.contains("object 0: bytes 5..2"), "{err}");
}

/// Reads all of `Events` under a `max_memory` budget of `budget` bytes.
fn read_under(budget: u64, streamer_bytes: bool) -> rntuple::Result<arrow_array::RecordBatch> {
    let options = ReadOptions { streamer_bytes, max_memory: Some(budget), ..ReadOptions::DEFAULT };
    let f = RNTupleFile::open_with(data(FILE), options).expect("open");
    let nt = f.rntuple("Events").expect("Events");
    nt.read(None, 0, u64::MAX)
}

/// The smallest budget under which the read succeeds (bisection).
fn smallest_budget(streamer_bytes: bool) -> u64 {
    let (mut lo, mut hi) = (0u64, 1u64 << 32);
    assert!(read_under(hi, streamer_bytes).is_ok());
    while lo + 1 < hi {
        let mid = lo + (hi - lo) / 2;
        if read_under(mid, streamer_bytes).is_ok() {
            hi = mid
        } else {
            lo = mid
        }
    }
    hi
}

#[test]
fn decoded_streamer_objects_count_against_the_memory_budget() {
    // The objects decoded take memory beyond the values read: the smallest
    // budget of a decoding read is above that of the same read kept as bytes,
    // and just below it the read fails on the decoded objects, naming them.
    let bytes_only = smallest_budget(true);
    let decoded = smallest_budget(false);
    assert!(decoded > bytes_only, "decoding read fits in {decoded} bytes, the bytes alone in {bytes_only}");
    let err = read_under(decoded - 1, false).expect_err("one byte short");
    let text = err.to_string();
    assert!(matches!(err, rntuple::Error::OverBudget { .. }), "{text}");
    assert!(text.contains("streamer objects decoded") && text.contains("Inner26"), "{text}");
}
