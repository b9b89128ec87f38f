//! The parallel writer under stress: many fill contexts (2–16) on however
//! few cores the machine has, random (seeded) batch and cluster sizes,
//! explicit flushes at random points, contexts created while others are
//! committing, contexts dropped without `close`, and a memory budget per
//! context. Every run must finish within a deadline (a watchdog fails the
//! test instead of letting a deadlock hang it), hold every entry exactly once
//! with its values, respect the budget, and be read by ROOT 6.40 with every
//! entry once (when the venv with ROOT exists; otherwise that part is
//! skipped with a message).
//!
//! With late schema extension (`late_extension_while_others_fill`): a thread
//! adds fields twice, at random (seeded) points, while the contexts fill;
//! each context writes batches of a random schema among those added so far
//! (adopting the newest when handed it, or at a commit), and every entry must
//! hold the added fields' values when it was written with them, their zero
//! values when not (checked by our reader and by ROOT).
//!
//! A failing seed is reproduced with `STRESS_SEED=<seed> cargo test -p rntuple
//! --test stress_parallel`; `STRESS_ROUNDS=<n>` runs more seeds.

// The watchdog fails a test by panicking, outside a `#[test]` function.
#![allow(clippy::panic)]

mod write_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use arrow_array::builder::{Float32Builder, Int32Builder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int32Type, Int64Type, UInt8Type};
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray, UInt8Array};
use arrow_schema::{DataType, Field, Schema};
use rntuple::write::{ParallelWriter, SharedFileWriter, WriteOptions};
use rntuple::RNTupleFile;
use rntuple_container::write::WriterOptions;
use write_support::{python, scratch, Rng};

/// A run that takes longer than this is taken for a deadlock.
const DEADLINE: Duration = Duration::from_secs(90);

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("ctx", DataType::UInt8, false),
        Field::new("v", DataType::List(Arc::new(Field::new("item", DataType::Float32, true))), false),
        Field::new("s", DataType::Utf8, false),
    ]))
}

/// Entry `id` filled by context `ctx`: `v` holds `id % 5` copies of `id`
/// (as f32, exact below 2^24), `s` is `id` in decimal, `id % 3` times.
fn batch(ids: std::ops::Range<i64>, ctx: u8) -> RecordBatch {
    let mut v = ListBuilder::new(Float32Builder::new());
    let mut s = StringBuilder::new();
    for id in ids.clone() {
        for _ in 0..id % 5 {
            v.values().append_value(id as f32);
        }
        v.append(true);
        s.append_value(id.to_string().repeat((id % 3) as usize));
    }
    let n = ids.end - ids.start;
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(ids)),
            Arc::new(UInt8Array::from(vec![ctx; n as usize])),
            Arc::new(v.finish()),
            Arc::new(s.finish()),
        ],
    )
    .expect("batch")
}

/// The fields added by late extension `k` (0 or 1).
fn extension(k: usize) -> Schema {
    match k {
        0 => Schema::new(vec![Field::new("x", DataType::Int64, false), Field::new("w", DataType::Utf8, true)]),
        _ => Schema::new(vec![Field::new(
            "y",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, false))),
            false,
        )]),
    }
}

/// A batch of the schema after `version` extensions: [`batch`] and the
/// added fields, `x` = 7 id, `w` = "w<id>" for even ids (else empty), `y` =
/// `id % 4` copies of id.
fn batch_of(ids: std::ops::Range<i64>, ctx: u8, version: usize) -> RecordBatch {
    let b = batch(ids.clone(), ctx);
    if version == 0 {
        return b;
    }
    let mut fields: Vec<Field> = b.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns = b.columns().to_vec();
    let w = StringArray::from_iter(ids.clone().map(|id| (id % 2 == 0).then(|| format!("w{id}"))));
    let mut extra: Vec<ArrayRef> =
        vec![Arc::new(Int64Array::from_iter_values(ids.clone().map(|id| 7 * id))), Arc::new(w)];
    if version > 1 {
        let mut y = ListBuilder::new(Int32Builder::new()).with_field(Field::new("item", DataType::Int32, false));
        for id in ids {
            for _ in 0..id % 4 {
                y.values().append_value(id as i32);
            }
            y.append(true);
        }
        extra.push(Arc::new(y.finish()));
    }
    for k in 0..version {
        fields.extend(extension(k).fields().iter().map(|f| f.as_ref().clone()));
    }
    columns.extend(extra);
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("extended batch")
}

