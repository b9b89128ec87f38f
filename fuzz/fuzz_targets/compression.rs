//! ROOT compression blocks (zstd, zlib, lzma, lz4, uncompressed) on arbitrary
//! bytes. The first 3 input bytes choose the claimed uncompressed length
//! (little-endian, up to 16 MiB), the rest is the compressed data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple_format::compression::decompress;
use rntuple_format::Location;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let len = usize::from(data[0]) | usize::from(data[1]) << 8 | usize::from(data[2]) << 16;
    let src = &data[3..];
    let _ = decompress(src, len, &Location::new("fuzz input", Some(0)));
    // What the block headers say, as a reader that trusts them would ask.
    let _ = decompress(src, src.len().saturating_mul(2), &Location::new("fuzz input", Some(0)));
});
