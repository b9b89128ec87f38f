//! Attribute sets (ROOT 6.40 `RNTupleAttr*`): the ROOT-written reference
//! file read as ROOT reads it, the same content written by us and read back
//! by us and (when the venv with ROOT exists) by ROOT, refusals, and bad
//! links reported with their offsets.
//!
//! `tests/data/attributes_root640.json` is ROOT's reading of
//! `tests/data/attributes_root640.root` (both made by
//! `tests/reference/attributes_root.py`; the Python tests check the JSON
//! against ROOT): the expected values here.

mod write_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder};
use arrow_array::{ArrayRef, Float32Array, Int32Array, RecordBatch, StringArray, UInt16Array};
use arrow_schema::{DataType, Field, Schema};
use rntuple::write::{ParallelWriter, RNTupleWriter, SharedFileWriter};
use rntuple::{AttributeRange, Error, RNTuple, RNTupleFile, WriteOptions};
use rntuple_container::write::{FileWriter, WriterOptions};
use serde_json::{json, Value};
use write_support::{python, rows, scratch};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data")).join(name)
}

fn expected() -> Value {
    let text = std::fs::read_to_string(data("attributes_root640.json")).expect("expected values");
    serde_json::from_str(&text).expect("json")
}

/// Everything our API reads of the attribute sets of `nt`, in the form of
/// `attributes_root.py dump`.
fn dump_sets(nt: &RNTuple) -> Value {
    let mut sets = Vec::new();
    for link in nt.attribute_sets() {
        let set = nt.attribute_set(&link.name).expect("open attribute set");
        let values = rows(&set.values().read_all().expect("read values"));
        let entries: Vec<Value> =
            set.ranges().iter().zip(values).map(|(r, v)| json!({"range": [r.start, r.length], "values": v})).collect();
        let containing: serde_json::Map<String, Value> =
            (0..nt.num_entries()).map(|e| (e.to_string(), json!(set.entries_containing(e)))).collect();
        sets.push(json!({
            "name": set.name(),
            "version": [link.schema_version_major, link.schema_version_minor],
            "entries": entries,
            "order": set.entries(),
            "containing": containing,
        }));
    }
    json!({ "sets": sets })
}

#[test]
fn root_written_attribute_sets_read_as_root_reads_them() {
    let f = RNTupleFile::open(data("attributes_root640.root")).expect("open");
    assert_eq!(f.rntuple_names().expect("names"), ["Events"], "attribute RNTuples are not listed");
    let nt = f.rntuple("Events").expect("Events");
    assert_eq!(dump_sets(&nt), expected());
    let flags = nt.attribute_set("flags").expect("flags");
    assert_eq!(flags.num_entries(), 3);
    assert_eq!(
        flags.values().readable_fields().iter().map(|f| f.type_name.as_str()).collect::<Vec<_>>(),
        ["std::uint16_t"]
    );
    let stored: Vec<&str> = flags.rntuple().schema().fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(stored, ["_rangeStart", "_rangeLen", "_userData"]);
    // ROOT's range queries: [0, 4) holds only entry 1's range, [3, 4) lies in it.
    assert_eq!(flags.entries_in_range(0, 4), [1]);
    assert_eq!(flags.entries_in_range(0, 6), [1, 2]);
    assert_eq!(flags.entries_containing_range(3, 4), [1]);
    assert_eq!(flags.entries_containing_range(3, 5), Vec::<u64>::new());
    assert_eq!(flags.entries_in_range(4, 4), Vec::<u64>::new());
    let runs = nt.attribute_set("runs").expect("runs");
    let tags = runs.read(Some(&["tag"]), 1, 2).expect("read one field of one entry");
    assert_eq!(rows(&tags), [json!({"tag": "second"})]);
    match nt.attribute_set("nope") {
        Err(Error::NotFound { what }) => assert!(what.contains("[\"runs\", \"flags\"]"), "{what}"),
        other => panic!("unexpected {other:?}"),
    }
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).expect("batch")
}

fn px(values: &[f32]) -> RecordBatch {
    batch(vec![("px", Arc::new(Float32Array::from(values.to_vec())) as ArrayRef)])
}