/// One stress run's shape, drawn from a seed.
#[derive(Debug, Clone)]
struct Plan {
    seed: u64,
    contexts: usize,
    /// Contexts created only after the first clusters are committed.
    late_contexts: usize,
    entries: i64,
    options: WriteOptions,
    /// Where (in entries handed out so far) the fields of each late
    /// extension are added; empty: no extension.
    extend_at: Vec<u64>,
}

impl Plan {
    fn draw(seed: u64, contexts: usize) -> Plan {
        let mut rng = Rng::new(seed);
        let options = WriteOptions {
            approx_zipped_cluster_size: 1_000 + rng.below(60_000),
            compression: [0, 505, 101, 404][rng.below(4) as usize],
            compression_threads: 1 + rng.below(3) as usize,
            initial_unzipped_page_size: 64 << rng.below(3),
            max_unzipped_page_size: 4096 << rng.below(4),
            memory_budget: (256 << 10) << rng.below(3),
            ..Default::default()
        };
        let late_contexts = rng.below(contexts as u64 / 2 + 1) as usize;
        Plan { seed, contexts, late_contexts, entries: 60_000, options, extend_at: Vec::new() }
    }

    /// A plan with two late extensions at random points (drawn after the
    /// rest, so that the other choices are those of [`Plan::draw`]).
    fn draw_extending(seed: u64, contexts: usize) -> Plan {
        let mut plan = Plan::draw(seed, contexts);
        let mut rng = Rng::new(seed ^ 0xE87E_4D00);
        let mut at = vec![rng.below(plan.entries as u64 / 2), rng.below(plan.entries as u64)];
        at.sort_unstable();
        plan.extend_at = at;
        plan
    }
}

/// What one run produced.
struct Outcome {
    path: PathBuf,
    high_water: Vec<u64>,
    entries_per_context: Vec<u64>,
    /// Per id: the number of extensions whose fields its batch carried.
    version: Vec<u8>,
}

/// Fills `plan.entries` entries through `plan.contexts` contexts: each takes
/// the next run of ids (random length) from a shared counter, writes it as a
/// batch and, at random, commits its cluster; a third of the contexts end by
/// being dropped instead of closed.
fn run(plan: &Plan, path: &Path) -> Outcome {
    let file = SharedFileWriter::create(path, WriterOptions::default()).expect("create");
    let writer =
        ParallelWriter::new(&file, "Events", &schema(), &HashMap::new(), plan.options.clone()).expect("writer");
    let next = AtomicU64::new(0);
    let committed_once = AtomicU64::new(0);
    let total = plan.entries as u64;
    // Extensions done so far, and per id the extensions its batch carried.
    let extended = AtomicUsize::new(0);
    let version = Mutex::new(vec![0u8; total as usize]);
    let results: Vec<(u64, u64)> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        if !plan.extend_at.is_empty() {
            let (writer, next, extended) = (&writer, &next, &extended);
            s.spawn(move || {
                for (k, &at) in plan.extend_at.iter().enumerate() {
                    while next.load(Ordering::Acquire) < at {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    writer.add_fields(&extension(k), &HashMap::new(), &[]).expect("add_fields");
                    extended.store(k + 1, Ordering::Release);
                }
            });
        }
        for k in 0..plan.contexts {
            let (writer, next, committed_once, extended, version) =
                (&writer, &next, &committed_once, &extended, &version);
            let mut rng = Rng::new(plan.seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9));
            let late = k >= plan.contexts - plan.late_contexts;
            handles.push(s.spawn(move || {
                if late {
                    // Created while others fill and commit.
                    while committed_once.load(Ordering::Acquire) == 0 && next.load(Ordering::Acquire) < total {
                        std::thread::yield_now();
                    }
                }
                let mut ctx = writer.create_fill_context().expect("fill context");
                loop {
                    let most = if rng.chance(10) { 3_000 } else { 300 };
                    let want = 1 + rng.below(most);
                    let start = next.fetch_add(want, Ordering::AcqRel);
                    if start >= total {
                        break;
                    }
                    let end = (start + want).min(total);
                    // A schema among those added so far, mostly the newest.
                    let known = extended.load(Ordering::Acquire);
                    let v = if rng.chance(50) { known } else { rng.below(known as u64 + 1) as usize };
                    ctx.write_batch(&batch_of(start as i64..end as i64, k as u8, v)).expect("write_batch");
                    if v > 0 {
                        let mut version = version.lock().expect("version");
                        version[start as usize..end as usize].iter_mut().for_each(|x| *x = v as u8);
                    }
                    if rng.chance(8) {
                        ctx.flush_cluster().expect("flush_cluster");
                        committed_once.store(1, Ordering::Release);
                    }
                }
                let (n, high) = (ctx.num_entries(), ctx.memory_use().high_water);
                if k % 3 == 2 {
                    drop(ctx); // commits its last cluster
                } else {
                    ctx.close().expect("close context");
                }
                (n, high)
            }));
        }
        handles.into_iter().map(|h| h.join().expect("context thread panicked")).collect()
    });
    assert_eq!(writer.num_entries().expect("entries"), total, "{plan:?}");
    writer.close().expect("close writer");
    file.finish().expect("finish file");
    Outcome {
        path: path.to_path_buf(),
        high_water: results.iter().map(|r| r.1).collect(),
        entries_per_context: results.iter().map(|r| r.0).collect(),
        version: version.into_inner().expect("version"),
    }
}

