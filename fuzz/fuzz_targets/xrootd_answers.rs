//! What an XRootD server answers, parsed as the XRootD backend parses it
//! (`storage/xrootd/`): a `kXR_readv` answer (`read_list` headers before
//! each chunk's data) for up to 16 ranges asked for, fed to the streaming
//! parser in pieces of fuzzer-chosen sizes (as `kXR_oksofar` parts and
//! socket reads split it), and the small answer bodies (`kXR_error`,
//! `kXR_wait`, `kXR_redirect`, the `kXR_open` and `kXR_stat` answers).
//! Input: the ranges (offset, length < 64 KiB), up to 8 piece sizes, then
//! the answer. Any `Err` is fine; a panic, a hang or a huge allocation is a
//! bug, and a successful read must fill exactly the bytes asked for.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple_container::storage::fuzzing::{xrootd_bodies, xrootd_readv};
use rntuple_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let n = b.below(17);
    let ranges: Vec<(u64, usize)> = (0..n)
        .map(|_| {
            let offset = if b.bool() { b.u64() } else { u64::from(b.u32()) };
            (offset, b.below(1 << 16))
        })
        .collect();
    let splits: Vec<usize> = (0..b.below(9)).map(|_| b.below(1 << 12)).collect();
    let answer = b.rest();
    if let Ok(out) = xrootd_readv(&ranges, answer, &splits) {
        assert_eq!(out.len(), ranges.iter().map(|r| r.1).sum::<usize>());
    }
    xrootd_bodies(answer);
});