fn run(run: i32, tag: &str, weights: &[f32]) -> RecordBatch {
    let mut w = ListBuilder::new(Float32Builder::new()).with_field(Field::new("item", DataType::Float32, false));
    w.values().append_slice(weights);
    w.append(true);
    batch(vec![
        ("run", Arc::new(Int32Array::from(vec![run])) as ArrayRef),
        ("tag", Arc::new(StringArray::from(vec![tag]))),
        ("weights", Arc::new(w.finish())),
    ])
}

fn flag(v: u16) -> RecordBatch {
    batch(vec![("flag", Arc::new(UInt16Array::from(vec![v])) as ArrayRef)])
}

/// Writes what `attributes_root.py write` writes, with our writer, in the
/// same order of calls.
fn write_reference_content(path: &Path, compression: u32) {
    let mut file = FileWriter::create(path, WriterOptions { compression, ..Default::default() }).expect("create");
    let none = HashMap::new();
    let options = WriteOptions { compression, ..Default::default() };
    let main = Schema::new(vec![Field::new("px", DataType::Float32, false)]);
    let mut w = RNTupleWriter::new(&mut file, "Events", &main, &none, options).expect("writer");
    let runs = run(0, "", &[]).schema();
    w.create_attribute_set("runs", &runs, &none).expect("runs");
    w.create_attribute_set("flags", &flag(0).schema(), &none).expect("flags");
    w.write_batch(&px(&[0.0, 0.5, 1.0])).expect("fill");
    w.commit_attributes("runs", &run(1, "first", &[0.5]), &[AttributeRange::new(0, 3)]).expect("run 1");
    w.commit_attributes("flags", &flag(7), &[AttributeRange::new(3, 0)]).expect("flag 7");
    w.write_batch(&px(&[1.5])).expect("fill");
    w.commit_attributes("flags", &flag(9), &[AttributeRange::new(0, 4)]).expect("flag 9");
    w.write_batch(&px(&[2.0, 2.5])).expect("fill");
    w.commit_attributes("flags", &flag(11), &[AttributeRange::new(4, 2)]).expect("flag 11");
    w.commit_attributes("runs", &run(2, "second", &[1.5, 2.5]), &[AttributeRange::new(3, 3)]).expect("run 2");
    w.close().expect("close");
    file.finish().expect("finish");
}

#[test]
fn written_attribute_sets_read_back() {
    for compression in [0, 505] {
        let path = scratch(&format!("attributes_c{compression}.root"));
        write_reference_content(&path, compression);
        let f = RNTupleFile::open(&path).expect("open");
        assert_eq!(f.rntuple_names().expect("names"), ["Events"]);
        let nt = f.rntuple("Events").expect("Events");
        assert_eq!(dump_sets(&nt), expected(), "compression {compression}");
        let link = &nt.attribute_sets()[0];
        assert_eq!((link.anchor_length, link.anchor_locator.size), (78, 78), "as ROOT: an uncompressed 78-byte anchor");
        let stored = nt.attribute_set("runs").expect("runs");
        let types: Vec<&str> = stored.rntuple().schema().fields.iter().map(|f| f.type_name.as_str()).collect();
        assert_eq!(types, ["std::uint64_t", "std::uint64_t", ""], "the meta fields as ROOT types them");
        assert_eq!(stored.rntuple().descriptor().name, "runs");
    }
}

