//! Late schema extension of the parallel writer while fill contexts fill
//! (`ParallelWriter::add_fields`): contexts created before and after an
//! extension, contexts of the old schema committing after it, a context
//! switching schema in the middle of a cluster, an extension before the
//! first commit; refusals. Every file is read back by our reader and by
//! ROOT 6.40 (`tests/reference/root_dump.py`, when the venv with ROOT
//! exists), each entry once with the values written, and the zero values
//! (written out here, not by the writer) where a field was missing.

// Failures name the row and what differs.
#![allow(clippy::panic)]

mod write_support;

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder};
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Float64Array, Int16Array, Int32Array, Int64Array, RecordBatch, StringArray,
    StructArray, UInt8Array, UnionArray,
};
use arrow_schema::{DataType, Field, Fields, Schema, UnionFields};
use rntuple::write::{FieldOverride, ParallelWriter, Projection, SharedFileWriter, WriteOptions};
use rntuple::RNTupleFile;
use rntuple_container::write::WriterOptions;
use serde_json::{json, Value};
use write_support::{our_dump, python, root_dumps, scratch, Job};

/// The schema the writer is created with: the entry's id and the context
/// that filled it.
fn old_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false), Field::new("who", DataType::UInt8, false)]))
}

fn old(ids: Range<i64>, who: u8) -> RecordBatch {
    let n = (ids.end - ids.start) as usize;
    RecordBatch::try_new(
        old_schema(),
        vec![Arc::new(Int64Array::from_iter_values(ids)), Arc::new(UInt8Array::from(vec![who; n]))],
    )
    .expect("old batch")
}

fn record_fields() -> Fields {
    Fields::from(vec![Field::new("a", DataType::Int16, false), Field::new("b", DataType::Utf8, false)])
}

fn union_fields() -> UnionFields {
    UnionFields::try_new([0i8, 1], [Field::new("i", DataType::Int32, true), Field::new("t", DataType::Utf8, true)])
        .expect("union fields")
}

/// The fields added late, with values for entries `ids`: `n` = 3 id, `s` =
/// "s<id>", `v` = id % 3 copies of id, `o` = id / 2 for odd ids else empty,
/// `r` = {a: id, b: "r<id>"}, `a` = [id, -id], `var` = id (int) for even ids,
/// "v<id>" for odd ones.
fn new_columns(ids: Range<i64>) -> Vec<(Field, ArrayRef)> {
    let mut v = ListBuilder::new(Float32Builder::new()).with_field(Field::new("item", DataType::Float32, false));
    for id in ids.clone() {
        for _ in 0..id % 3 {
            v.values().append_value(id as f32);
        }
        v.append(true);
    }
    let v = v.finish();
    let r = StructArray::new(
        record_fields(),
        vec![
            Arc::new(Int16Array::from_iter_values(ids.clone().map(|i| i as i16))),
            Arc::new(StringArray::from_iter_values(ids.clone().map(|i| format!("r{i}")))),
        ],
        None,
    );
    let item = Arc::new(Field::new("item", DataType::Int32, false));
    let a = FixedSizeListArray::new(
        item.clone(),
        2,
        Arc::new(Int32Array::from_iter_values(ids.clone().flat_map(|i| [i as i32, -(i as i32)]))),
        None,
    );
    let (mut type_ids, mut offsets, mut ints, mut texts) = (vec![], vec![], vec![], vec![]);
    for id in ids.clone() {
        if id % 2 == 0 {
            type_ids.push(0i8);
            offsets.push(ints.len() as i32);
            ints.push(id as i32);
        } else {
            type_ids.push(1);
            offsets.push(texts.len() as i32);
            texts.push(format!("v{id}"));
        }
    }
    let var = UnionArray::try_new(
        union_fields(),
        type_ids.into(),
        Some(offsets.into()),
        vec![Arc::new(Int32Array::from(ints)), Arc::new(StringArray::from(texts))],
    )
    .expect("union");
    let o = Float64Array::from_iter(ids.clone().map(|i| (i % 2 == 1).then_some(i as f64 / 2.0)));
    vec![
        (
            Field::new("n", DataType::Int32, false),
            Arc::new(Int32Array::from_iter_values(ids.clone().map(|i| 3 * i as i32))),
        ),
        (Field::new("s", DataType::Utf8, false), Arc::new(StringArray::from_iter_values(ids.map(|i| format!("s{i}"))))),
        (Field::new("v", v.data_type().clone(), false), Arc::new(v)),
        (Field::new("o", DataType::Float64, true), Arc::new(o)),
        (Field::new("r", DataType::Struct(record_fields()), false), Arc::new(r)),
        (Field::new("a", DataType::FixedSizeList(item, 2), false), Arc::new(a)),
        (Field::new("var", var.data_type().clone(), false), Arc::new(var)),
    ]
}