/// Runs `f` on a thread and fails, naming `what`, if it takes longer than
/// `deadline` (the thread is left behind; the test process ends with it).
fn within<T: Send + 'static>(deadline: Duration, what: String, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let out = f();
        let _ = tx.send(());
        out
    });
    match rx.recv_timeout(deadline) {
        Ok(()) => worker.join().expect("worker"),
        // The sender went away without sending: `f` panicked; pass that on.
        Err(mpsc::RecvTimeoutError::Disconnected) => worker.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} did not finish within {deadline:?}: deadlock or livelock")
        }
    }
}

fn run_with_watchdog(plan: &Plan) -> Outcome {
    let path = scratch(&format!("stress-{}-{}.root", plan.contexts, plan.seed));
    let p = plan.clone();
    within(DEADLINE, format!("stress run {plan:?}"), move || run(&p, &path))
}

/// Our reader: every id exactly once, values as written, each cluster from
/// one context with increasing ids.
fn check_ours(plan: &Plan, out: &Outcome) {
    let f = RNTupleFile::open(&out.path).expect("open");
    let t = f.rntuple("Events").expect("rntuple");
    assert_eq!(t.num_entries(), plan.entries as u64);
    let b = t.read_all().expect("read");
    let id = b.column(0).as_primitive::<Int64Type>();
    let ctx = b.column(1).as_primitive::<UInt8Type>();
    let v = b.column(2).as_list::<i64>();
    let s = b.column(3);
    let mut seen = vec![false; plan.entries as usize];
    for row in 0..b.num_rows() {
        let x = id.value(row);
        assert!((0..plan.entries).contains(&x), "{plan:?}: id {x} out of range");
        assert!(!std::mem::replace(&mut seen[x as usize], true), "{plan:?}: entry {x} twice");
        let items = v.value(row);
        let items = items.as_primitive::<Float32Type>();
        assert_eq!(items.len() as i64, x % 5, "{plan:?}: row {row}");
        assert!(items.values().iter().all(|&y| y == x as f32), "{plan:?}: row {row}");
        let text = match s.data_type() {
            DataType::LargeUtf8 => s.as_string::<i64>().value(row).to_string(),
            _ => s.as_string::<i32>().value(row).to_string(),
        };
        assert_eq!(text, x.to_string().repeat((x % 3) as usize), "{plan:?}: row {row}");
    }
    assert!(seen.iter().all(|&s| s), "{plan:?}: entries missing");
    if !plan.extend_at.is_empty() {
        check_extension(plan, out, &b);
    }
    let clusters = &t.descriptor().clusters;
    for c in clusters {
        let r = c.first_entry as usize..(c.first_entry + c.num_entries) as usize;
        let owner = ctx.value(r.start);
        assert!(ctx.values()[r.clone()].iter().all(|&k| k == owner), "{plan:?}: cluster {} mixes contexts", c.id);
        assert!(id.values()[r].windows(2).all(|w| w[0] < w[1]), "{plan:?}: cluster {} out of order", c.id);
    }
    // Each context's entries, as it counted them, are in the file.
    for (k, &n) in out.entries_per_context.iter().enumerate() {
        let in_file = ctx.values().iter().filter(|&&c| usize::from(c) == k).count() as u64;
        assert_eq!(in_file, n, "{plan:?}: context {k}");
    }
    for (k, &high) in out.high_water.iter().enumerate() {
        assert!(high <= plan.options.memory_budget, "{plan:?}: context {k} held {high} bytes");
    }
    assert!(clusters.len() >= plan.contexts.min(out.entries_per_context.iter().filter(|&&n| n > 0).count()));
}

