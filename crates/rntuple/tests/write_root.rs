//! ROOT 6.40 reads what we write: files written here are dumped by
//! `tests/reference/root_dump.py` (ROOT's own RNTuple reader, see
//! docs/dump-format.md) and compared entry by entry with our reader's dump
//! and with the Arrow data written.
//!
//! Needs the Python environment with ROOT that `.ci/run` sets up
//! (`$RNTUPLE_CACHE/venv`, default `~/.cache/rntuple-ci/venv`); without it
//! the test prints why and passes.

mod write_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, Float64Array, Int32Array, Int8Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields};
use rntuple::write::{FieldOverride, ParallelWriter, RNTupleWriter, RealEncoding, SharedFileWriter, WriteOptions};
use rntuple_container::write::{FileWriter, WriterOptions};
use serde_json::Value;
use write_support::*;

fn dumper() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/root_dump.py"))
}

/// One dump job: the file, the RNTuple, what we expect (None: only compare
/// with our reader).
struct Job {
    file: PathBuf,
    ntuple: String,
    written: Option<Vec<Value>>,
}

/// Runs ROOT on all jobs in one process; returns per job the parsed entries
/// or the error / skipped fields ROOT reported.
fn root_dumps(py: &Path, jobs: &[Job]) -> Vec<Result<Vec<Value>, String>> {
    let dir = scratch("root-dumps");
    std::fs::create_dir_all(&dir).expect("dump dir");
    let spec: Vec<Value> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            serde_json::json!({
                "file": j.file.to_string_lossy(),
                "ntuple": j.ntuple,
                "out": dir.join(format!("{i}.jsonl")).to_string_lossy(),
            })
        })
        .collect();
    let jobs_path = dir.join("jobs.json");
    std::fs::write(&jobs_path, serde_json::to_string(&spec).expect("jobs")).expect("write jobs");
    let out = Command::new(py).arg(dumper()).arg("--batch").arg(&jobs_path).output().expect("run root_dump.py");
    let stderr = String::from_utf8_lossy(&out.stderr);
    (0..jobs.len())
        .map(|i| {
            let out = dir.join(format!("{i}.jsonl"));
            if let Ok(e) = std::fs::read_to_string(dir.join(format!("{i}.jsonl.error"))) {
                return Err(format!("ROOT failed: {e}\n{stderr}"));
            }
            let meta: Value = std::fs::read_to_string(dir.join(format!("{i}.jsonl.meta.json")))
                .ok()
                .and_then(|m| serde_json::from_str(&m).ok())
                .ok_or_else(|| format!("no metadata from root_dump.py (status {}):\n{stderr}", out.display()))?;
            if meta["skipped_fields"].as_object().is_some_and(|m| !m.is_empty()) {
                return Err(format!("ROOT could not read fields: {}", meta["skipped_fields"]));
            }
            let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}\n{stderr}", out.display()))?;
            Ok(text.lines().map(|l| serde_json::from_str(l).expect("json line from ROOT")).collect())
        })
        .collect()
}

fn small(compression: u32) -> WriteOptions {
    WriteOptions {
        compression,
        approx_zipped_cluster_size: 4000,
        max_unzipped_cluster_size: 64 * 1024,
        initial_unzipped_page_size: 32,
        max_unzipped_page_size: 512,
        cluster_group_size: 2,
        ..Default::default()
    }
}