/// The schema of the fields added late.
fn added_schema() -> Schema {
    Schema::new(new_columns(0..0).into_iter().map(|(f, _)| f).collect::<Vec<_>>())
}

/// A batch of the extended schema.
fn full(ids: Range<i64>, who: u8) -> RecordBatch {
    let o = old(ids.clone(), who);
    let mut fields: Vec<Field> = o.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns = o.columns().to_vec();
    for (f, c) in new_columns(ids) {
        fields.push(f);
        columns.push(c);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("full batch")
}

/// The dump of entry `id` (filled by context `who`): the added fields' values
/// when it was written with them, their zero values (as ROOT reads deferred
/// columns) when not.
fn expected(id: i64, who: u8, with_values: bool) -> Value {
    if !with_values {
        return json!({
            "id": id, "who": who, "n": 0, "s": "", "v": [], "o": null,
            "r": {"a": 0, "b": ""}, "a": [0, 0], "var": null,
        });
    }
    let v: Vec<f64> = (0..id % 3).map(|_| id as f64).collect();
    let var = if id % 2 == 0 { json!(id) } else { json!(format!("v{id}")) };
    let o = if id % 2 == 1 { json!(id as f64 / 2.0) } else { Value::Null };
    json!({
        "id": id, "who": who, "n": 3 * id, "s": format!("s{id}"), "v": v, "o": o,
        "r": {"a": id, "b": format!("r{id}")}, "a": [id, -id], "var": var,
    })
}

/// Checks that `rows` (a dump) hold each id of `want` exactly once, as `want` says.
fn check_rows(rows: &[Value], want: &HashMap<i64, Value>, what: &str) {
    assert_eq!(rows.len(), want.len(), "{what}: entries");
    let mut seen = std::collections::HashSet::new();
    for (row, r) in rows.iter().enumerate() {
        let id = r["id"].as_i64().unwrap_or_else(|| panic!("{what}: row {row} without id: {r}"));
        assert!(seen.insert(id), "{what}: id {id} twice");
        assert_eq!(Some(r), want.get(&id), "{what}: row {row} (id {id})");
    }
}

/// ROOT's dump of RNTuple `t` in `path`; `None` without the venv with ROOT.
fn root_dump(path: &Path) -> Option<Vec<Value>> {
    let Some(py) = python() else {
        eprintln!("no venv with ROOT ($RNTUPLE_CACHE/venv): ROOT check skipped");
        return None;
    };
    let job = Job { file: path.to_path_buf(), ntuple: "t".into(), written: None };
    Some(root_dumps(&py, &[job]).pop().expect("one result").unwrap_or_else(|e| panic!("{e}")))
}

/// Our reader and ROOT (if there) read `path` as `want` says.
fn check_file(path: &Path, want: &HashMap<i64, Value>) {
    check_rows(&our_dump(path, "t"), want, &format!("{}: our reader", path.display()));
    if let Some(root) = root_dump(path) {
        check_rows(&root, want, &format!("{}: ROOT", path.display()));
    }
}

fn options() -> WriteOptions {
    // Clusters only where the test commits them.
    WriteOptions { compression_threads: 2, ..Default::default() }
}

#[test]
fn contexts_before_and_after_an_extension_give_zeros_where_fields_were_missing() {
    let path = scratch("parallel-extension.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let w = ParallelWriter::new(&file, "t", &old_schema(), &HashMap::new(), options()).expect("writer");
    let mut a = w.create_fill_context().expect("a");
    let mut b = w.create_fill_context().expect("b");
    a.write_batch(&old(0..100, 0)).expect("a old");
    a.flush_cluster().expect("a flush");
    b.write_batch(&old(100..150, 1)).expect("b old, open at the extension");

    w.add_fields(&added_schema(), &HashMap::new(), &[Projection::new("id2", "id")]).expect("add_fields");
    assert_eq!(w.schema().expect("schema").fields().len(), 9);
    assert_eq!(a.schema().fields().len(), 2, "a context keeps its schema until it adopts the newest");
    assert_eq!(b.schema().fields().len(), 2);

    let mut c = w.create_fill_context().expect("c");
    assert_eq!(c.schema(), w.schema().expect("schema"), "new contexts start with the newest schema");
    c.write_batch(&full(150..200, 2)).expect("c new");
    c.flush_cluster().expect("c flush");
    // An old-schema context commits after the extension: its entries get zeros.
    b.flush_cluster().expect("b flush");
    assert_eq!(b.schema().fields().len(), 9, "b adopted the newest schema with its commit");
    // A context switches schema in the middle of its cluster.
    a.write_batch(&old(200..230, 0)).expect("a old");
    assert_eq!(a.schema().fields().len(), 2);
    a.write_batch(&full(230..260, 0)).expect("a new");
    assert_eq!(a.schema().fields().len(), 9);
    a.write_batch(&old(260..270, 0)).expect("a old again: an earlier schema is still taken");
    a.close().expect("a close");
    b.write_batch(&old(270..280, 1)).expect("b old");
    b.close().expect("b close");
    c.write_batch(&old(280..290, 2)).expect("c old");
    drop(c);
    w.close().expect("close");
    file.finish().expect("finish");

    let with_values = |id: i64| (150..200).contains(&id) || (230..260).contains(&id);
    let who = |id: i64| match id {
        0..100 | 200..270 => 0,
        100..150 | 270..280 => 1,
        _ => 2,
    };
    let mut want: HashMap<i64, Value> = (0..290).map(|id| (id, expected(id, who(id), with_values(id)))).collect();
    for v in want.values_mut() {
        v["id2"] = v["id"].clone();
    }
    check_file(&path, &want);

    // The extension sits at the boundary of the 100 entries committed then:
    // in the footer, its principal columns deferred to entry 100.
    let f = RNTupleFile::open(&path).expect("open");
    let t = f.rntuple("t").expect("t");
    let d = t.descriptor();
    assert_eq!(d.num_header_fields, 2);
    assert_eq!(d.num_header_columns, 2);
    let n_col = d.columns.iter().position(|c| d.fields[c.field_id as usize].name == "n").expect("column of n");
    assert_eq!(d.columns[n_col].first_element_index, Some(100));
    // Clusters: a's first (100), c's (50), b's (50), a's switching one (70), b's, c's.
    let sizes: Vec<u64> = d.clusters.iter().map(|c| c.num_entries).collect();
    assert_eq!(sizes, [100, 50, 50, 70, 10, 10]);
    assert!(d.clusters[0].columns.len() < d.columns.len(), "the cluster before the extension lacks its columns");
    assert!(d.clusters[1..].iter().all(|c| c.columns.len() == d.columns.len()));
}

#[test]
fn an_extension_before_the_first_commit_covers_the_open_clusters() {
    let path = scratch("parallel-extension-early.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let w = ParallelWriter::new(&file, "t", &old_schema(), &HashMap::new(), options()).expect("writer");
    let mut a = w.create_fill_context().expect("a");
    a.write_batch(&old(0..50, 0)).expect("a old");
    w.add_fields(&added_schema(), &HashMap::new(), &[]).expect("add_fields");
    let mut b = w.create_fill_context().expect("b");
    b.write_batch(&full(50..80, 1)).expect("b new");
    b.close().expect("b close");
    a.write_batch(&old(80..100, 0)).expect("a old");
    a.close().expect("a close");
    w.close().expect("close");
    file.finish().expect("finish");
    let want: HashMap<i64, Value> = (0..100)
        .map(|id| (id, expected(id, if (50..80).contains(&id) { 1 } else { 0 }, (50..80).contains(&id))))
        .collect();
    check_file(&path, &want);
    let f = RNTupleFile::open(&path).expect("open");
    let d = f.rntuple("t").expect("t").descriptor().clone();
    assert_eq!(d.num_header_fields, 2, "the header was written before the extension");
    assert!(d.columns[2..].iter().all(|c| c.first_element_index.is_none()), "nothing committed: nothing deferred");
}

#[test]
fn refused_extensions_and_batches_change_nothing() {
    let path = scratch("parallel-extension-refused.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let small = WriteOptions { memory_budget: 64 << 10, ..options() };
    let w = ParallelWriter::new(&file, "t", &old_schema(), &HashMap::new(), small).expect("writer");
    let mut a = w.create_fill_context().expect("a");
    a.write_batch(&old(0..10, 0)).expect("a old");

    let clash = Schema::new(vec![Field::new("id", DataType::Int32, false)]);
    let e = w.add_fields(&clash, &HashMap::new(), &[]).expect_err("name clash").to_string();
    assert!(e.contains("already has a top-level field named 'id'"), "{e}");
    let ov = HashMap::from([("nope".to_string(), FieldOverride::type_name("float"))]);
    let e = w.add_fields(&added_schema(), &ov, &[]).expect_err("override of no field").to_string();
    assert!(e.contains("'nope'"), "{e}");
    // More columns than the memory budget can hold: refused before anything changes.
    let wide: Vec<Field> = (0..400).map(|i| Field::new(format!("w{i}"), DataType::Float64, false)).collect();
    let e = w.add_fields(&Schema::new(wide), &HashMap::new(), &[]).expect_err("budget").to_string();
    assert!(e.contains("memory_budget"), "{e}");
    let e = w.add_fields(&added_schema(), &HashMap::new(), &[Projection::new("p", "nope")]).expect_err("projection");
    assert!(e.to_string().contains("projection 'p'"), "{e}");
    assert_eq!(w.schema().expect("schema"), *old_schema(), "refusals leave the schema as it was");

    w.add_fields(&added_schema(), &HashMap::new(), &[]).expect("add_fields");
    // A batch matching neither schema, a batch of the right width with a
    // wrong name: refused, the context goes on.
    let three = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("who", DataType::UInt8, false),
            Field::new("n", DataType::Int32, false),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![10])),
            Arc::new(UInt8Array::from(vec![0])),
            Arc::new(Int32Array::from(vec![30])),
        ],
    )
    .expect("three");
    let e = a.write_batch(&three).expect_err("neither schema").to_string();
    assert!(e.contains("batch has 3 columns, which matches no schema") && e.contains("2, 9"), "{e}");
    let renamed = full(10..11, 0);
    let mut fields: Vec<Field> = renamed.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields[2] = Field::new("n2", DataType::Int32, false);
    let renamed = RecordBatch::try_new(Arc::new(Schema::new(fields)), renamed.columns().to_vec()).expect("renamed");
    let e = a.write_batch(&renamed).expect_err("wrong name").to_string();
    assert!(e.contains("'n2' where field 'n'"), "{e}");
    assert_eq!(a.num_entries(), 10);
    a.write_batch(&full(10..20, 0)).expect("a new");
    a.close().expect("a close");
    w.close().expect("close");
    file.finish().expect("finish");
    let want: HashMap<i64, Value> = (0..20).map(|id| (id, expected(id, 0, id >= 10))).collect();
    check_rows(&our_dump(&path, "t"), &want, "refusals");
}

