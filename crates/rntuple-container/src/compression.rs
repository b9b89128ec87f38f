//! Decompression of compressed key payloads (ROOT compression blocks, the
//! same framing as compressed RNTuple pages), delegated to `rntuple-format`
//! behind the one allocation guard of every read
//! ([`rntuple_format::compression::guard_expansion`]).

use rntuple_format::compression::guard_expansion;
use rntuple_format::{Location, Result};

/// Decompresses `src` into exactly `uncompressed_len` bytes; a claimed size
/// beyond the guard is refused before anything is allocated.
pub(crate) fn decompress(src: &[u8], uncompressed_len: u64, what: &Location) -> Result<Vec<u8>> {
    let len = guard_expansion(src.len() as u64, uncompressed_len, what)?;
    rntuple_format::compression::decompress(src, len, what)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rntuple_format::Error;

    #[test]
    fn absurd_ratios_are_refused_before_allocating() {
        let err = decompress(&[0u8; 20], 4 << 30, &Location::new("key", Some(10))).unwrap_err();
        assert!(matches!(err, Error::WouldOverAllocate { requested, .. } if requested == 4 << 30));
    }
}