/// The fields of the late extensions: their values for entries written with
/// them, zero values (0, empty optional, empty collection) for the others.
fn check_extension(plan: &Plan, out: &Outcome, b: &RecordBatch) {
    let column = |name: &str| b.column(b.schema().index_of(name).unwrap_or_else(|_| panic!("{plan:?}: no '{name}'")));
    let id = b.column(0).as_primitive::<Int64Type>();
    let x = column("x").as_primitive::<Int64Type>();
    let (w, y) = (column("w"), column("y"));
    let text = |row: usize| match w.data_type() {
        _ if w.is_null(row) => None,
        DataType::LargeUtf8 => Some(w.as_string::<i64>().value(row).to_string()),
        _ => Some(w.as_string::<i32>().value(row).to_string()),
    };
    let items = |row: usize| match y.data_type() {
        DataType::LargeList(_) => y.as_list::<i64>().value(row),
        _ => y.as_list::<i32>().value(row),
    };
    let mut with = [0u64; 3];
    for row in 0..b.num_rows() {
        let e = id.value(row);
        let version = out.version[e as usize];
        with[usize::from(version)] += 1;
        assert_eq!(x.value(row), if version >= 1 { 7 * e } else { 0 }, "{plan:?}: x of id {e} (version {version})");
        let want_w = (version >= 1 && e % 2 == 0).then(|| format!("w{e}"));
        assert_eq!(text(row), want_w, "{plan:?}: w of id {e} (version {version})");
        let want_y: Vec<i32> = if version >= 2 { vec![e as i32; (e % 4) as usize] } else { Vec::new() };
        assert_eq!(items(row).as_primitive::<Int32Type>().values().to_vec(), want_y, "{plan:?}: y of id {e}");
    }
    eprintln!("{plan:?}: entries written with 0, 1, 2 extensions: {with:?}");
}

