//! Checksums of the format.
//!
//! * Envelopes end with an xxh3-64 of every byte before it (spec "Envelopes").
//! * Pages may be followed by an xxh3-64 of the compressed page (spec "Page Locations").
//! * ROOT's LZ4 chunks start with a big-endian xxhash64 (seed 0) of the LZ4
//!   data (ROOT `core/lz4/src/ZipLZ4.cxx`; not in the spec text).

/// XXH3 64-bit hash with the default secret and seed 0, as ROOT's `XXH3_64bits`.
pub fn xxh3_64(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// XXH64 with seed 0, as used in front of ROOT's LZ4 chunks.
pub fn xxh64(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Reference values of the xxHash project for the empty input.
        assert_eq!(xxh3_64(b""), 0x2D06_8005_38D3_94C2);
        assert_eq!(xxh64(b""), 0xEF46_DB37_51D8_E999);
    }
}
