//! Shared by the `write_*` tests: deterministic Arrow batches covering every
//! type the writer infers, writing helpers, and dump comparison.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::builder::*;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, UnionFields};
use rntuple::{FieldOverride, RNTupleFile, WriteOptions};
use serde_json::{Map, Number, Value};

/// The Python of the venv with ROOT (`$RNTUPLE_CACHE/venv`, default
/// `~/.cache/rntuple-ci/venv`), if there is one.
pub fn python() -> Option<PathBuf> {
    let cache = std::env::var_os("RNTUPLE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rntuple-ci")))?;
    let py = cache.join("venv/bin/python");
    py.exists().then_some(py)
}

/// A fresh path in Cargo's per-test scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("write-tests");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name)
}

/// Tiny deterministic generator (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn arc(a: impl Array + 'static) -> ArrayRef {
    Arc::new(a)
}

const WORDS: [&str; 8] = ["", "a", "muon", "électron", "τ-lepton", "jet\twith\ttabs", "\"quoted\"", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢"];

/// One column of the test batch: name, Arrow field nullability, values.
pub type Column = (&'static str, bool, ArrayRef);

/// Every fundamental type, non-nullable.
pub fn fundamentals(n: usize, rng: &mut Rng) -> Vec<Column> {
    let mut v: Vec<Column> = vec![
        ("i8", false, arc(Int8Array::from_iter_values((0..n).map(|_| rng.next() as i8)))),
        ("u8", false, arc(UInt8Array::from_iter_values((0..n).map(|_| rng.next() as u8)))),
        ("i16", false, arc(Int16Array::from_iter_values((0..n).map(|_| rng.next() as i16)))),
        ("u16", false, arc(UInt16Array::from_iter_values((0..n).map(|_| rng.next() as u16)))),
        (
            "i32",
            false,
            arc(Int32Array::from_iter_values((0..n).map(|i| if i % 3 == 0 { -(i as i32) } else { rng.next() as i32 }))),
        ),
        ("u32", false, arc(UInt32Array::from_iter_values((0..n).map(|_| rng.below(1000) as u32)))),
        ("i64", false, arc(Int64Array::from_iter_values((0..n).map(|_| rng.next() as i64)))),
        ("u64", false, arc(UInt64Array::from_iter_values((0..n).map(|i| i as u64 * 1_000_003)))),
    ];
    v.push(("f32", false, arc(Float32Array::from_iter_values((0..n).map(|i| i as f32 * 0.25 - 7.5)))));
    v.push((
        "f64",
        false,
        arc(Float64Array::from_iter_values((0..n).map(|i| match i % 7 {
            0 => -0.0,
            1 => 1e300,
            2 => f64::from_bits(rng.next() >> 2),
            _ => i as f64 / 3.0,
        }))),
    ));
    v.push(("b", false, arc(BooleanArray::from_iter((0..n).map(|_| Some(rng.chance(40)))))));
    v
}

/// Strings, vectors (nested too), fixed-size arrays.
pub fn collections(n: usize, rng: &mut Rng) -> Vec<Column> {
    let mut s = StringBuilder::new();
    let mut ls = LargeStringBuilder::new();
    for _ in 0..n {
        s.append_value(WORDS[rng.below(8) as usize]);
        ls.append_value(WORDS[rng.below(8) as usize].repeat(rng.below(4) as usize));
    }
    let mut v = ListBuilder::new(Float32Builder::new());
    for _ in 0..n {
        for _ in 0..rng.below(5) {
            v.values().append_value(rng.below(100) as f32 / 8.0);
        }
        v.append(true);
    }
    let mut vv = LargeListBuilder::new(ListBuilder::new(Int32Builder::new()));
    for _ in 0..n {
        for _ in 0..rng.below(3) {
            for _ in 0..rng.below(4) {
                vv.values().values().append_value(rng.next() as i32);
            }
            vv.values().append(true);
        }
        vv.append(true);
    }
    let mut vs = ListBuilder::new(StringBuilder::new());
    for _ in 0..n {
        for _ in 0..rng.below(3) {
            vs.values().append_value(WORDS[rng.below(8) as usize]);
        }
        vs.append(true);
    }
    let arr = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        3,
        arc(Float32Array::from_iter_values((0..3 * n).map(|i| i as f32 * 1.5))),
        None,
    );
    let inner = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Int8, false)),
        2,
        arc(Int8Array::from_iter_values((0..4 * n).map(|_| rng.next() as i8))),
        None,
    );
    let arr2 =
        FixedSizeListArray::new(Arc::new(Field::new("item", inner.data_type().clone(), false)), 2, arc(inner), None);
    vec![
        ("s", false, arc(s.finish())),
        ("ls", false, arc(ls.finish())),
        ("v", false, arc(v.finish())),
        ("vv", false, arc(vv.finish())),
        ("vs", false, arc(vs.finish())),
        ("arr", false, arc(arr)),
        ("arr2", false, arc(arr2)),
    ]
}

