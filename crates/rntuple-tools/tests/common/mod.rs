//! Shared by the tools' integration tests: test data paths, scratch files,
//! deterministic record batches written with the crate's writer, reading back.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, Int32Builder, LargeListBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field, Fields, Schema};
use rntuple::{FieldOverride, RNTupleFile, WriteOptions};

pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

/// A fresh path in Cargo's per-test scratch directory (any old file removed).
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tools-tests");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let p = dir.join(name);
    let _ = std::fs::remove_file(&p);
    p
}

/// The good RNTuple files of `tests/data` (the corrupt ones are in `bad/`).
pub fn good_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data(""))
        .expect("tests/data")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "root"))
        .collect();
    v.sort();
    v
}

/// `n` entries starting at entry `first`: scalars, a vector, a string, a record.
/// With `extra`, one more field `extra_i16` (for schema-mode tests).
pub fn batch(first: usize, n: usize, extra: bool) -> RecordBatch {
    let idx = first..first + n;
    let mut fields = vec![
        Field::new("i32", DataType::Int32, false),
        Field::new("f64", DataType::Float64, false),
        Field::new("flag", DataType::Boolean, false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(idx.clone().map(|i| (i as i32).wrapping_mul(7919) - 3))),
        Arc::new(Float64Array::from_iter_values(idx.clone().map(|i| i as f64 * 0.5))),
        Arc::new(BooleanArray::from_iter(idx.clone().map(|i| Some(i % 3 == 0)))),
    ];
    let mut vb = LargeListBuilder::new(Float32Builder::new()).with_field(Field::new("item", DataType::Float32, false));
    for i in idx.clone() {
        for k in 0..(i % 4) {
            vb.values().append_value(i as f32 + k as f32 / 8.0);
        }
        vb.append(true);
    }
    let v = vb.finish();
    fields.push(Field::new("vf", v.data_type().clone(), false));
    cols.push(Arc::new(v));
    fields.push(Field::new("s", DataType::LargeUtf8, false));
    cols.push(Arc::new(LargeStringArray::from_iter_values(idx.clone().map(|i| format!("entry {i}")))));
    let rec_fields =
        Fields::from(vec![Field::new("a", DataType::Int64, false), Field::new("b", DataType::Float32, false)]);
    let rec = StructArray::new(
        rec_fields.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(idx.clone().map(|i| -(i as i64) * 1_000_000_007))),
            Arc::new(Float32Array::from_iter_values(idx.clone().map(|i| (i % 17) as f32))),
        ],
        None,
    );
    fields.push(Field::new("rec", DataType::Struct(rec_fields), false));
    cols.push(Arc::new(rec));
    if extra {
        fields.push(Field::new("extra_i16", DataType::Int16, false));
        cols.push(Arc::new(Int16Array::from_iter_values(idx.clone().map(|i| (i % 30000) as i16 + 1))));
        let mut vb = LargeListBuilder::new(Int32Builder::new()).with_field(Field::new("item", DataType::Int32, false));
        for i in idx {
            for k in 0..(i % 3) {
                vb.values().append_value(i as i32 * 10 + k as i32);
            }
            vb.append(true);
        }
        let v = vb.finish();
        fields.push(Field::new("extra_vi", v.data_type().clone(), false));
        cols.push(Arc::new(v));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).expect("batch")
}

/// Small clusters and pages so that files have many of both.
pub fn small(compression: u32) -> WriteOptions {
    WriteOptions {
        compression,
        approx_zipped_cluster_size: 4000,
        max_unzipped_cluster_size: 32 * 1024,
        initial_unzipped_page_size: 64,
        max_unzipped_page_size: 1024,
        cluster_group_size: 2,
        ..Default::default()
    }
}

/// Writes `batches` as RNTuple `name` into `path`.
pub fn write(path: &PathBuf, name: &str, batches: Vec<RecordBatch>, options: WriteOptions) {
    rntuple::write_batches(path, name, batches, &HashMap::<String, FieldOverride>::new(), options).expect("write");
}

/// Everything of RNTuple `name` of `path`, read by the crate's reader.
pub fn read_all(path: &PathBuf, name: &str) -> RecordBatch {
    let f = RNTupleFile::open(path).expect("open");
    f.rntuple(name).expect("rntuple").read_all().expect("read")
}

/// Concatenates batches of the same schema.
pub fn concat(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).expect("concat")
}
