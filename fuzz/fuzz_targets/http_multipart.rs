//! What an HTTP server answers to a multi-range request, parsed as the HTTP
//! backend parses it (`storage/http/multipart.rs`): the boundary of a
//! `Content-Type`, a `multipart/byteranges` body (RFC 9110 §14.6) whose parts
//! each carry a `Content-Range`, and the ranges asked for copied out of it;
//! the `Content-Type` line is also parsed as a `Content-Range`. Input: up to
//! 8 ranges asked for (offset, length < 4096), then the `Content-Type` up to
//! a newline, then the body. Any `Err` is fine; a panic, a hang or a huge
//! allocation is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple_container::storage::fuzzing::{http_content_range, http_multipart};
use rntuple_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes::new(data);
    let n = b.below(9);
    let ranges: Vec<(u64, usize)> = (0..n)
        .map(|_| {
            let offset = if b.bool() { b.u64() } else { u64::from(b.u16()) };
            (offset, b.below(4096))
        })
        .collect();
    let rest = b.rest();
    let line = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    let content_type = String::from_utf8_lossy(&rest[..line.min(512)]);
    let body = rest.get(line + 1..).unwrap_or_default();
    if let Ok(copied) = http_multipart(&content_type, body, &ranges) {
        assert_eq!(copied.len(), ranges.len());
        for (out, (_, len)) in copied.iter().zip(&ranges) {
            assert_eq!(out.len(), *len);
        }
    }
    if let Some((first, last, total)) = http_content_range(&content_type) {
        assert!(first <= last);
        let _ = total;
    }
});
