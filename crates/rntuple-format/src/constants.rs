//! Numbers that must never change: they are written into files.
//!
//! Everything here is quoted from the RNTuple binary format specification 1.0
//! (`tree/ntuple/doc/BinaryFormatSpecification.md`, root-project/root) or, where
//! the specification leaves it open, from the files ROOT writes; each constant
//! names its section.

// ---------------------------------------------------------------------------
// Envelopes (spec "Envelopes")
// ---------------------------------------------------------------------------

/// Envelope type id of the header envelope.
pub const ENVELOPE_TYPE_HEADER: u16 = 0x01;
/// Envelope type id of the footer envelope.
pub const ENVELOPE_TYPE_FOOTER: u16 = 0x02;
/// Envelope type id of the page list envelope.
pub const ENVELOPE_TYPE_PAGE_LIST: u16 = 0x03;
/// Bytes of the envelope preamble (type id in bits 0:15, length in bits 16:63).
pub const ENVELOPE_PREAMBLE_SIZE: usize = 8;
/// Bytes of the trailing xxh3-64 checksum of an envelope.
pub const ENVELOPE_CHECKSUM_SIZE: usize = 8;
/// Largest envelope length representable in the 48-bit length field.
pub const ENVELOPE_MAX_LENGTH: u64 = (1 << 48) - 1;

// ---------------------------------------------------------------------------
// Frames (spec "Frames")
// ---------------------------------------------------------------------------

/// Bytes of a record frame preamble (signed 64-bit size).
pub const RECORD_FRAME_PREAMBLE_SIZE: usize = 8;
/// Bytes of a list frame preamble (signed 64-bit size plus 32-bit item count).
pub const LIST_FRAME_PREAMBLE_SIZE: usize = 12;

// ---------------------------------------------------------------------------
// Feature flags (spec "Feature Flags")
// ---------------------------------------------------------------------------

/// The most significant bit of a feature flag word: another word follows.
pub const FEATURE_FLAG_CONTINUATION: u64 = 1 << 63;
/// Feature flag bits carried by one word (bit 63 is the continuation marker).
pub const FEATURE_FLAG_BITS_PER_WORD: u32 = 63;

// ---------------------------------------------------------------------------
// Locators (spec "Locators and Envelope Links")
// ---------------------------------------------------------------------------

/// Locator type of a large on-disk locator (64-bit size, 64-bit offset).
pub const LOCATOR_TYPE_LARGE: u8 = 0x01;
/// Locator type of a DAOS / object-store locator (written by ROOT, not in the 1.0 text).
pub const LOCATOR_TYPE_OBJECT64: u8 = 0x02;
/// Bytes of a standard on-disk locator (32-bit size, 64-bit offset).
pub const LOCATOR_STANDARD_SIZE: usize = 12;
/// Bytes of the payload of a large locator.
pub const LOCATOR_LARGE_PAYLOAD_SIZE: usize = 16;

// ---------------------------------------------------------------------------
// Field descriptions (spec "Field Description")
// ---------------------------------------------------------------------------

/// Structural role: leaf field.
pub const ROLE_LEAF: u16 = 0x00;
/// Structural role: collection parent.
pub const ROLE_COLLECTION: u16 = 0x01;
/// Structural role: record parent.
pub const ROLE_RECORD: u16 = 0x02;
/// Structural role: variant parent.
pub const ROLE_VARIANT: u16 = 0x03;
/// Structural role: ROOT-streamed object.
pub const ROLE_STREAMER: u16 = 0x04;

// Field and column flags live in `model` (FIELD_FLAG_*, COLUMN_FLAG_*), next to
// the descriptors that carry them; they are re-exported here for completeness.
pub use crate::model::{
    COLUMN_FLAG_DEFERRED, COLUMN_FLAG_RANGE, FIELD_FLAG_PROJECTED, FIELD_FLAG_REPETITIVE, FIELD_FLAG_SOA,
    FIELD_FLAG_TYPE_CHECKSUM,
};

// ---------------------------------------------------------------------------
// Extra type information (spec "Extra type information")
// ---------------------------------------------------------------------------

/// Content identifier of serialized ROOT streamer info.
pub const EXTRA_TYPE_INFO_STREAMER_INFO: u32 = 0x00;

// ---------------------------------------------------------------------------
// Page list (spec "Cluster Summary Record Frame", "Suppressed Columns")
// ---------------------------------------------------------------------------

/// Cluster summary flag: sharded cluster (reserved; readers must abort).
pub const CLUSTER_FLAG_SHARDED: u8 = 0x01;
/// Element offset writers store for a suppressed column (the lowest `i64`).
pub const SUPPRESSED_COLUMN_MARKER: i64 = i64::MIN;
/// Largest number of entries in a cluster (56-bit field).
pub const CLUSTER_MAX_ENTRIES: u64 = (1 << 56) - 1;

// ---------------------------------------------------------------------------
// Column types (spec "Column Description")
// ---------------------------------------------------------------------------

