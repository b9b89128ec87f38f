//! The container layer on a whole file from memory: every key listed (in
//! subdirectories too), every key's object read and, for anchors, parsed;
//! the streamer info; and payload reads at hostile offsets, sizes and
//! maximum key sizes taken from the input's first 24 bytes (payloads split
//! over keys are followed through key headers). Checksums on and off. Any
//! `Err` is fine; a panic, a hang or a huge allocation is a bug.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use rntuple_container::{MemoryStorage, OpenOptions, RootFile};
use rntuple_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let (offset, size, max_key) = (b.u64() % (1 << 20), b.u64() % (1 << 22), b.u64());
    for verify in [true, false] {
        let storage = Arc::new(MemoryStorage::new(data.to_vec()));
        let Ok(root) = RootFile::from_storage_with(storage, OpenOptions::new().verify_checksums(verify)) else {
            continue;
        };
        let _ = root.streamer_info();
        let _ = root.rntuple_names();
        if let Ok(keys) = root.keys() {
            for key in keys.iter().take(64) {
                let _ = root.read_object(key);
                let _ = root.key_at(key.seek_key);
                if key.is_rntuple() {
                    if let Ok(a) = root.anchor_of(key) {
                        let _ = root.read_payload(a.seek_header, a.nbytes_header.min(1 << 22), a.max_key_size);
                        let _ = root.read_payload(a.seek_footer, a.nbytes_footer.min(1 << 22), a.max_key_size);
                        let _ = root.payload_is_split(a.seek_header, a.nbytes_header, a.max_key_size);
                    }
                }
                let _ = root.find_key(&key.path);
            }
        }
        let _ = root.read_payload(offset, size, max_key);
        let _ = root.read_payloads(&[(offset, size), (size, offset)], max_key);
        let _ = root.payload_is_split(offset, size, max_key);
    }
});
