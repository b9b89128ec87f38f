//! Decompression of compressed key payloads (ROOT compression blocks, the
//! same framing as compressed RNTuple pages), delegated to `rntuple-format`.

use rntuple_format::{Error, Location, Result};

/// Decompressed sizes above `MAX_RATIO × compressed + MAX_SLACK` are refused
/// before anything is allocated: no real compressor reaches the ratio on
/// payloads larger than the slack.
const MAX_RATIO: u64 = 1000;
const MAX_SLACK: u64 = 1 << 30;

/// Decompresses `src` into exactly `uncompressed_len` bytes.
pub(crate) fn decompress(src: &[u8], uncompressed_len: u64, what: &Location) -> Result<Vec<u8>> {
    let limit = (src.len() as u64).saturating_mul(MAX_RATIO).saturating_add(MAX_SLACK);
    if uncompressed_len > limit {
        return Err(Error::WouldOverAllocate { requested: uncompressed_len, limit, location: what.clone() });
    }
    let len = usize::try_from(uncompressed_len).map_err(|_| Error::WouldOverAllocate {
        requested: uncompressed_len,
        limit: usize::MAX as u64,
        location: what.clone(),
    })?;
    rntuple_format::compression::decompress(src, len, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_ratios_are_refused_before_allocating() {
        let err = decompress(&[0u8; 20], 4 << 30, &Location::new("key", Some(10))).unwrap_err();
        assert!(matches!(err, Error::WouldOverAllocate { requested, .. } if requested == 4 << 30));
    }
}