/// Fields with every override this writer has.
fn overridden() -> (RecordBatch, HashMap<String, FieldOverride>) {
    let n = 300;
    let mut rng = Rng::new(77);
    let d = |rng: &mut Rng| (rng.below(2000) as f64 - 1000.0) / 7.0;
    let f64s = |rng: &mut Rng| -> ArrayRef { Arc::new(Float64Array::from_iter_values((0..n).map(|_| d(rng)))) };
    let f32s = |rng: &mut Rng| -> ArrayRef {
        Arc::new(Float32Array::from_iter_values((0..n).map(|_| (rng.below(2000) as f32 - 1000.0) / 3.0)))
    };
    let jet = StructArray::new(
        Fields::from(vec![Field::new("pt", DataType::Float32, false), Field::new("eta", DataType::Float32, false)]),
        vec![f32s(&mut rng), f32s(&mut rng)],
        Some((0..n).map(|i| i % 4 != 0).collect()),
    );
    let pair = StructArray::new(
        Fields::from(vec![Field::new("first", DataType::Int32, false), Field::new("second", DataType::Float64, false)]),
        vec![Arc::new(Int32Array::from_iter_values(0..n as i32)), f64s(&mut rng)],
        None,
    );
    let cols: Vec<Column> = vec![
        ("d32", false, f64s(&mut rng)),
        ("r16", false, f32s(&mut rng)),
        ("r32", false, f64s(&mut rng)),
        ("trunc", false, f32s(&mut rng)),
        ("quant", false, f64s(&mut rng)),
        ("plain", false, f64s(&mut rng)),
        ("c", false, Arc::new(Int8Array::from_iter_values((0..n).map(|i| (i % 120) as i8 + 1)))),
        ("jet", true, Arc::new(jet)),
        ("pair", false, Arc::new(pair)),
    ];
    let mut rng2 = Rng::new(5);
    let mut cols = cols;
    cols.extend(collections(n, &mut rng2).into_iter().filter(|(name, _, _)| matches!(*name, "v" | "s" | "vv")));
    let ov: HashMap<String, FieldOverride> = [
        ("d32", FieldOverride::type_name("Double32_t")),
        ("r16", FieldOverride::real(RealEncoding::Real16)),
        ("r32", FieldOverride::real(RealEncoding::Real32)),
        ("trunc", FieldOverride::real(RealEncoding::Real32Trunc { bits: 14 })),
        ("quant", FieldOverride::real(RealEncoding::Real32Quant { bits: 20, min: -200.0, max: 200.0 })),
        ("plain", FieldOverride { split: Some(false), ..Default::default() }),
        ("c", FieldOverride::type_name("char")),
        ("jet", FieldOverride::type_name("std::optional<Jet>")),
        ("pair", FieldOverride::type_name("std::pair<int,double>")),
        ("v", FieldOverride { type_name: Some("ROOT::RVec<float>".into()), index32: Some(true), ..Default::default() }),
        ("s", FieldOverride { index32: Some(true), split: Some(false), ..Default::default() }),
        ("vv", FieldOverride::type_name("std::vector<std::vector<std::int32_t>>")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    (batch(cols), ov)
}

/// Shapes at the edges of the type mapping: nested and empty untyped
/// records, collections of collections of records, optionals of arrays,
/// vectors of optionals and of variants.
fn edges(n: usize) -> (RecordBatch, HashMap<String, FieldOverride>) {
    use arrow_array::builder::{BooleanBuilder, FixedSizeListBuilder, ListBuilder, StringBuilder};
    use arrow_array::{Array, BooleanArray, FixedSizeListArray, ListArray};
    let mut rng = Rng::new(99);
    let inner = StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int32, false)]),
        vec![Arc::new(Int32Array::from_iter_values(0..n as i32))],
        None,
    );
    let empty = StructArray::new_empty_fields(n, None);
    let outer = StructArray::new(
        Fields::from(vec![
            Field::new("inner", inner.data_type().clone(), false),
            Field::new("empty", empty.data_type().clone(), false),
        ]),
        vec![Arc::new(inner), Arc::new(empty)],
        None,
    );
    // list<list<struct{x: f32}>>: untyped all the way down.
    let leaf_fields = Fields::from(vec![Field::new("x", DataType::Float32, false)]);
    let mut n_leaf = 0;
    let mut inner_offsets = vec![0i32];
    let mut outer_offsets = vec![0i32];
    for _ in 0..n {
        for _ in 0..rng.below(3) {
            n_leaf += rng.below(3) as i32;
            inner_offsets.push(n_leaf);
        }
        outer_offsets.push(inner_offsets.len() as i32 - 1);
    }
    let leaves = StructArray::new(
        leaf_fields,
        vec![Arc::new(Float32Array::from_iter_values((0..n_leaf).map(|i| i as f32)))],
        None,
    );
    let inner_list = ListArray::new(
        Arc::new(Field::new("item", leaves.data_type().clone(), false)),
        arrow_buffer::OffsetBuffer::new(inner_offsets.into()),
        Arc::new(leaves),
        None,
    );
    let nested = ListArray::new(
        Arc::new(Field::new("item", inner_list.data_type().clone(), false)),
        arrow_buffer::OffsetBuffer::new(outer_offsets.into()),
        Arc::new(inner_list),
        None,
    );
    // Optional std::array<bool,2>, std::array<std::string,2>.
    let mut oa = FixedSizeListBuilder::new(BooleanBuilder::new(), 2);
    let mut sa = FixedSizeListBuilder::new(StringBuilder::new(), 2);
    for i in 0..n {
        oa.values().append_value(i % 2 == 0);
        oa.values().append_value(i % 3 == 0);
        oa.append(i % 5 != 0);
        sa.values().append_value("α");
        sa.values().append_value(i.to_string());
        sa.append(true);
    }
    let oa: FixedSizeListArray = oa.finish();
    // vector<optional<float>> (needs the override: list items are not optional by default).
    let mut vo = ListBuilder::new(arrow_array::builder::Float32Builder::new());
    for i in 0..n {
        for k in 0..i % 3 {
            vo.values().append_option((k != 1).then_some(k as f32));
        }
        vo.append(true);
    }
    let cols: Vec<Column> = vec![
        ("outer", false, Arc::new(outer)),
        ("nested", false, Arc::new(nested)),
        ("oa", true, Arc::new(oa)),
        ("sa", false, Arc::new(sa.finish())),
        ("vo", false, Arc::new(vo.finish())),
        ("flag", false, Arc::new(BooleanArray::from_iter((0..n).map(|i| Some(i % 7 == 0))))),
    ];
    let ov = [("vo._0", FieldOverride::type_name("std::optional<float>"))]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    (batch(cols), ov)
}