pub const COLUMN_BIT: u16 = 0x00;
pub const COLUMN_BYTE: u16 = 0x01;
pub const COLUMN_CHAR: u16 = 0x02;
pub const COLUMN_INT8: u16 = 0x03;
pub const COLUMN_UINT8: u16 = 0x04;
pub const COLUMN_INT16: u16 = 0x05;
pub const COLUMN_UINT16: u16 = 0x06;
pub const COLUMN_INT32: u16 = 0x07;
pub const COLUMN_UINT32: u16 = 0x08;
pub const COLUMN_INT64: u16 = 0x09;
pub const COLUMN_UINT64: u16 = 0x0A;
pub const COLUMN_REAL16: u16 = 0x0B;
pub const COLUMN_REAL32: u16 = 0x0C;
pub const COLUMN_REAL64: u16 = 0x0D;
pub const COLUMN_INDEX32: u16 = 0x0E;
pub const COLUMN_INDEX64: u16 = 0x0F;
pub const COLUMN_SWITCH: u16 = 0x10;
pub const COLUMN_SPLIT_INT16: u16 = 0x11;
pub const COLUMN_SPLIT_UINT16: u16 = 0x12;
pub const COLUMN_SPLIT_INT32: u16 = 0x13;
pub const COLUMN_SPLIT_UINT32: u16 = 0x14;
pub const COLUMN_SPLIT_INT64: u16 = 0x15;
pub const COLUMN_SPLIT_UINT64: u16 = 0x16;
/// Listed by the specification, not implemented by ROOT: read, never write.
pub const COLUMN_SPLIT_REAL16: u16 = 0x17;
pub const COLUMN_SPLIT_REAL32: u16 = 0x18;
pub const COLUMN_SPLIT_REAL64: u16 = 0x19;
pub const COLUMN_SPLIT_INDEX32: u16 = 0x1A;
pub const COLUMN_SPLIT_INDEX64: u16 = 0x1B;
pub const COLUMN_REAL32_TRUNC: u16 = 0x1C;
pub const COLUMN_REAL32_QUANT: u16 = 0x1D;

/// Bits on storage of a `Switch` element: a 64-bit index and a 32-bit tag.
pub const SWITCH_BITS: u16 = 96;
/// Allowed bits on storage of `Real32Trunc` (ROOT `GetValidBitRange`).
pub const REAL32_TRUNC_BITS: (u16, u16) = (10, 31);
/// Allowed bits on storage of `Real32Quant` (ROOT `GetValidBitRange`).
pub const REAL32_QUANT_BITS: (u16, u16) = (1, 32);

// ---------------------------------------------------------------------------
// Compression (spec "Compression Block", "Basic Types: Compression settings")
// ---------------------------------------------------------------------------

/// Bytes of the header in front of every compressed chunk.
pub const COMPRESSION_HEADER_SIZE: usize = 9;
/// Largest uncompressed (and compressed) size of one chunk: 24 bits
/// (ROOT's `kMAXZIPBUF`).
pub const COMPRESSION_MAX_CHUNK: usize = 0xFF_FFFF;
/// Chunk tag of zlib: `'Z' 'L'` and `Z_DEFLATED` (8).
pub const TAG_ZLIB: [u8; 3] = *b"ZL\x08";
/// Chunk tag of ROOT's historic deflate implementation: `'C' 'S'` and 8.
pub const TAG_OLD: [u8; 3] = *b"CS\x08";
/// Chunk tag of LZMA (an xz stream): `'X' 'Z'` and 0.
pub const TAG_LZMA: [u8; 3] = *b"XZ\x00";
/// First two bytes of an LZ4 chunk; the third is the LZ4 major version.
pub const TAG_LZ4: [u8; 2] = *b"L4";
/// LZ4 major version written in the third tag byte.
pub const LZ4_MAJOR_VERSION: u8 = 1;
/// Bytes of the big-endian xxhash64 (seed 0) ROOT puts in front of LZ4 data;
/// counted in the chunk's compressed size.
pub const LZ4_CHECKSUM_SIZE: usize = 8;
/// Chunk tag of zstd: `'Z' 'S'` and 1.
pub const TAG_ZSTD: [u8; 3] = *b"ZS\x01";

/// Compression algorithm number (`settings / 100`): ROOT's global default.
pub const ALGORITHM_GLOBAL: u32 = 0;
/// Compression algorithm number: zlib.
pub const ALGORITHM_ZLIB: u32 = 1;
/// Compression algorithm number: LZMA.
pub const ALGORITHM_LZMA: u32 = 2;
/// Compression algorithm number: ROOT's historic deflate.
pub const ALGORITHM_OLD: u32 = 3;
/// Compression algorithm number: LZ4.
pub const ALGORITHM_LZ4: u32 = 4;
/// Compression algorithm number: zstd.
pub const ALGORITHM_ZSTD: u32 = 5;

// ---------------------------------------------------------------------------
// Format version (spec "Anchor schema": fVersionEpoch.Major.Minor.Patch)
// ---------------------------------------------------------------------------

/// Format version our writers stamp into the anchor (ROOT 6.40 writes
/// 1.0.2.0); the write engine and the merger both use it.
pub const FORMAT_VERSION: (u16, u16, u16, u16) = (1, 0, 2, 0);