/// Every type the writer infers (`write_support::everything`), added late:
/// the entries an old-schema context filled read, in our reader and in
/// ROOT, exactly as the entries before the extension (the deferred columns'
/// zeros, which the readers make up, not the writer), and the entries filled
/// with the new fields read as written.
#[test]
fn every_type_reads_like_a_deferred_column_where_it_was_missing() {
    let path = scratch("parallel-extension-every-type.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let id_schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
    let ids = |r: Range<i64>| {
        RecordBatch::try_new(id_schema.clone(), vec![Arc::new(Int64Array::from_iter_values(r))]).expect("ids")
    };
    let w = ParallelWriter::new(&file, "t", &id_schema, &HashMap::new(), options()).expect("writer");
    let mut a = w.create_fill_context().expect("a");
    a.write_batch(&ids(0..10)).expect("a");
    a.close().expect("a close");
    let mut b = w.create_fill_context().expect("b");
    b.write_batch(&ids(10..20)).expect("b");
    let values = write_support::everything(7, 99);
    w.add_fields(&values.schema(), &HashMap::new(), &[]).expect("add_fields");
    b.flush_cluster().expect("b commits after the extension");
    let mut c = w.create_fill_context().expect("c");
    let mut fields = vec![Field::new("id", DataType::Int64, false)];
    fields.extend(values.schema().fields().iter().map(|f| f.as_ref().clone()));
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(20..27))];
    columns.extend(values.columns().iter().cloned());
    c.write_batch(&RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("full")).expect("c");
    c.close().expect("c close");
    b.write_batch(&ids(27..30)).expect("b old after adopting");
    drop(b);
    w.close().expect("close");
    file.finish().expect("finish");

    let written = write_support::rows(&values);
    let check = |rows: Vec<Value>, what: &str| {
        assert_eq!(rows.len(), 30, "{what}");
        let by_id: HashMap<i64, &Value> = rows.iter().map(|r| (r["id"].as_i64().expect("id"), r)).collect();
        let without_id = |id: i64| {
            let mut v = by_id[&id].clone();
            v.as_object_mut().expect("object").remove("id");
            v
        };
        let deferred = without_id(0);
        assert_ne!(deferred.as_object().map(|o| o.len()), Some(0), "{what}");
        for id in (1..10).chain(10..20).chain(27..30) {
            assert_eq!(without_id(id), deferred, "{what}: id {id} against the deferred entry 0");
        }
        for (k, want) in written.iter().enumerate() {
            assert_eq!(&without_id(20 + k as i64), want, "{what}: id {}", 20 + k);
        }
    };
    check(our_dump(&path, "t"), "our reader");
    if let Some(root) = root_dump(&path) {
        check(root, "ROOT");
    }
}

