//! Shared by the kill tests (`recover.rs`, `recover_extension.rs`): the
//! writer is the test binary itself, run again as a child with
//! `RNTUPLE_CRASH_CHILD` set and killed by the `RNTUPLE_CRASH_AT` hook; it
//! logs every commit that returned, and the parent checks that `recover`
//! keeps at least those.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Appends "ctx committed" to the log after every explicit commit returned.
pub fn log(path: &Path, ctx: i64, committed: u64) {
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    // One write(2) per line: `writeln!` on a File writes the pieces of the
    // format one by one, and a kill between them left a torn line.
    f.write_all(format!("{ctx} {committed}\n").as_bytes()).unwrap();
}

/// Entries per context that the writer said were committed.
pub fn committed(log_path: &Path) -> HashMap<i64, u64> {
    let mut out = HashMap::new();
    let text = std::fs::read_to_string(log_path).unwrap_or_default();
    // Only whole lines: a line the kill cut short was being logged after a
    // commit that the line before it already covers (counts only grow).
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')).map(str::trim_end) {
        let mut it = line.split(' ');
        let (ctx, n): (i64, u64) = (it.next().unwrap().parse().unwrap(), it.next().unwrap().parse().unwrap());
        out.insert(ctx, n);
    }
    out
}

/// A path in this process's scratch directory `prefix-<pid>`.
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A small deterministic generator (no dependency).
pub fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Runs this test binary's test `crash_child` with `RNTUPLE_CRASH_CHILD=spec`
/// and `RNTUPLE_CRASH_AT=point`; whether it finished (was not killed).
pub fn run_child(spec: &str, point: &str) -> bool {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env("RNTUPLE_CRASH_CHILD", spec)
        .env("RNTUPLE_CRASH_AT", point)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}