#[test]
fn root_reads_what_we_write() {
    let Some(py) = python() else {
        eprintln!("skipping: no Python environment with ROOT (run .ci/run once to create it)");
        return;
    };
    let mut jobs = Vec::new();

    // Every inferred type, every compression algorithm, small pages and clusters.
    let batches = [everything(600, 21), everything(0, 22), everything(257, 23)];
    let written: Vec<Value> = batches.iter().flat_map(rows).collect();
    for compression in [0, 505, 101, 207, 404] {
        let file = scratch(&format!("root-{compression}.root"));
        rntuple::write_batches(&file, "t", batches.iter().cloned(), &HashMap::new(), small(compression))
            .expect("write");
        jobs.push(Job { file, ntuple: "t".into(), written: Some(written.clone()) });
    }

    // ROOT's defaults.
    let file = scratch("root-defaults.root");
    let big = everything(2000, 24);
    rntuple::write_batches(&file, "Events", [big.clone()], &HashMap::new(), WriteOptions::default()).expect("write");
    jobs.push(Job { file, ntuple: "Events".into(), written: Some(rows(&big)) });

    // Overrides: low-precision floats, index32, plain encodings, char, named classes, RVec.
    let (b, ov) = overridden();
    let file = scratch("root-overrides.root");
    rntuple::write_batches(&file, "o", [b], &ov, small(505)).expect("write overrides");
    jobs.push(Job { file, ntuple: "o".into(), written: None });

    // Edge shapes, and an RNTuple without entries.
    let (b, ov) = edges(200);
    let file = scratch("root-edges.root");
    rntuple::write_batches(&file, "e", [b.clone()], &ov, small(505)).expect("write edges");
    jobs.push(Job { file, ntuple: "e".into(), written: Some(rows(&b)) });
    let file = scratch("root-empty.root");
    rntuple::write_batches(&file, "e", [b.slice(0, 0)], &ov, WriteOptions::default()).expect("write empty");
    jobs.push(Job { file, ntuple: "e".into(), written: Some(Vec::new()) });

    // Two RNTuples in one file, one in a subdirectory, pages split over keys.
    let file = scratch("root-two.root");
    {
        let mut fw =
            FileWriter::create(&file, WriterOptions { max_key_size: 700, ..Default::default() }).expect("create");
        let a = everything(400, 31);
        let mut w = RNTupleWriter::new(&mut fw, "first", &a.schema(), &HashMap::new(), small(0)).expect("writer");
        w.write_batch(&a).expect("batch");
        w.close().expect("close");
        let b = everything(100, 32);
        let opts = WriteOptions { max_unzipped_page_size: 4096, ..small(0) };
        let mut w = RNTupleWriter::new(&mut fw, "dir/second", &b.schema(), &HashMap::new(), opts).expect("writer");
        w.write_batch(&b).expect("batch");
        w.close().expect("close");
        fw.finish().expect("finish");
        jobs.push(Job { file: file.clone(), ntuple: "first".into(), written: Some(rows(&a)) });
        jobs.push(Job { file, ntuple: "dir/second".into(), written: Some(rows(&b)) });
    }

    // Fill contexts of a ParallelWriter on three threads: clusters of the
    // contexts interleaved in commit order.
    let file = scratch("root-parallel.root");
    {
        let shared = SharedFileWriter::create(&file, WriterOptions::default()).expect("create");
        let parts = [everything(300, 41), everything(250, 42), everything(170, 43)];
        let w = ParallelWriter::new(&shared, "p", &parts[0].schema(), &HashMap::new(), small(505)).expect("parallel");
        std::thread::scope(|s| {
            for b in &parts {
                let mut ctx = w.create_fill_context().expect("context");
                s.spawn(move || {
                    for _ in 0..2 {
                        ctx.write_batch(b).expect("batch");
                        ctx.flush_cluster().expect("flush");
                    }
                    ctx.close().expect("close context");
                });
            }
        });
        w.close().expect("close");
        shared.finish().expect("finish");
        jobs.push(Job { file, ntuple: "p".into(), written: None });
    }

    let results = root_dumps(&py, &jobs);
    let mut failures = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        let what = format!("{}:{}", job.file.display(), job.ntuple);
        match result {
            Err(e) => failures.push(format!("{what}: {e}")),
            Ok(root) => {
                let ours = our_dump(&job.file, &job.ntuple);
                assert_same_rows(&ours, &root, &format!("{what}: our reader vs ROOT"));
                if let Some(w) = &job.written {
                    assert_same_rows(w, &root, &format!("{what}: written vs ROOT"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "ROOT could not read:\n{}", failures.join("\n"));
}

/// uproot 5.7 (the second reference reader) opens our files and reads every
/// field. It does not read payloads split over several keys, so those are
/// left out here.
#[test]
fn uproot_reads_what_we_write() {
    let Some(py) = python() else {
        eprintln!("skipping: no Python environment with uproot (run .ci/run once to create it)");
        return;
    };
    let a = scratch("uproot-small.root");
    rntuple::write_batches(&a, "t", [everything(500, 51), everything(77, 52)], &HashMap::new(), small(404))
        .expect("write");
    let (b, ov) = overridden();
    let o = scratch("uproot-overrides.root");
    rntuple::write_batches(&o, "o", [b], &ov, small(0)).expect("write");
    let script = r#"
import sys, warnings
warnings.simplefilter("ignore")
import uproot
for path, name, n in [(sys.argv[1], "t", 577), (sys.argv[2], "o", 300)]:
    t = uproot.open(path)[name]
    assert t.num_entries == n, (path, t.num_entries)
    for k in t.keys(recursive=False):
        assert len(t[k].array(library="ak")) == n, (path, k)
print("ok")
"#;
    let out = Command::new(py).arg("-c").arg(script).arg(&a).arg(&o).output().expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim() == "ok",
        "uproot failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
