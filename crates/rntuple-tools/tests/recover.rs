//! Crash-safe writing and `recover` (docs/recover.md): a writer process is
//! killed (SIGKILL, through the `RNTUPLE_CRASH_AT` hook) at points of every
//! kind — fill, compression, page write, cluster commit, journal record,
//! footer, file header — for the single-threaded and the parallel writer;
//! each time the reader refuses the file and `recover` restores exactly the
//! committed entries, with the values written, or the file is complete.
//!
//! The writer is this test binary itself, run again with
//! `RNTUPLE_CRASH_CHILD` set (test `crash_child`). `RNTUPLE_KILL_POINTS`
//! sets the number of points (default 24; bench/kill_points.py runs more).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod kill_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int32Builder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, Float64Array, Int64Array, ListArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use kill_support::{committed, log, next_random, run_child};
use rntuple::container::write::journal::journal_path;
use rntuple::container::write::WriterOptions;
use rntuple::write::{ParallelWriter, RNTupleWriter, SharedFileWriter, WriteOptions};
use rntuple::RNTupleFile;
use rntuple_tools::recover::{recover, FileState, RecoverOptions};

const BATCHES: u64 = 12;
const BATCH: u64 = 400;
/// Entry `i` of context `ctx` has x = ctx * STRIDE + i.
const STRIDE: i64 = 1_000_000_000;

fn schema() -> Arc<Schema> {
    let item = Arc::new(Field::new("item", DataType::Int32, false));
    Arc::new(Schema::new(vec![
        Field::new("x", DataType::Int64, false),
        Field::new("y", DataType::Float64, false),
        Field::new("v", DataType::List(item), false),
        Field::new("s", DataType::Utf8, false),
    ]))
}

/// The deterministic input: entries `from..from + n` of context `ctx`.
fn batch(ctx: i64, from: u64, n: u64) -> RecordBatch {
    let x: Vec<i64> = (from..from + n).map(|i| ctx * STRIDE + i as i64).collect();
    let y: Vec<f64> = x.iter().map(|&v| v as f64 * 0.5).collect();
    let mut v = ListBuilder::new(Int32Builder::new()).with_field(Field::new("item", DataType::Int32, false));
    for &e in &x {
        for k in 0..(e % 5) {
            v.values().append_value((e % 1000) as i32 + k as i32);
        }
        v.append(true);
    }
    let s: Vec<String> = x.iter().map(|e| format!("entry-{e}")).collect();
    RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from(x)),
            Arc::new(Float64Array::from(y)),
            Arc::new(v.finish()),
            Arc::new(StringArray::from(s)),
        ],
    )
    .unwrap()
}

fn options() -> WriteOptions {
    // Small clusters: commits inside write_batch too, not only explicit ones.
    WriteOptions { approx_zipped_cluster_size: 6_000, max_unzipped_page_size: 4096, ..Default::default() }
}

