//! `recover` on a hostile unfinished file and journal: the input is a `u32`
//! (little-endian) length of the file, the file, then its journal (seeds:
//! `make_seeds.py`, files rntuple's writer abandoned). Any report or `Err`
//! is fine; a panic (an overflow of the journal's sizes, an index out of
//! range), a hang or a huge allocation is a bug, and so is a recovered file
//! the reader refuses.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use rntuple_tools::{recover, RecoverOptions};

fn scratch(name: &str) -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() { PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    base.join(format!("rntuple-fuzz-recover-{}-{name}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let Some((len, rest)) = data.split_first_chunk::<4>() else { return };
    let split = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (file, journal) = rest.split_at(split);
    let broken = scratch("in.root");
    let journal_path = rntuple::container::write::journal::journal_path(&broken);
    let out = scratch("out.root");
    if std::fs::write(&broken, file).is_err() || std::fs::write(&journal_path, journal).is_err() {
        return;
    }
    let options = RecoverOptions { overwrite: true, ..Default::default() };
    if let Ok(report) = recover(&broken, Some(&out), options) {
        if report.output.is_some() {
            let reopened = rntuple::RNTupleFile::open(&out);
            assert!(reopened.is_ok(), "recover wrote a file the reader refuses: {:?}", reopened.err());
        }
    }
    for p in [&broken, &journal_path, &out] {
        let _ = std::fs::remove_file(p);
    }
});
