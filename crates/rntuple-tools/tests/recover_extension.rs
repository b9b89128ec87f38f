//! `recover` after a parallel writer with a late schema extension is killed
//! (SIGKILL through `RNTUPLE_CRASH_AT`, as `recover.rs`): two fill contexts
//! commit clusters while one of them adds fields after its third cluster and
//! from then on fills them; the other keeps to the old schema (its entries
//! get the new fields' zero values). Each recovered file must hold every
//! committed entry with its values, the added fields (in the footer's schema
//! extension) whenever a cluster was committed after the extension, with
//! their values or zeros as written, and ROOT 6.40 must read it as we do.
//!
//! The writer is this test binary, run again with `RNTUPLE_CRASH_CHILD` set.
//! `RNTUPLE_KILL_POINTS` sets the number of points (default 16).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod kill_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use kill_support::{committed, log, next_random, run_child};
use rntuple::container::write::WriterOptions;
use rntuple::write::{ParallelWriter, SharedFileWriter, WriteOptions};
use rntuple::RNTupleFile;
use rntuple_tools::recover::{recover, FileState, RecoverOptions};

const BATCHES: u64 = 8;
const BATCH: u64 = 300;
/// Context 0 adds the fields after this many clusters, and fills them after.
const EXTEND_AFTER: u64 = 3;
/// Entry `i` of context `ctx` has x = ctx * STRIDE + i.
const STRIDE: i64 = 1_000_000_000;

fn old_fields() -> Vec<Field> {
    vec![Field::new("x", DataType::Int64, false), Field::new("s", DataType::Utf8, false)]
}

fn added() -> Schema {
    let item = Arc::new(Field::new("item", DataType::Int64, false));
    Schema::new(vec![Field::new("e", DataType::Int32, false), Field::new("l", DataType::List(item), false)])
}

/// Entries `from..from + n` of context `ctx`: `x`, `s` = "entry-<x>", and
/// with the added fields `e` = 3 i, `l` = `i % 3` copies of x.
fn batch(ctx: i64, from: u64, n: u64, with_added: bool) -> RecordBatch {
    let x: Vec<i64> = (from..from + n).map(|i| ctx * STRIDE + i as i64).collect();
    let s = StringArray::from_iter_values(x.iter().map(|e| format!("entry-{e}")));
    let mut fields = old_fields();
    let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(x.clone())), Arc::new(s)];
    if with_added {
        let mut l = ListBuilder::new(Int64Builder::new()).with_field(Field::new("item", DataType::Int64, false));
        for &e in &x {
            for _ in 0..(e % STRIDE) % 3 {
                l.values().append_value(e);
            }
            l.append(true);
        }
        fields.extend(added().fields().iter().map(|f| f.as_ref().clone()));
        columns.push(Arc::new(Int32Array::from_iter_values((from..from + n).map(|i| 3 * i as i32))));
        columns.push(Arc::new(l.finish()));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn options() -> WriteOptions {
    WriteOptions { approx_zipped_cluster_size: 6_000, max_unzipped_page_size: 4096, ..Default::default() }
}

/// The writer run in a child process: `RNTUPLE_CRASH_CHILD=FILE:LOG`.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var("RNTUPLE_CRASH_CHILD") else { return };
    let (file, log_path) = spec.split_once(':').unwrap();
    let log_path = Path::new(log_path);
    let shared = SharedFileWriter::create(file, WriterOptions::default()).unwrap();
    let schema = Schema::new(old_fields());
    let pw = ParallelWriter::new(&shared, "Events", &schema, &HashMap::new(), options()).unwrap();
    std::thread::scope(|s| {
        for ctx in 0..2i64 {
            let mut c = pw.create_fill_context().unwrap();
            let pw = &pw;
            s.spawn(move || {
                for b in 0..BATCHES {
                    let with_added = ctx == 0 && b >= EXTEND_AFTER;
                    c.write_batch(&batch(ctx, b * BATCH, BATCH, with_added)).unwrap();
                    c.flush_cluster().unwrap();
                    log(log_path, ctx, (b + 1) * BATCH);
                    if ctx == 0 && b + 1 == EXTEND_AFTER {
                        pw.add_fields(&added(), &HashMap::new(), &[]).unwrap();
                    }
                }
                c.close().unwrap();
            });
        }
    });
    pw.close().unwrap();
    shared.finish().unwrap();
}

/// Checks that `path` holds, per context, a prefix of its input in order, at
/// least the committed entries, and the added fields (if there) with their
/// values where context 0 filled them and zeros elsewhere; returns the
/// entries and whether the added fields are there.
fn check_values(path: &Path, committed: &HashMap<i64, u64>, what: &str) -> (u64, bool) {
    let f = RNTupleFile::open(path).unwrap_or_else(|e| panic!("{what}: {e}"));
    let nt = f.rntuple("Events").unwrap();
    let n = nt.num_entries();
    let read = nt.read(None, 0, n).unwrap();
    let x = read.column(0).as_primitive::<Int64Type>();
    let s = read.column(1);
    let string = |row: usize| match s.as_string_opt::<i32>() {
        Some(a) => a.value(row).to_string(),
        None => s.as_string::<i64>().value(row).to_string(),
    };
    let extended = read.num_columns() == 4;
    let d = nt.descriptor();
    assert_eq!(d.num_header_fields < d.fields.len(), extended, "{what}: added fields in the schema extension");
    let mut next: HashMap<i64, u64> = HashMap::new();
    for (row, &v) in x.values().iter().enumerate() {
        let (ctx, i) = (v / STRIDE, (v % STRIDE) as u64);
        let want = next.entry(ctx).or_insert(0);
        assert_eq!(i, *want, "{what}: entry {row} of context {ctx} out of order");
        *want += 1;
        assert_eq!(string(row), format!("entry-{v}"), "{what}: entry {row}");
        if !extended {
            continue;
        }
        let filled = ctx == 0 && i >= EXTEND_AFTER * BATCH;
        let e = read.column(2).as_primitive::<Int32Type>().value(row);
        assert_eq!(e, if filled { 3 * i as i32 } else { 0 }, "{what}: e of entry {row} (context {ctx}, {i})");
        let l = read.column(3);
        let l = match l.as_list_opt::<i32>() {
            Some(a) => a.value(row),
            None => l.as_list::<i64>().value(row),
        };
        let want_l = if filled { vec![v; (i % 3) as usize] } else { Vec::new() };
        assert_eq!(l.as_primitive::<Int64Type>().values().to_vec(), want_l, "{what}: l of entry {row}");
    }
    for (ctx, &n_committed) in committed {
        let kept = next.get(ctx).copied().unwrap_or(0);
        assert!(kept >= n_committed, "{what}: context {ctx} kept {kept} entries, {n_committed} were committed");
    }
    (n, extended)
}