/// Records (untyped), vectors of records, optionals, optional members.
pub fn records_and_optionals(n: usize, rng: &mut Rng) -> Vec<Column> {
    let a = Int32Array::from_iter_values((0..n).map(|i| i as i32 * 7));
    let mut b = StringBuilder::new();
    let mut c = ListBuilder::new(Float64Builder::new());
    for _ in 0..n {
        b.append_value(WORDS[rng.below(8) as usize]);
        for _ in 0..rng.below(3) {
            c.values().append_value(rng.below(1 << 20) as f64 * 0.5);
        }
        c.append(true);
    }
    let o = Int32Array::from_iter((0..n).map(|i| (i % 3 != 0).then_some(i as i32)));
    let c = c.finish();
    let st = StructArray::new(
        Fields::from(vec![
            Field::new("a", DataType::Int32, false),
            Field::new("b", DataType::Utf8, false),
            Field::new("c", c.data_type().clone(), false),
            Field::new("o", DataType::Int32, true),
        ]),
        vec![arc(a), arc(b.finish()), arc(c), arc(o)],
        None,
    );
    // Vector of records: an untyped collection of untyped records.
    let mut offsets = vec![0i32];
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for _ in 0..n {
        for _ in 0..rng.below(4) {
            xs.push(rng.below(1000) as f32);
            ys.push(rng.next() as i64);
        }
        offsets.push(xs.len() as i32);
    }
    let item_fields =
        Fields::from(vec![Field::new("x", DataType::Float32, false), Field::new("y", DataType::Int64, false)]);
    let items =
        StructArray::new(item_fields.clone(), vec![arc(Float32Array::from(xs)), arc(Int64Array::from(ys))], None);
    let vst = ListArray::new(
        Arc::new(Field::new("item", DataType::Struct(item_fields), true)),
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        arc(items),
        None,
    );
    let opt_f = Float64Array::from_iter((0..n).map(|i| (rng.chance(70)).then_some(i as f64 * 0.1)));
    let opt_s = StringArray::from_iter((0..n).map(|_| rng.chance(50).then(|| WORDS[rng.below(8) as usize])));
    let mut opt_v = ListBuilder::new(Int16Builder::new());
    for _ in 0..n {
        if rng.chance(30) {
            opt_v.append(false);
        } else {
            for _ in 0..rng.below(4) {
                opt_v.values().append_value(rng.next() as i16);
            }
            opt_v.append(true);
        }
    }
    let opt_b = BooleanArray::from_iter((0..n).map(|_| rng.chance(80).then(|| rng.chance(50))));
    vec![
        ("st", false, arc(st)),
        ("vst", false, arc(vst)),
        ("opt_f", true, arc(opt_f)),
        ("opt_s", true, arc(opt_s)),
        ("opt_v", true, arc(opt_v.finish())),
        ("opt_b", true, arc(opt_b)),
    ]
}

