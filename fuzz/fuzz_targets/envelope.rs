//! Header, footer and page-list envelope parsers on arbitrary bytes.
//!
//! Each parser sees the input three times: as is with checksum verification
//! on and off, and with preamble length and trailing xxh3 patched to match the
//! input, so that the fuzzer reaches the structural checks behind the checksum
//! with verification on, too. Any `Err` is fine; a panic, a hang or a huge
//! allocation is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple_format::checksum::xxh3_64;
use rntuple_format::envelope::{parse_footer, parse_header, parse_page_list};

/// The input with its envelope length field and checksum made consistent.
fn with_valid_checksum(data: &[u8], type_id: u16) -> Option<Vec<u8>> {
    if data.len() < 16 {
        return None;
    }
    let mut buf = data.to_vec();
    let word = u64::from(type_id) | ((buf.len() as u64) << 16);
    buf[..8].copy_from_slice(&word.to_le_bytes());
    let body = buf.len() - 8;
    let sum = xxh3_64(&buf[..body]);
    buf[body..].copy_from_slice(&sum.to_le_bytes());
    Some(buf)
}

fuzz_target!(|data: &[u8]| {
    for verify in [true, false] {
        let _ = parse_header(data, verify);
        let _ = parse_footer(data, verify);
        let _ = parse_page_list(data, verify);
    }
    if let Some(buf) = with_valid_checksum(data, 1) {
        let _ = parse_header(&buf, true);
    }
    if let Some(buf) = with_valid_checksum(data, 2) {
        let _ = parse_footer(&buf, true);
    }
    if let Some(buf) = with_valid_checksum(data, 3) {
        let _ = parse_page_list(&buf, true);
    }
});