/// The writer run in a child process: `RNTUPLE_CRASH_CHILD=single|parallel:FILE:LOG`.
#[test]
fn crash_child() {
    let Ok(spec) = std::env::var("RNTUPLE_CRASH_CHILD") else { return };
    let mut parts = spec.splitn(3, ':');
    let (mode, file, log_path) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let log_path = Path::new(log_path);
    let shared = SharedFileWriter::create(file, WriterOptions::default()).unwrap();
    if mode == "single" {
        let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
        for b in 0..BATCHES {
            w.write_batch(&batch(0, b * BATCH, BATCH)).unwrap();
            w.commit_cluster().unwrap();
            log(log_path, 0, (b + 1) * BATCH);
        }
        w.close().unwrap();
    } else {
        let pw = ParallelWriter::new(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
        std::thread::scope(|s| {
            for ctx in 0..2i64 {
                let mut c = pw.create_fill_context().unwrap();
                s.spawn(move || {
                    for b in 0..BATCHES / 2 {
                        c.write_batch(&batch(ctx, b * BATCH, BATCH)).unwrap();
                        c.flush_cluster().unwrap();
                        log(log_path, ctx, (b + 1) * BATCH);
                    }
                    c.close().unwrap();
                });
            }
        });
        pw.close().unwrap();
    }
    shared.finish().unwrap();
}

/// Entry `row` of a batch as read: (y, v, s).
fn entry(read: &RecordBatch, row: usize) -> (f64, Vec<i32>, String) {
    let y = read.column(1).as_primitive::<arrow_array::types::Float64Type>().value(row);
    let v = match read.column(2).as_list_opt::<i32>() {
        Some(l) => l.value(row),
        None => read.column(2).as_list::<i64>().value(row),
    };
    let v = v.as_primitive::<arrow_array::types::Int32Type>().values().to_vec();
    let s = match read.column(3).as_string_opt::<i32>() {
        Some(a) => a.value(row).to_string(),
        None => read.column(3).as_string::<i64>().value(row).to_string(),
    };
    (y, v, s)
}

/// The input's (y, v, s) of the entry with x = `e`.
fn expected(e: i64) -> (f64, Vec<i32>, String) {
    let b = batch(e / STRIDE, (e % STRIDE) as u64, 1);
    let v = b.column(2).as_any().downcast_ref::<ListArray>().unwrap().value(0);
    (e as f64 * 0.5, v.as_primitive::<arrow_array::types::Int32Type>().values().to_vec(), format!("entry-{e}"))
}

/// Checks that `path` holds, per context, a prefix of its input in order, at
/// least the committed entries; returns the entries.
fn check_values(path: &Path, committed: &HashMap<i64, u64>, what: &str) -> u64 {
    let f = RNTupleFile::open(path).unwrap_or_else(|e| panic!("{what}: {e}"));
    let nt = f.rntuple("Events").unwrap();
    let n = nt.num_entries();
    let read = nt.read(None, 0, n).unwrap();
    let x = read.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    let mut next: HashMap<i64, u64> = HashMap::new();
    for (row, &e) in x.values().iter().enumerate() {
        let (ctx, i) = (e / STRIDE, (e % STRIDE) as u64);
        let want = next.entry(ctx).or_insert(0);
        assert_eq!(i, *want, "{what}: entry {row} of context {ctx} out of order");
        *want += 1;
        assert_eq!(entry(&read, row), expected(e), "{what}: entry {row}");
    }
    for (ctx, &n_committed) in committed {
        let kept = next.get(ctx).copied().unwrap_or(0);
        assert!(kept >= n_committed, "{what}: context {ctx} kept {kept} entries, {n_committed} were committed");
    }
    n
}

fn scratch(name: &str) -> PathBuf {
    kill_support::scratch("rntuple-recover", name)
}

#[derive(Default, Debug)]
struct Tally {
    killed: usize,
    recovered: usize,
    nothing_committed: usize,
    completed: usize,
}

fn kill_at(mode: &str, point: &str, k: usize, tally: &mut Tally) {
    let file = scratch(&format!("{mode}-{k}.root"));
    let log_path = scratch(&format!("{mode}-{k}.log"));
    let out = scratch(&format!("{mode}-{k}-recovered.root"));
    let _ = std::fs::remove_file(&log_path);
    let finished = run_child(&format!("{mode}:{}:{}", file.display(), log_path.display()), point);
    let what = format!("{mode} killed at {point}");
    let committed = committed(&log_path);
    if finished {
        // The point was past the last event: the file is complete.
        check_values(&file, &committed, &what);
        assert!(!journal_path(&file).exists(), "{what}: a finished file keeps no journal");
        tally.completed += 1;
        return;
    }
    tally.killed += 1;
    if let Ok(f) = RNTupleFile::open(&file) {
        // Killed after the file header went out (finish): a complete file.
        drop(f);
        check_values(&file, &committed, &what);
        let r = recover(&file, Some(&out), RecoverOptions::default()).unwrap();
        assert_eq!(r.state, FileState::Complete);
        assert!(!out.exists());
        tally.completed += 1;
        return;
    }
    let e = RNTupleFile::open(&file).unwrap_err().to_string();
    assert!(e.contains("not completed"), "{what}: the reader's refusal: {e}");
    match recover(&file, Some(&out), RecoverOptions::default()) {
        Ok(r) => {
            let n = check_values(&out, &committed, &what);
            assert_eq!(r.entries(), n, "{what}: the report's entries");
            tally.recovered += 1;
        }
        Err(e) => {
            assert!(committed.values().all(|&n| n == 0), "{what}: committed entries lost: {e}");
            assert!(!out.exists(), "{what}: no file after a failed recovery");
            tally.nothing_committed += 1;
        }
    }
    for p in [&file, &out, &log_path, &journal_path(&file)] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn killed_writers_lose_nothing_committed() {
    if std::env::var("RNTUPLE_CRASH_CHILD").is_ok() {
        return;
    }
    let points: usize = std::env::var("RNTUPLE_KILL_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    // Events per kind in one run (about): at most this many, so that most
    // points fall inside the run.
    let kinds = [
        ("fill", 12),
        ("compress", 100),
        ("page", 28),
        ("commit", 14),
        ("journal", 14),
        ("footer", 1),
        ("finish", 1),
        ("any", 200),
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut tally = Tally::default();
    for k in 0..points {
        let (kind, max) = kinds[k % kinds.len()];
        let nth = 1 + next_random(&mut state) % max;
        let mode = if (k / kinds.len()) % 2 == 0 { "single" } else { "parallel" };
        kill_at(mode, &format!("{kind}:{nth}"), k, &mut tally);
    }
    eprintln!("kill points: {points}, {tally:?}");
    assert!(tally.recovered > 0 && tally.killed > points / 2, "{tally:?}");
}

#[test]
fn a_file_without_a_journal_is_refused_and_a_complete_one_left_alone() {
    let file = scratch("nojournal.root");
    let shared = SharedFileWriter::create(&file, WriterOptions::default().journal(false)).unwrap();
    let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
    w.write_batch(&batch(0, 0, 100)).unwrap();
    w.commit_cluster().unwrap();
    assert!(!journal_path(&file).exists());
    shared.abandon();
    let e = recover(&file, None, RecoverOptions::default()).unwrap_err().to_string();
    assert!(e.contains("no journal"), "{e}");

    let done = scratch("complete.root");
    rntuple::write::write_batches(&done, "Events", [batch(0, 0, 10)], &HashMap::new(), options()).unwrap();
    assert!(!journal_path(&done).exists());
    let r = recover(&done, Some(&scratch("complete-out.root")), RecoverOptions::default()).unwrap();
    assert_eq!(r.state, FileState::Complete);
    assert!(!scratch("complete-out.root").exists());
}

#[test]
fn a_damaged_page_ends_the_rntuple_at_the_cluster_before() {
    let file = scratch("damaged.root");
    let shared = SharedFileWriter::create(&file, WriterOptions::default()).unwrap();
    let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
    let mut ends = Vec::new();
    for b in 0..3 {
        w.write_batch(&batch(0, b * 100, 100)).unwrap();
        w.commit_cluster().unwrap();
        ends.push(std::fs::metadata(&file).unwrap().len());
    }
    shared.abandon();
    drop(w);
    // Flip a byte in the last cluster's pages: its checksum catches it.
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[(ends[1] + ends[2]) as usize / 2] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    let out = scratch("damaged-out.root");
    let r = recover(&file, Some(&out), RecoverOptions::default()).unwrap();
    assert_eq!(r.entries(), 200, "{r}");
    assert_eq!(r.rntuples[0].dropped.len(), 1, "{r}");
    assert_eq!(check_values(&out, &HashMap::from([(0, 200)]), "damaged"), 200);
    let text = r.to_string();
    assert!(text.contains("200 entries in 2 committed clusters kept") && text.contains("dropped"), "{text}");
}

#[test]
fn the_journal_leaves_finished_files_unchanged() {
    let write = |dir: &str, journal: bool| {
        let path = scratch(dir).join("same.root");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let o = WriterOptions::default().journal(journal).timestamp(1_700_000_000);
        let shared = SharedFileWriter::create(&path, o).unwrap();
        let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
        for b in 0..3 {
            w.write_batch(&batch(0, b * 100, 100)).unwrap();
            w.commit_cluster().unwrap();
            assert_eq!(journal_path(&path).exists(), journal, "a journal after a commit");
        }
        w.close().unwrap();
        shared.finish().unwrap();
        assert!(!journal_path(&path).exists(), "the journal of a finished file is deleted");
        std::fs::read(&path).unwrap()
    };
    assert!(write("with", true) == write("without", false), "finished files differ with the journal");
}

/// The cost of the journal: the same data written with and without it,
/// alternately; finished files must be identical. In CI a small run (200k
/// entries, 2 repetitions) checks the identity; the figures in
/// docs/recover.md come from `RNTUPLE_COST_ENTRIES=4000000 RNTUPLE_COST_REPS=11
/// cargo test --release -p rntuple-tools --test recover measure_journal_cost -- --nocapture`.
#[test]
fn measure_journal_cost() {
    let entries: u64 = std::env::var("RNTUPLE_COST_ENTRIES").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let cluster: u64 = std::env::var("RNTUPLE_COST_CLUSTER").ok().and_then(|v| v.parse().ok()).unwrap_or(4 << 20);
    let batches: Vec<RecordBatch> = (0..entries / 100_000).map(|b| batch(0, b * 100_000, 100_000)).collect();
    let write = |path: &Path, journal: bool| {
        let t = std::time::Instant::now();
        let o = WriterOptions::default().journal(journal).timestamp(1_700_000_000);
        let shared = SharedFileWriter::create(path, o).unwrap();
        let wo = WriteOptions { approx_zipped_cluster_size: cluster, ..Default::default() };
        let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), wo).unwrap();
        let mut journal_bytes = 0;
        for b in &batches {
            w.write_batch(b).unwrap();
            journal_bytes = std::fs::metadata(journal_path(path)).map(|m| m.len()).unwrap_or(journal_bytes);
        }
        w.close().unwrap();
        shared.finish().unwrap();
        (t.elapsed().as_secs_f64(), journal_bytes)
    };
    // The same name in two directories: the name is part of the file.
    let (on, off) = (scratch("on").join("cost.root"), scratch("off").join("cost.root"));
    for p in [&on, &off] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    // One write only (`on`, `off`) or none (`none`: the input alone), for
    // bench/journal_cost.sh, which counts the instructions of each under
    // valgrind: a figure the load of the machine does not move.
    if let Ok(only) = std::env::var("RNTUPLE_COST_ONLY") {
        match only.as_str() {
            "on" => eprintln!("journal bytes {}", write(&on, true).1),
            "off" => drop(write(&off, false)),
            _ => eprintln!("input of {} batches", batches.len()),
        }
        return;
    }
    let (mut t_on, mut t_off, mut jbytes) = (Vec::new(), Vec::new(), 0);
    let reps: usize = std::env::var("RNTUPLE_COST_REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    for k in 0..reps {
        // Alternate which goes first.
        if k % 2 == 1 {
            t_off.push(write(&off, false).0);
        }
        let (t, j) = write(&on, true);
        t_on.push(t);
        jbytes = j;
        if k % 2 == 0 {
            t_off.push(write(&off, false).0);
        }
    }
    let a = std::fs::read(&on).unwrap();
    let b = std::fs::read(&off).unwrap();
    assert!(a == b, "finished files differ with the journal");
    let clusters = RNTupleFile::open(&on).unwrap().rntuple("Events").unwrap().num_entries();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        v[v.len() / 2]
    };
    let (m_on, m_off) = (median(&mut t_on), median(&mut t_off));
    eprintln!(
        "entries {clusters}, file {} bytes (identical), journal {jbytes} bytes ({:.4}% of the file), \
         time with journal {m_on:.3} s, without {m_off:.3} s ({:+.2}%)",
        a.len(),
        100.0 * jbytes as f64 / a.len() as f64,
        100.0 * (m_on - m_off) / m_off
    );
}

/// The journal of an unfinished file with record `record`'s page list
/// changed by `forge` (records re-encoded with valid checksums).
fn forge_journal(file: &Path, record: usize, forge: impl Fn(&mut rntuple::format::model::PageList)) {
    use rntuple::container::write::journal::Journal;
    use rntuple::format::checksum::xxh3_64;
    use rntuple::format::envelope::{parse_page_list, write_page_list};
    use rntuple::write::journal::ClusterRecord;
    let jpath = journal_path(file);
    let bytes = std::fs::read(&jpath).unwrap();
    let journal = Journal::parse(&bytes, "journal").unwrap();
    let mut out = bytes[..36].to_vec();
    for (i, r) in journal.records.iter().enumerate() {
        let mut rec = ClusterRecord::decode(&r.payload, "record").unwrap();
        if i == record {
            let mut list = parse_page_list(&rec.page_list, true).unwrap();
            forge(&mut list);
            rec.page_list = write_page_list(&list).unwrap().0;
        }
        let payload = rec.encode();
        let start = out.len();
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&r.seq.to_le_bytes());
        out.extend_from_slice(&r.end.to_le_bytes());
        out.extend_from_slice(&payload);
        let sum = xxh3_64(&out[start..]);
        out.extend_from_slice(&sum.to_le_bytes());
    }
    std::fs::write(&jpath, out).unwrap();
}

