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
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float32Array, Float64Array, Int32Array, Int8Array, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields};
use rntuple::write::{FieldOverride, ParallelWriter, RNTupleWriter, RealEncoding, SharedFileWriter, WriteOptions};
use rntuple_container::write::{FileWriter, WriterOptions};
use serde_json::Value;
use write_support::*;

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
    for compression in [0, 505, 101, 207, 401, 404, 409] {
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

/// `std::atomic<T>`, enums (a class name over integers), user classes with
/// their type version and checksum, negative `char`s, and empty optionals of
/// variants (`std::optional` and `std::unique_ptr`): ROOT 6.40 reads each as
/// written. The enums are declared to ROOT first (it needs an enum's
/// dictionary to read it); the class is emulated from the on-disk schema.
/// ROOT also writes `char`, an `std::int8_t` enum and an atomic itself, and
/// our reader reads them (`char` as Int8, signed as on x86-64).
#[test]
fn root_reads_atomics_enums_classes_and_char() {
    use arrow_array::builder::{Float32Builder, ListBuilder};
    use arrow_array::{Array, Int16Array, UInt16Array, UnionArray};
    use arrow_schema::UnionFields;
    let Some(py) = python() else {
        eprintln!("skipping: no Python environment with ROOT (run .ci/run once to create it)");
        return;
    };
    let n = 60;
    let mut va = ListBuilder::new(Float32Builder::new());
    for i in 0..n {
        for k in 0..i % 3 {
            va.values().append_value(i as f32 + k as f32 / 4.0);
        }
        va.append(true);
    }
    let klass = StructArray::new(
        Fields::from(vec![Field::new("x", DataType::Int32, false)]),
        vec![Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i * 11 - 100)))],
        None,
    );
    // int | float; every third entry null (an empty optional), the others alternate.
    let union = || {
        let (mut ids, mut offs, mut ints, mut floats) = (vec![], vec![], vec![], vec![]);
        for i in 0..n {
            if i % 3 == 0 || i % 3 == 1 {
                ids.push(0i8);
                offs.push(ints.len() as i32);
                ints.push((i % 3 == 1).then_some(i as i32));
            } else {
                ids.push(1);
                offs.push(floats.len() as i32);
                floats.push(i as f32 * 0.5);
            }
        }
        let fields = UnionFields::try_new(
            [0i8, 1],
            [Field::new("i", DataType::Int32, true), Field::new("f", DataType::Float32, true)],
        )
        .expect("union fields");
        let children: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(ints)), Arc::new(Float32Array::from(floats))];
        Arc::new(UnionArray::try_new(fields, ids.into(), Some(offs.into()), children).expect("union")) as ArrayRef
    };
    let ov_union = union();
    assert!(ov_union.logical_nulls().is_some_and(|nb| nb.null_count() == n / 3));
    let cols: Vec<Column> = vec![
        ("a", false, Arc::new(Int32Array::from_iter_values((0..n as i32).map(|i| i * 3 - 20)))),
        ("va", false, Arc::new(va.finish())),
        ("e8", false, Arc::new(Int8Array::from_iter_values((0..n).map(|i| (i % 7) as i8 - 3)))),
        ("eu16", false, Arc::new(UInt16Array::from_iter_values((0..n as u16).map(|i| i * 1000)))),
        ("e16", false, Arc::new(Int16Array::from_iter_values((0..n as i16).map(|i| -i)))),
        ("k", false, Arc::new(klass)),
        ("c", false, Arc::new(Int8Array::from_iter_values((0..n).map(|i| i as i8 - 30)))),
        ("ov", true, ov_union),
        ("up", true, union()),
    ];
    let b = batch(cols);
    let ov: HashMap<String, FieldOverride> = [
        ("a", FieldOverride::type_name("std::atomic<std::int32_t>")),
        ("va", FieldOverride::type_name("std::vector<std::atomic<float>>")),
        ("e8", FieldOverride::type_name("EnumInt8")),
        ("eu16", FieldOverride::type_name("EnumU16")),
        ("e16", FieldOverride::type_name("ns::EnumI16").type_version(0)),
        ("k", FieldOverride::type_name("Klass").type_version(3).type_checksum(840875)),
        ("c", FieldOverride::type_name("char")),
        ("up", FieldOverride::type_name("std::unique_ptr<std::variant<std::int32_t,float>>")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let file = scratch("root-wrappers.root");
    rntuple::write_batches(&file, "t", [b.clone()], &ov, small(505)).expect("write");
    let ours = scratch("root-written-wrappers.root");
    let out = scratch("root-wrappers.jsonl");
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import root_dump
ROOT = root_dump._root()
ROOT.gInterpreter.Declare("""
enum class EnumInt8 : std::int8_t {};
enum class EnumU16 : std::uint16_t {};
namespace ns { enum class EnumI16 : std::int16_t {}; }
void rntuple_schema_write_wrappers(const char *path) {
   auto model = ROOT::RNTupleModel::Create();
   auto c = model->MakeField<char>("c");
   auto e = model->MakeField<EnumInt8>("e8");
   auto a = model->MakeField<std::atomic<std::int32_t>>("a");
   auto w = ROOT::RNTupleWriter::Recreate(std::move(model), "r", path);
   for (int i = 0; i < 3; ++i) { *c = (char)(i - 5); *e = (EnumInt8)(i - 1); *a = 7 * i; w->Fill(); }
}
""")
meta = root_dump.dump(sys.argv[2], "t", sys.argv[3])
d = ROOT.RNTupleReader.Open("t", sys.argv[2]).GetDescriptor()
k = d.GetFieldDescriptor(d.FindFieldId("k"))
cs = k.GetTypeChecksum()
ROOT.rntuple_schema_write_wrappers(sys.argv[4])
print(json.dumps({"meta": meta, "k": [k.GetTypeVersion(), cs.value() if cs.has_value() else None]}))
"#;
    let refdir = dumper().parent().expect("reference dir").to_path_buf();
    let run = Command::new(py).arg("-c").arg(script).arg(&refdir).arg(&file).arg(&out).arg(&ours).output();
    let run = run.expect("run python");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "ROOT failed:\n{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("report");
    assert_eq!(report["meta"]["skipped_fields"], serde_json::json!({}), "ROOT skipped fields: {stderr}");
    assert_eq!(report["k"], serde_json::json!([3, 840875]), "type version and checksum as ROOT reads them");
    let root: Vec<Value> = std::fs::read_to_string(&out)
        .expect("dump")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line from ROOT"))
        .collect();
    assert_same_rows(&rows(&b), &root, "written vs ROOT");
    assert_same_rows(&our_dump(&file, "t"), &root, "our reader vs ROOT");
    // ROOT's own char, enum and atomic, read by us.
    let theirs = our_dump(&ours, "r");
    let expected: Vec<Value> = (0..3).map(|i| serde_json::json!({"c": i - 5, "e8": i - 1, "a": 7 * i})).collect();
    assert_same_rows(&expected, &theirs, "ROOT's char, enum, atomic read by us");
    let t = rntuple::RNTupleFile::open(&ours).expect("open").rntuple("r").expect("rntuple");
    let c = t.schema().field("c").expect("c").arrow_field();
    assert_eq!(c.data_type(), &DataType::Int8, "char is signed, as ROOT has it");
}
