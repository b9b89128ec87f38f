//! The data manager's tools on a hostile file: `verify` (every envelope and
//! page, values read), `inspect`, and `merge` of the file with itself in
//! each schema mode. Any report or `Err` is fine; a panic, a hang or a huge
//! allocation is a bug, and so is a merge of files that verify cleanly
//! whose output does not verify cleanly.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use rntuple_tools::{inspect_file, merge, verify_file, MergeMode, MergeOptions, NoProgress, VerifyOptions};

fn scratch(name: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    base.join(format!("rntuple-fuzz-tools-{}-{name}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let input = scratch("in.root");
    let out = scratch("out.root");
    if std::fs::write(&input, data).is_err() {
        return;
    }
    let verify = VerifyOptions { read_values: true, max_problems: 20 };
    let report = verify_file(&input, verify, &NoProgress);
    let _ = inspect_file(&input, None, data.len().is_multiple_of(2));
    let mode = [MergeMode::Strict, MergeMode::Union, MergeMode::Filter][data.len() % 3];
    let options = MergeOptions { mode, overwrite: true, threads: 1, ..Default::default() };
    let merged = merge(&out, &[input.as_path(), input.as_path()], &options, &NoProgress);
    if report.is_ok() && merged.is_ok() {
        let again = verify_file(&out, verify, &NoProgress);
        assert!(again.is_ok(), "merging a file that verifies gave one that does not: {again:?}");
    }
    let _ = std::fs::remove_file(&input);
    let _ = std::fs::remove_file(&out);
});