/// An unfinished file of two committed clusters of 100 entries.
fn unfinished(name: &str) -> PathBuf {
    let file = scratch(name);
    let shared = SharedFileWriter::create(&file, WriterOptions::default()).unwrap();
    let mut w = RNTupleWriter::new_shared(&shared, "Events", &schema(), &HashMap::new(), options()).unwrap();
    for b in 0..2 {
        w.write_batch(&batch(0, b * 100, 100)).unwrap();
        w.commit_cluster().unwrap();
    }
    shared.abandon();
    drop(w);
    file
}

#[test]
fn a_forged_journal_whose_sizes_overflow_fails_cleanly() {
    // A page of u64::MAX - 3 bytes with a checksum: its size plus the 8 checksum
    // bytes overflows (it panicked in debug builds, wrapped around in release ones).
    let file = unfinished("forged-size.root");
    forge_journal(&file, 0, |list| {
        let page = &mut list.page_locations[0][0].pages[0];
        assert!(page.has_checksum);
        page.locator.size = u64::MAX - 3;
    });
    let e = recover(&file, Some(&scratch("forged-size-out.root")), RecoverOptions::default()).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("no committed cluster") && text.contains("outside the bytes written"), "{text}");
    assert!(!scratch("forged-size-out.root").exists());
}
