//! A whole ROOT file from memory: open it, list its RNTuples and read every
//! one completely. Checksums are off so that the fuzzer gets past them to
//! the structures they protect. Any `Err` is fine; a panic, a hang or a huge
//! allocation is a bug.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rntuple::{RNTupleFile, ReadOptions};
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};

fuzz_target!(|data: &[u8]| {
    let storage = Arc::new(MemoryStorage::new(data.to_vec()));
    let Ok(root) = RootFile::from_storage_with(storage, OpenOptions::new().verify_checksums(false)) else {
        return;
    };
    let file = RNTupleFile::from_root_file(root, ReadOptions { verify_checksums: false });
    let _ = file.keys();
    let Ok(names) = file.rntuple_names() else {
        return;
    };
    for name in names {
        if let Ok(ntuple) = file.rntuple(&name) {
            let _ = ntuple.read_all();
        }
    }
});
