//! The writer's memory budget (`WriteOptions::memory_budget`): the bytes its
//! buffers hold never exceed it, on wide and on deep schemas, and what it
//! writes reads back the same as without a budget.

mod write_support;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder};
use arrow_array::*;
use rntuple::write::RNTupleWriter;
use rntuple::{RNTupleFile, WriteOptions};
use rntuple_container::write::{FileWriter, WriterOptions};
use write_support::*;

/// `cols` columns: floats, integers, booleans and vectors of floats in turn.
fn wide(n: usize, cols: usize, seed: u64) -> RecordBatch {
    let mut rng = Rng::new(seed);
    let columns: Vec<Column> = (0..cols)
        .map(|k| {
            let name: &'static str = Box::leak(format!("c{k}").into_boxed_str());
            let a: ArrayRef = match k % 4 {
                0 => Arc::new(Float32Array::from_iter_values((0..n).map(|_| rng.below(1000) as f32 * 0.25))),
                1 => Arc::new(Int64Array::from_iter_values((0..n).map(|_| rng.below(1 << 20) as i64))),
                2 => Arc::new(BooleanArray::from_iter((0..n).map(|_| Some(rng.chance(30))))),
                _ => {
                    let mut v = ListBuilder::new(Float32Builder::new());
                    for _ in 0..n {
                        for _ in 0..rng.below(6) {
                            v.values().append_value(rng.below(500) as f32);
                        }
                        v.append(true);
                    }
                    Arc::new(v.finish())
                }
            };
            (name, false, a)
        })
        .collect();
    batch(columns)
}

/// Writes `batches` into `path`; returns the writer's high-water mark.
fn write(path: &std::path::Path, batches: &[RecordBatch], options: WriteOptions) -> u64 {
    let mut file = FileWriter::create(path, WriterOptions::default()).expect("create");
    let mut w = RNTupleWriter::new(&mut file, "t", &batches[0].schema(), &HashMap::new(), options).expect("writer");
    for b in batches {
        w.write_batch(b).expect("write");
    }
    let used = w.memory_use();
    w.close().expect("close");
    file.finish().expect("finish");
    used.high_water
}

fn clusters(path: &std::path::Path) -> usize {
    RNTupleFile::open(path).expect("open").rntuple("t").expect("rntuple").descriptor().clusters.len()
}

fn check(name: &str, batches: &[RecordBatch], budget: u64) {
    let expected: Vec<_> = batches.iter().flat_map(rows).collect();
    let free = scratch(&format!("{name}-free.root"));
    let unbounded = write(&free, batches, WriteOptions::default());
    assert_eq!(clusters(&free), 1);
    assert!(unbounded > budget, "{name}: without a budget the writer holds {unbounded} bytes, not more than {budget}");
    // Grouped by column, the cluster's compressed pages are held: the budget
    // commits clusters early. Streamed, they leave as they are compressed.
    for (threads, group) in [(1, true), (2, true), (1, false), (2, false)] {
        let path = scratch(&format!("{name}-{threads}-{group}.root"));
        let options = WriteOptions {
            memory_budget: budget,
            compression_threads: threads,
            group_pages_by_column: group,
            ..Default::default()
        };
        let high = write(&path, batches, options);
        assert!(high <= budget, "{name}: high-water mark {high} over the budget of {budget}");
        assert!(high > budget / 4, "{name}: high-water mark {high}: the budget of {budget} is hardly used");
        if group {
            assert!(clusters(&path) > 2, "{name}: {} clusters: no cluster committed early", clusters(&path));
        }
        let back = RNTupleFile::open(&path).expect("open").rntuple("t").expect("rntuple").read_all().expect("read");
        assert_same_rows(&expected, &rows(&back), name);
    }
}

#[test]
fn a_wide_schema_stays_within_its_budget() {
    // 400 fields, 500 columns, about 11 MB of elements.
    let batches = [wide(1500, 400, 1), wide(1, 400, 2), wide(1000, 400, 3)];
    check("wide", &batches, 1 << 20);
}

#[test]
fn a_deep_schema_stays_within_its_budget() {
    // Vectors of vectors, of records, of strings; optionals, variants, arrays.
    let batches = [everything(5000, 21), everything(7000, 22)];
    check("deep", &batches, 256 << 10);
}

#[test]
fn a_budget_too_small_for_the_columns_is_refused() {
    let b = wide(10, 400, 4);
    let path = scratch("too-small.root");
    let options = WriteOptions { memory_budget: 100_000, ..Default::default() };
    let mut file = FileWriter::create(&path, WriterOptions::default()).expect("create");
    let e = RNTupleWriter::new(&mut file, "t", &b.schema(), &HashMap::new(), options).unwrap_err().to_string();
    assert!(e.contains("memory_budget of 100000 bytes is too small for 500 columns"), "{e}");
    assert!(e.contains("at least 528064 bytes"), "{e}");
}

#[test]
fn an_entry_larger_than_the_budget_is_refused() {
    let mut v = ListBuilder::new(Float32Builder::new());
    v.append(true);
    for i in 0..1_000_000 {
        v.values().append_value(i as f32);
    }
    v.append(true);
    let b = batch(vec![("v", false, Arc::new(v.finish()))]);
    let path = scratch("big-entry.root");
    let options = WriteOptions { memory_budget: 1 << 20, ..Default::default() };
    let mut file = FileWriter::create(&path, WriterOptions::default()).expect("create");
    let mut w = RNTupleWriter::new(&mut file, "t", &b.schema(), &HashMap::new(), options).expect("writer");
    let e = w.write_batch(&b).unwrap_err().to_string();
    assert!(e.contains("entry 1 of the batch (entry 1 of RNTuple 't') takes 4000008 bytes"), "{e}");
    assert!(e.contains("raise memory_budget"), "{e}");
    assert!(w.has_failed());
}