/// Dense and sparse unions (`std::variant`), with invalid (null) entries.
pub fn variants(n: usize, rng: &mut Rng) -> Vec<Column> {
    // Dense: i32 | string | f64; a null value is the invalid state.
    let mut type_ids = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n);
    let (mut ints, mut strs, mut dbls): (Vec<Option<i32>>, Vec<&str>, Vec<f64>) = (vec![], vec![], vec![]);
    for i in 0..n {
        match rng.below(4) {
            0 => {
                type_ids.push(0i8);
                offsets.push(ints.len() as i32);
                ints.push(Some(i as i32));
            }
            1 => {
                type_ids.push(1);
                offsets.push(strs.len() as i32);
                strs.push(WORDS[rng.below(8) as usize]);
            }
            2 => {
                type_ids.push(2);
                offsets.push(dbls.len() as i32);
                dbls.push(i as f64 * -0.5);
            }
            _ => {
                type_ids.push(0);
                offsets.push(ints.len() as i32);
                ints.push(None);
            }
        }
    }
    let fields = UnionFields::try_new(
        [0i8, 1, 2],
        [
            Field::new("i", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Float64, true),
        ],
    )
    .expect("union fields");
    let dense = UnionArray::try_new(
        fields,
        type_ids.into(),
        Some(offsets.into()),
        vec![arc(Int32Array::from(ints)), arc(StringArray::from(strs)), arc(Float64Array::from(dbls))],
    )
    .expect("dense union");
    // Sparse: i64 | bool, type ids 5 and 7.
    let sids: Vec<i8> = (0..n).map(|_| if rng.chance(50) { 5 } else { 7 }).collect();
    let sfields = UnionFields::try_new(
        [5i8, 7],
        [Field::new("l", DataType::Int64, true), Field::new("f", DataType::Boolean, true)],
    )
    .expect("sparse fields");
    let sparse = UnionArray::try_new(
        sfields,
        sids.into(),
        None,
        vec![
            arc(Int64Array::from_iter_values((0..n).map(|i| i as i64 - 5))),
            arc(BooleanArray::from_iter((0..n).map(|i| Some(i % 2 == 0)))),
        ],
    )
    .expect("sparse union");
    vec![("var", false, arc(dense)), ("var_sparse", false, arc(sparse))]
}

/// A record batch from columns.
pub fn batch(columns: Vec<Column>) -> RecordBatch {
    let fields: Vec<Field> =
        columns.iter().map(|(n, nullable, a)| Field::new(*n, a.data_type().clone(), *nullable)).collect();
    let arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, _, a)| a).collect();
    RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), arrays).expect("batch")
}

/// All of the above in one batch of `n` rows.
pub fn everything(n: usize, seed: u64) -> RecordBatch {
    let mut rng = Rng::new(seed);
    let mut cols = fundamentals(n, &mut rng);
    cols.extend(collections(n, &mut rng));
    cols.extend(records_and_optionals(n, &mut rng));
    cols.extend(variants(n, &mut rng));
    batch(cols)
}

fn float(x: f64) -> Value {
    match Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("nan".into()),
        None if x > 0.0 => Value::String("inf".into()),
        None => Value::String("-inf".into()),
    }
}

