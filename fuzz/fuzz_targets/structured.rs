//! Structure-aware mutation of real files (`rntuple_fuzz::rewrite`): the
//! custom mutator parses the input's first RNTuple, changes one count,
//! size, offset, list length, serialised value or page byte, and writes a
//! file whose envelope, page and anchor checksums all match again. The
//! target reads it with checksum verification on (as users do) through to
//! every value, and runs `verify` on it. Inputs the mutator cannot parse
//! get libFuzzer's own mutations. Any `Err` is fine; a panic, a hang or a
//! huge allocation is a bug.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};
use rntuple::{RNTupleFile, ReadOptions};
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};
use rntuple_fuzz::rewrite::{mutate, parse, Rng};

const MAX_ENTRIES: u64 = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let storage = Arc::new(MemoryStorage::new(data.to_vec()));
    let Ok(root) = RootFile::from_storage_with(storage, OpenOptions::new()) else {
        return;
    };
    let file = RNTupleFile::from_root_file(root, ReadOptions::DEFAULT);
    let Ok(names) = file.rntuple_names() else {
        return;
    };
    for name in names {
        if let Ok(t) = file.rntuple(&name) {
            let _ = if t.num_entries() <= MAX_ENTRIES { t.read_all() } else { t.read(None, 0, MAX_ENTRIES) };
        }
    }
});

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    let mut rng = Rng::new(u64::from(seed));
    // Mostly structured; sometimes libFuzzer's byte-level mutations, which
    // also let the corpus drift away from what the parser accepts.
    if rng.below(8) != 0 {
        if let Some(p) = parse(&data[..size]) {
            if let Some(out) = mutate(p, &mut rng) {
                if out.len() <= max_size {
                    data[..out.len()].copy_from_slice(&out);
                    return out.len();
                }
            }
        }
    }
    fuzzer_mutate(data, size, max_size)
});