fn scratch(name: &str) -> PathBuf {
    kill_support::scratch("rntuple-recover-extension", name)
}

#[derive(Default, Debug)]
struct Tally {
    killed: usize,
    recovered: usize,
    recovered_extended: usize,
    nothing_committed: usize,
    completed: usize,
}

/// Kills the writer at `point`; returns the recovered file if one was written.
fn kill_at(point: &str, k: usize, tally: &mut Tally) -> Option<PathBuf> {
    let file = scratch(&format!("{k}.root"));
    let log_path = scratch(&format!("{k}.log"));
    let out = scratch(&format!("{k}-recovered.root"));
    let finished = run_child(&format!("{}:{}", file.display(), log_path.display()), point);
    let what = format!("killed at {point}");
    let committed = committed(&log_path);
    if finished || RNTupleFile::open(&file).is_ok() {
        // Past the last event, or after the file header went out: complete.
        let (_, extended) = check_values(&file, &committed, &what);
        assert!(extended, "{what}: a complete file has the added fields");
        let r = recover(&file, Some(&out), RecoverOptions::default()).unwrap();
        assert_eq!(r.state, FileState::Complete);
        tally.completed += 1;
        return None;
    }
    tally.killed += 1;
    match recover(&file, Some(&out), RecoverOptions::default()) {
        Ok(r) => {
            let (n, extended) = check_values(&out, &committed, &what);
            assert_eq!(r.entries(), n, "{what}: the report's entries");
            tally.recovered += 1;
            tally.recovered_extended += usize::from(extended);
            return extended.then_some(out);
        }
        Err(e) => {
            assert!(committed.values().all(|&n| n == 0), "{what}: committed entries lost: {e}");
            tally.nothing_committed += 1;
        }
    }
    None
}

/// The Python of the venv with ROOT, if there is one.
fn root_python() -> Option<PathBuf> {
    let cache = std::env::var_os("RNTUPLE_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/rntuple-ci")))?;
    Some(cache.join("venv/bin/python")).filter(|p| p.exists())
}

/// ROOT's dump (`tests/reference/root_dump.py`) of a recovered file equals ours.
fn root_reads_as_we_do(path: &Path) {
    let Some(py) = root_python() else {
        eprintln!("no venv with ROOT ($RNTUPLE_CACHE/venv): ROOT check skipped");
        return;
    };
    let dumper = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/root_dump.py");
    let out = std::process::Command::new(py).arg(dumper).arg(path).arg("Events").output().unwrap();
    assert!(out.status.success(), "ROOT on {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
    let f = RNTupleFile::open(path).unwrap();
    let nt = f.rntuple("Events").unwrap();
    let ours: Vec<String> = rntuple::json::entry_lines(&nt.readable_fields(), &nt.read_all().unwrap()).collect();
    let root = String::from_utf8(out.stdout).unwrap();
    let root: Vec<&str> = root.lines().collect();
    assert_eq!(root.len(), ours.len(), "{}: entries", path.display());
    for (i, (a, b)) in ours.iter().zip(root).enumerate() {
        assert_eq!(a, b, "{}: entry {i}, ours against ROOT", path.display());
    }
    assert!(ours.iter().all(|l| l.contains("\"e\":")), "{}: the added fields", path.display());
}

#[test]
fn a_parallel_writer_killed_after_a_late_extension_is_recovered_with_it() {
    if std::env::var("RNTUPLE_CRASH_CHILD").is_ok() {
        return;
    }
    let points: usize = std::env::var("RNTUPLE_KILL_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    // Events of each kind in one run (about): 16 fills and clusters, each
    // cluster's pages and journal record, the footer, the file header.
    let kinds = [("commit", 16), ("journal", 16), ("fill", 16), ("page", 40), ("any", 300)];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut tally = Tally::default();
    let mut extended = None;
    for k in 0..points {
        let (kind, max) = kinds[k % kinds.len()];
        // Past the extension mostly: the later half of each kind's events.
        let nth = max / 2 + 1 + next_random(&mut state) % (max / 2);
        if let Some(out) = kill_at(&format!("{kind}:{nth}"), k, &mut tally) {
            extended = Some(out);
        }
    }
    eprintln!("kill points: {points}, {tally:?}");
    assert!(tally.recovered_extended > 0 && tally.killed > points / 2, "{tally:?}");
    root_reads_as_we_do(&extended.expect("a recovered file with the added fields"));
}