/// The value at row `i` of `arr` in the canonical dump form (docs/dump-format.md),
/// computed from the Arrow data alone.
pub fn value(arr: &dyn Array, i: usize) -> Value {
    if arr.is_null(i) {
        return Value::Null;
    }
    match arr.data_type() {
        DataType::Boolean => Value::Bool(arr.as_boolean().value(i)),
        DataType::Int8 => arr.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => arr.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => arr.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => arr.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => arr.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => arr.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => arr.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => arr.as_primitive::<UInt64Type>().value(i).into(),
        DataType::Float32 => float(f64::from(arr.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(arr.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Value::String(arr.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::String(arr.as_string::<i64>().value(i).to_string()),
        DataType::List(_) => {
            let v = arr.as_list::<i32>().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::LargeList(_) => {
            let v = arr.as_list::<i64>().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::FixedSizeList(_, _) => {
            let v = arr.as_fixed_size_list().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = arr.as_struct();
            let mut m = Map::new();
            for (f, c) in fields.iter().zip(s.columns()) {
                m.insert(f.name().clone(), value(c.as_ref(), i));
            }
            Value::Object(m)
        }
        DataType::Union(_, _) => {
            let u = arr.as_union();
            value(u.child(u.type_id(i)).as_ref(), u.value_offset(i))
        }
        other => Value::String(format!("<no canonical form for Arrow type {other}>")),
    }
}

/// Canonical JSON rows of a batch, from the Arrow data.
pub fn rows(b: &RecordBatch) -> Vec<Value> {
    (0..b.num_rows())
        .map(|i| {
            let mut m = Map::new();
            for (f, c) in b.schema().fields().iter().zip(b.columns()) {
                m.insert(f.name().clone(), value(c.as_ref(), i));
            }
            Value::Object(m)
        })
        .collect()
}

/// Our reader's dump of RNTuple `name` in `path` (what `rntuple dump` prints), parsed.
pub fn our_dump(path: &std::path::Path, name: &str) -> Vec<Value> {
    let f = RNTupleFile::open(path).expect("open");
    let t = f.rntuple(name).expect("rntuple");
    let fields = t.readable_fields();
    let batch = t.read_all().expect("read");
    rntuple::json::entry_lines(&fields, &batch).map(|l| serde_json::from_str(&l).expect("json line")).collect()
}

/// Writes `batches` and reads everything back with our reader.
pub fn round_trip(
    path: &std::path::Path,
    batches: &[RecordBatch],
    overrides: &HashMap<String, FieldOverride>,
    options: WriteOptions,
) -> RecordBatch {
    rntuple::write_batches(path, "t", batches.iter().cloned(), overrides, options).expect("write");
    let f = RNTupleFile::open(path).expect("open");
    f.rntuple("t").expect("rntuple").read_all().expect("read")
}

/// Asserts equal dumps, with the first differing row in the message.
pub fn assert_same_rows(expected: &[Value], actual: &[Value], what: &str) {
    assert_eq!(expected.len(), actual.len(), "{what}: number of entries");
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        assert_eq!(e, a, "{what}: entry {i} differs");
    }
}

/// Nulls in a buffer from an iterator of validity bits.
pub fn nulls(bits: impl IntoIterator<Item = bool>) -> NullBuffer {
    NullBuffer::from_iter(bits)
}

/// Sums of `Int32Type` values, for sanity checks.
pub fn sum_i32(a: &PrimitiveArray<Int32Type>) -> i64 {
    a.values().iter().map(|&x| i64::from(x)).sum()
}

/// The page extents (offset, stored length) of the columns of `fields` in
/// the clusters `clusters`, as the page lists describe them (first
/// representation).
pub fn page_extents(
    nt: &rntuple::RNTuple,
    fields: &[&rntuple::FieldNode],
    clusters: impl IntoIterator<Item = usize>,
) -> std::collections::BTreeSet<(u64, u64)> {
    fn columns(f: &rntuple::FieldNode, out: &mut Vec<u32>) {
        if let Some(rep) = f.representations.first() {
            out.extend(rep);
        }
        for c in &f.children {
            columns(c, out);
        }
    }
    let mut cols = Vec::new();
    for f in fields {
        columns(f, &mut cols);
    }
    let mut out = std::collections::BTreeSet::new();
    for cluster in clusters {
        let c = &nt.descriptor().clusters[cluster];
        for r in cols.iter().filter_map(|&col| c.columns.get(col as usize)) {
            out.extend(r.pages.iter().map(|p| (p.locator.offset, p.locator.size + if p.has_checksum { 8 } else { 0 })));
        }
    }
    out
}

/// `tests/reference/root_dump.py`: ROOT's reader printing the canonical dump.
pub fn dumper() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/root_dump.py"))
}

/// One dump job: the file, the RNTuple, what we expect (None: only compare
/// with our reader).
pub struct Job {
    pub file: PathBuf,
    pub ntuple: String,
    pub written: Option<Vec<Value>>,
}

/// Runs ROOT on all jobs in one process; returns per job the parsed entries
/// or the error / skipped fields ROOT reported.
pub fn root_dumps(py: &std::path::Path, jobs: &[Job]) -> Vec<Result<Vec<Value>, String>> {
    // One directory per first file: tests of one binary run in parallel.
    let stem = jobs.first().and_then(|j| j.file.file_stem()).map(|s| s.to_string_lossy().into_owned());
    let dir = scratch(&format!("root-dumps-{}", stem.unwrap_or_default()));
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
    let out =
        std::process::Command::new(py).arg(dumper()).arg("--batch").arg(&jobs_path).output().expect("run root_dump.py");
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