/// ROOT 6.40 reads every file: entry count, every id once, the collection
/// sizes and the strings' lengths summed (checked against what was written);
/// with late extensions, every value of the added fields its value or zero,
/// and their sums those of the entries written with them.
fn check_root(files: &[(Plan, Outcome)]) {
    let Some(py) = python() else {
        eprintln!("no venv with ROOT ($RNTUPLE_CACHE/venv): ROOT check skipped");
        return;
    };
    let script = r#"
import sys
import ROOT
ROOT.gROOT.SetBatch(True)
ROOT.gInterpreter.Declare("""
std::string stress_check(const char *path) {
   auto r = ROOT::RNTupleReader::Open("Events", path);
   auto id = r->GetView<std::int64_t>("id");
   auto v = r->GetView<std::vector<float>>("v");
   auto s = r->GetView<std::string>("s");
   std::uint64_t n = r->GetNEntries(), twice = 0, bad = 0, items = 0, chars = 0;
   std::vector<char> seen(n, 0);
   for (auto i : r->GetEntryRange()) {
      auto x = id(i);
      if (x < 0 || std::uint64_t(x) >= n || seen[x]++) { ++twice; continue; }
      for (float y : v(i)) if (y != float(x)) ++bad;
      items += v(i).size();
      chars += s(i).size();
   }
   std::int64_t xsum = 0;
   std::uint64_t wchars = 0, yitems = 0;
   if (r->GetDescriptor().FindFieldId("y") != ROOT::kInvalidDescriptorId) {
      auto xv = r->GetView<std::int64_t>("x");
      auto wv = r->GetView<std::optional<std::string>>("w");
      auto yv = r->GetView<std::vector<std::int32_t>>("y");
      for (auto i : r->GetEntryRange()) {
         auto e = id(i);
         if (xv(i) != 0 && xv(i) != 7 * e) ++bad;
         xsum += xv(i);
         const auto &w = wv(i);
         if (w && *w != "w" + std::to_string(e)) ++bad;
         if (w) wchars += w->size();
         for (auto y : yv(i)) if (y != e) ++bad;
         yitems += yv(i).size();
      }
   }
   std::uint64_t missing = 0;
   for (char c : seen) missing += c == 0;
   return std::to_string(n) + " " + std::to_string(twice) + " " + std::to_string(missing) + " " +
          std::to_string(bad) + " " + std::to_string(items) + " " + std::to_string(chars) + " " +
          std::to_string(xsum) + " " + std::to_string(wchars) + " " + std::to_string(yitems);
}
""")
for path in sys.argv[1:]:
    print(str(ROOT.stress_check(path)))
"#;
    let out = Command::new(py).arg("-c").arg(script).args(files.iter().map(|f| &f.1.path)).output().expect("run ROOT");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ROOT failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), files.len(), "{stdout}");
    for ((plan, out), line) in files.iter().zip(lines) {
        let n = plan.entries;
        let items: i64 = (0..n).map(|x| x % 5).sum();
        let chars: i64 = (0..n).map(|x| x.to_string().len() as i64 * (x % 3)).sum();
        // The added fields: what the entries written with them hold.
        let version = |e: i64| out.version[e as usize];
        let xsum: i64 = (0..n).filter(|&e| version(e) >= 1).map(|e| 7 * e).sum();
        let wchars: usize = (0..n).filter(|&e| version(e) >= 1 && e % 2 == 0).map(|e| format!("w{e}").len()).sum();
        let yitems: i64 = (0..n).filter(|&e| version(e) >= 2).map(|e| e % 4).sum();
        let want = format!("{n} 0 0 0 {items} {chars} {xsum} {wchars} {yitems}");
        assert_eq!(line, want, "ROOT on {} ({plan:?})", out.path.display());
    }
}

fn seeds() -> Vec<u64> {
    if let Some(s) = std::env::var("STRESS_SEED").ok().and_then(|s| s.parse().ok()) {
        return vec![s];
    }
    let rounds = std::env::var("STRESS_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(1u64);
    (0..rounds).map(|r| 0x5EED_0000 + r).collect()
}

/// Runs the plans `draw` makes for each seed and 2, 5 and 16 contexts, and
/// checks them with our reader and with ROOT.
fn stress(draw: fn(u64, usize) -> Plan, salt: u64) {
    let mut written = Vec::new();
    for seed in seeds() {
        for contexts in [2, 5, 16] {
            let plan = draw(seed.wrapping_mul(salt).wrapping_add(contexts as u64), contexts);
            let out = run_with_watchdog(&plan);
            check_ours(&plan, &out);
            written.push((plan, out));
        }
    }
    check_root(&written);
}

#[test]
fn many_fill_contexts_random_clusters_every_entry_once() {
    stress(Plan::draw, 31);
}

/// As above, and a thread adds fields twice while the contexts fill.
#[test]
fn late_extension_while_others_fill() {
    stress(Plan::draw_extending, 37);
}

/// The watchdog fails a run that blocks instead of waiting for it.
#[test]
#[should_panic(expected = "did not finish within")]
fn watchdog_fails_a_blocked_run() {
    within(Duration::from_millis(100), "a blocked run".into(), || std::thread::sleep(Duration::from_secs(3600)));
}
