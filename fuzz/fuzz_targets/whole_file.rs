//! A whole ROOT file from memory: open it, list its RNTuples and read every
//! one completely (the first `MAX_ENTRIES` entries of big ones). Checksums are
//! off so that the fuzzer gets past them to the structures they protect. Any
//! `Err` is fine; a panic, a hang or a huge allocation is a bug.
//!
//! The entry limit is there because a legitimate file of 2 kB can hold 10^8
//! entries (ROOT's same-page merging points every page locator at one
//! compressed page), whose Arrow arrays take gigabytes.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rntuple::{RNTupleFile, ReadOptions};
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};

const MAX_ENTRIES: u64 = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let storage = Arc::new(MemoryStorage::new(data.to_vec()));
    let Ok(root) = RootFile::from_storage_with(storage, OpenOptions::new().verify_checksums(false)) else {
        return;
    };
    let file = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT.with_verify_checksums(false));
    let _ = file.keys();
    let Ok(names) = file.rntuple_names() else {
        return;
    };
    for name in names {
        if let Ok(ntuple) = file.rntuple(&name) {
            let _ =
                if ntuple.num_entries() <= MAX_ENTRIES { ntuple.read_all() } else { ntuple.read(None, 0, MAX_ENTRIES) };
        }
    }
});