/// A context of the old schema handed a batch that spans several clusters
/// after an extension: it adopts the newest schema at the first commit inside
/// the batch, and the rest of the batch gets the new fields' zeros too.
#[test]
fn a_context_adopting_at_a_commit_inside_a_batch_completes_the_rest_of_it() {
    let path = scratch("parallel-extension-inside-a-batch.root");
    let file = SharedFileWriter::create(&path, WriterOptions::default()).expect("create");
    let opts = WriteOptions { approx_zipped_cluster_size: 20_000, compression: 0, ..options() };
    let w = ParallelWriter::new(&file, "t", &old_schema(), &HashMap::new(), opts).expect("writer");
    let mut a = w.create_fill_context().expect("a");
    a.write_batch(&old(0..10, 0)).expect("a");
    w.add_fields(&added_schema(), &HashMap::new(), &[]).expect("add_fields");
    a.write_batch(&old(10..6000, 0)).expect("a, several clusters");
    assert_eq!(a.schema().fields().len(), 9, "adopted at a commit inside the batch");
    a.close().expect("a close");
    w.close().expect("close");
    file.finish().expect("finish");
    let want: HashMap<i64, Value> = (0..6000).map(|id| (id, expected(id, 0, false))).collect();
    check_rows(&our_dump(&path, "t"), &want, "inside a batch");
    let f = RNTupleFile::open(&path).expect("open");
    assert!(f.rntuple("t").expect("t").descriptor().clusters.len() > 2, "the batch spans several clusters");
}