/// ROOT's reading of the attribute sets of `Events` in `path`
/// (`attributes_root.py dump`), or `None` without the venv with ROOT.
fn root_dump(path: &Path) -> Option<Value> {
    let Some(py) = python() else {
        eprintln!("no venv with ROOT ($RNTUPLE_CACHE/venv): skipped");
        return None;
    };
    let script = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/attributes_root.py"));
    let out = Command::new(py).arg(script).arg("dump").arg(path).arg("Events").output().expect("run ROOT");
    assert!(out.status.success(), "ROOT failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().rfind(|l| l.starts_with('{')).expect("ROOT's dump");
    Some(serde_json::from_str::<Value>(line).expect("json"))
}

#[test]
fn root_reads_the_attribute_sets_we_write() {
    let path = scratch("attributes_for_root.root");
    write_reference_content(&path, 505);
    if let Some(dump) = root_dump(&path) {
        assert_eq!(dump, expected());
    }
}

/// The reference content written by a parallel writer: its clusters come
/// from two fill contexts, the attribute entries are committed on the
/// parallel writer over the entries committed so far.
#[test]
fn parallel_writer_writes_attribute_sets() {
    let path = scratch("attributes_parallel.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let none = HashMap::new();
    let main = Schema::new(vec![Field::new("px", DataType::Float32, false)]);
    let w = ParallelWriter::new(&file, "Events", &main, &none, WriteOptions::default()).expect("writer");
    w.create_attribute_set("runs", &run(0, "", &[]).schema(), &none).expect("runs");
    w.create_attribute_set("flags", &flag(0).schema(), &none).expect("flags");
    refused(w.create_attribute_set("flags", &flag(0).schema(), &none), "already");
    let mut a = w.create_fill_context().expect("context a");
    let mut b = w.create_fill_context().expect("context b");
    a.write_batch(&px(&[0.0, 0.5, 1.0])).expect("fill");
    // Entries not committed yet have no number in the RNTuple.
    refused(w.commit_attributes("runs", &run(1, "first", &[0.5]), &[AttributeRange::new(0, 3)]), "past the 0 entries");
    a.flush_cluster().expect("cluster 0");
    w.commit_attributes("runs", &run(1, "first", &[0.5]), &[AttributeRange::new(0, 3)]).expect("run 1");
    w.commit_attributes("flags", &flag(7), &[AttributeRange::new(3, 0)]).expect("flag 7");
    b.write_batch(&px(&[1.5])).expect("fill");
    b.flush_cluster().expect("cluster 1");
    w.commit_attributes("flags", &flag(9), &[AttributeRange::new(0, 4)]).expect("flag 9");
    a.write_batch(&px(&[2.0, 2.5])).expect("fill");
    a.close().expect("cluster 2");
    b.close().expect("no cluster");
    w.commit_attributes("flags", &flag(11), &[AttributeRange::new(4, 2)]).expect("flag 11");
    w.commit_attributes("runs", &run(2, "second", &[1.5, 2.5]), &[AttributeRange::new(3, 3)]).expect("run 2");
    w.close().expect("close");
    file.finish().expect("finish");

    let nt = RNTupleFile::open(&path).expect("open").rntuple("Events").expect("Events");
    assert_eq!(nt.descriptor().clusters.len(), 3);
    assert_eq!(dump_sets(&nt), expected());
    if let Some(dump) = root_dump(&path) {
        assert_eq!(dump, expected());
    }
}

fn refused(r: Result<(), Error>, needle: &str) {
    let message = match r {
        Err(Error::InvalidArgument { message }) => message,
        other => format!("not a refusal: {other:?}"),
    };
    assert!(message.contains(needle), "expected a refusal mentioning {needle:?}: {message}");
}

#[test]
fn refusals_leave_the_writer_usable() {
    let path = scratch("attributes_refusals.root");
    let mut file = FileWriter::create(&path, WriterOptions::default()).expect("create");
    let none = HashMap::new();
    let main = Schema::new(vec![Field::new("px", DataType::Float32, false)]);
    let mut w = RNTupleWriter::new(&mut file, "Events", &main, &none, WriteOptions::default()).expect("writer");
    let fs = flag(0).schema();
    refused(w.create_attribute_set("", &fs, &none), "must not be empty");
    refused(w.create_attribute_set("__x", &fs, &none), "reserved");
    refused(w.create_attribute_set("a/b", &fs, &none), "'/'");
    refused(w.create_attribute_set("a.b", &fs, &none), "'.'");
    w.create_attribute_set("flags", &fs, &none).expect("flags");
    refused(w.create_attribute_set("flags", &fs, &none), "already");
    w.write_batch(&px(&[1.0, 2.0])).expect("fill");
    refused(w.commit_attributes("flags", &flag(1), &[AttributeRange::new(1, 2)]), "past the 2 entries");
    refused(w.commit_attributes("flags", &flag(1), &[AttributeRange::new(u64::MAX, 2)]), "past the 2 entries");
    refused(w.commit_attributes("flags", &flag(1), &[]), "0 ranges for 1");
    refused(w.commit_attributes("flags", &px(&[1.0]), &[AttributeRange::new(0, 1)]), "expected [\"flag\"]");
    let wrong_type = batch(vec![("flag", Arc::new(Int32Array::from(vec![1])) as ArrayRef)]);
    refused(w.commit_attributes("flags", &wrong_type, &[AttributeRange::new(0, 1)]), "does not fit");
    match w.commit_attributes("other", &flag(1), &[AttributeRange::new(0, 1)]) {
        Err(Error::NotFound { what }) => assert!(what.contains("[\"flags\"]"), "{what}"),
        other => panic!("unexpected {other:?}"),
    }
    w.commit_attributes("flags", &flag(5), &[AttributeRange::new(0, 2)]).expect("a good commit");
    w.close().expect("close");
    file.finish().expect("finish");
    let nt = RNTupleFile::open(&path).expect("open").rntuple("Events").expect("Events");
    let set = nt.attribute_set("flags").expect("flags");
    assert_eq!(set.ranges(), [AttributeRange::new(0, 2)]);
    assert_eq!(rows(&set.values().read_all().expect("read")), [json!({"flag": 5})]);
}

/// Rewrites the locator of the first attribute set of `Events` in an
/// uncompressed file, resealing the footer's checksum.
fn relink(path: &Path, offset: u64, size: u32) {
    let nt = RNTupleFile::open(path).expect("open").rntuple("Events").expect("Events");
    let a = nt.anchor().clone();
    let mut bytes = std::fs::read(path).expect("read");
    let footer = &mut bytes[a.seek_footer as usize..(a.seek_footer + a.nbytes_footer) as usize];
    let n = footer.len();
    // The footer ends with: ... locator (u32 size, u64 offset), name "runs" (4 + 4), checksum (8).
    let loc = n - 8 - 8 - 12;
    footer[loc..loc + 4].copy_from_slice(&size.to_le_bytes());
    footer[loc + 4..loc + 12].copy_from_slice(&offset.to_le_bytes());
    let ck = rntuple_format::checksum::xxh3_64(&footer[..n - 8]);
    footer[n - 8..].copy_from_slice(&ck.to_le_bytes());
    std::fs::write(path, bytes).expect("write");
}

fn open_set_error(path: &Path) -> String {
    let nt = RNTupleFile::open(path).expect("open").rntuple("Events").expect("Events");
    nt.attribute_set("runs").expect_err("a bad link").to_string()
}

#[test]
fn bad_links_are_reported_with_their_offset() {
    let path = scratch("attributes_bad_link.root");
    let write = |path: &Path| {
        let mut file =
            FileWriter::create(path, WriterOptions { compression: 0, ..Default::default() }).expect("create");
        let none = HashMap::new();
        let main = Schema::new(vec![Field::new("px", DataType::Float32, false)]);
        let options = WriteOptions { compression: 0, ..Default::default() };
        let mut w = RNTupleWriter::new(&mut file, "Events", &main, &none, options).expect("writer");
        w.create_attribute_set("runs", &flag(0).schema(), &none).expect("runs");
        w.write_batch(&px(&[1.0])).expect("fill");
        w.commit_attributes("runs", &flag(3), &[AttributeRange::new(0, 1)]).expect("commit");
        w.close().expect("close");
        file.finish().expect("finish");
    };
    write(&path);
    let main_anchor =
        RNTupleFile::open(&path).expect("open").root_file().find_key("Events").expect("key").payload_offset();
    let len = std::fs::metadata(&path).expect("size").len();

    // The main RNTuple's own anchor: a valid anchor, not an attribute RNTuple.
    relink(&path, main_anchor, 78);
    let m = open_set_error(&path);
    assert!(m.contains("top-level fields are [\"px\"]") && m.contains("attribute set 'runs'"), "{m}");

    // Past the end of the file.
    write(&path);
    relink(&path, len + 10, 78);
    let m = open_set_error(&path);
    assert!(m.contains(&format!("{}", len + 10)) && m.contains("attribute set 'runs'"), "{m}");

    // Inside the file but not an anchor: the checksum does not match.
    write(&path);
    relink(&path, 100, 78);
    let m = open_set_error(&path);
    assert!(m.contains("checksum") && m.contains("at byte offset 170"), "{m}");
}