// ---------------------------------------------------------------------------
// Security guards (DESIGN.md "Untrusted input"): not written into files, but
// every path that reads bytes checks them, so they live here, once.
// ---------------------------------------------------------------------------

/// Largest ratio of uncompressed to stored bytes accepted for an envelope or
/// a page before allocating (zstd's RLE blocks reach about 2^15; nothing real
/// goes beyond). See [`crate::compression::guard_expansion`].
pub const MAX_EXPANSION_RATIO: u64 = 1 << 16;
/// Bytes any stored object may inflate to regardless of the ratio (tiny
/// stored objects, e.g. pages of one repeated value).
pub const EXPANSION_SLACK: u64 = 1 << 20;
/// Most bytes of synthetic zeros (deferred columns, default values of a
/// merge) produced for one column in one cluster; ROOT's clusters hold at
/// most 1280 MiB.
pub const MAX_ZERO_FILL_BYTES: u64 = 4 << 30;

#[cfg(test)]
mod tests {
    use super::*;

    /// These values are written into files or guard every read: a change
    /// breaks compatibility or security. The expected values are literals
    /// from the specification and ROOT's sources, not the constants again.
    #[test]
    fn never_change_these_constants() {
        assert_eq!((ENVELOPE_TYPE_HEADER, ENVELOPE_TYPE_FOOTER, ENVELOPE_TYPE_PAGE_LIST), (1, 2, 3));
        assert_eq!((ENVELOPE_PREAMBLE_SIZE, ENVELOPE_CHECKSUM_SIZE), (8, 8));
        assert_eq!(ENVELOPE_MAX_LENGTH, 0xFFFF_FFFF_FFFF);
        assert_eq!((RECORD_FRAME_PREAMBLE_SIZE, LIST_FRAME_PREAMBLE_SIZE), (8, 12));
        assert_eq!(FEATURE_FLAG_CONTINUATION, 0x8000_0000_0000_0000);
        assert_eq!((LOCATOR_TYPE_LARGE, LOCATOR_TYPE_OBJECT64, LOCATOR_STANDARD_SIZE), (1, 2, 12));
        assert_eq!([ROLE_LEAF, ROLE_COLLECTION, ROLE_RECORD, ROLE_VARIANT, ROLE_STREAMER], [0, 1, 2, 3, 4]);
        assert_eq!(CLUSTER_FLAG_SHARDED, 1);
        assert_eq!(SUPPRESSED_COLUMN_MARKER, -0x8000_0000_0000_0000);
        let columns = [
            COLUMN_BIT,
            COLUMN_BYTE,
            COLUMN_CHAR,
            COLUMN_INT8,
            COLUMN_UINT8,
            COLUMN_INT16,
            COLUMN_UINT16,
            COLUMN_INT32,
            COLUMN_UINT32,
            COLUMN_INT64,
            COLUMN_UINT64,
            COLUMN_REAL16,
            COLUMN_REAL32,
            COLUMN_REAL64,
            COLUMN_INDEX32,
            COLUMN_INDEX64,
            COLUMN_SWITCH,
            COLUMN_SPLIT_INT16,
            COLUMN_SPLIT_UINT16,
            COLUMN_SPLIT_INT32,
            COLUMN_SPLIT_UINT32,
            COLUMN_SPLIT_INT64,
            COLUMN_SPLIT_UINT64,
            COLUMN_SPLIT_REAL16,
            COLUMN_SPLIT_REAL32,
            COLUMN_SPLIT_REAL64,
            COLUMN_SPLIT_INDEX32,
            COLUMN_SPLIT_INDEX64,
            COLUMN_REAL32_TRUNC,
            COLUMN_REAL32_QUANT,
        ];
        let expected: [u16; 30] = [
            0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,
            0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D,
        ];
        assert_eq!(columns, expected);
        assert_eq!((SWITCH_BITS, REAL32_TRUNC_BITS, REAL32_QUANT_BITS), (96, (10, 31), (1, 32)));
        assert_eq!((COMPRESSION_HEADER_SIZE, COMPRESSION_MAX_CHUNK), (9, 16_777_215));
        assert_eq!(TAG_ZLIB, [b'Z', b'L', 8]);
        assert_eq!(TAG_OLD, [b'C', b'S', 8]);
        assert_eq!(TAG_LZMA, [b'X', b'Z', 0]);
        assert_eq!((TAG_LZ4, LZ4_MAJOR_VERSION, LZ4_CHECKSUM_SIZE), ([b'L', b'4'], 1, 8));
        assert_eq!(TAG_ZSTD, [b'Z', b'S', 1]);
        assert_eq!(
            [ALGORITHM_GLOBAL, ALGORITHM_ZLIB, ALGORITHM_LZMA, ALGORITHM_OLD, ALGORITHM_LZ4, ALGORITHM_ZSTD],
            [0, 1, 2, 3, 4, 5]
        );
        assert_eq!(FORMAT_VERSION, (1, 0, 2, 0));
        assert_eq!((MAX_EXPANSION_RATIO, EXPANSION_SLACK, MAX_ZERO_FILL_BYTES), (65_536, 1_048_576, 4_294_967_296));
    }
}
