//! LZ4 chunks as ROOT writes them (RNTuple binary format 1.0, section
//! "Compression Block"; the chunk body is ROOT's, `core/lz4/src/ZipLZ4.cxx`):
//!
//! ```text
//! Byte 0    1    2       3 .. 5        6 .. 8       9 .. 16            17 ..
//! +----+----+-------+-------------+-------------+------------------+-----------+
//! | L  | 4  | major | compressed  | uncompressed| xxhash64 (BE,    | LZ4 block |
//! |    |    |       | size + 8    | size        | seed 0) of block |           |
//! +----+----+-------+-------------+-------------+------------------+-----------+
//! ```
//!
//! ROOT compresses levels 1–3 with `LZ4_compress_default` (acceleration 1)
//! and levels 4–9 with `LZ4_compress_HC` at the same level. The C library
//! behind the `lz4` crate (lz4 1.10.0) is the one ROOT 6.40 bundles, so the
//! blocks are byte for byte ROOT's (`tests/lz4_root.rs`).

use crate::checksum::xxh64;
use crate::constants::LZ4_CHECKSUM_SIZE;
use crate::error::{Error, Result};

/// The lowest level ROOT compresses with LZ4 HC rather than fast LZ4.
const LZ4_HC_FROM_LEVEL: u32 = 4;

/// Appends the body of one LZ4 chunk of `chunk` at `level` (1–9) to `out`:
/// the checksum, then the block.
pub(super) fn lz4_into(out: &mut Vec<u8>, chunk: &[u8], level: u32) -> Result<()> {
    let mode = if level >= LZ4_HC_FROM_LEVEL {
        // level is at most 9 here.
        lz4::block::CompressionMode::HIGHCOMPRESSION(level as i32)
    } else {
        lz4::block::CompressionMode::DEFAULT
    };
    let lz4_err = |e| Error::io("lz4 compression", e);
    // Compressed straight into `out` after room for the checksum (no
    // temporary block per page), which is filled in afterwards.
    let start = out.len();
    let bound = lz4::block::compress_bound(chunk.len()).map_err(lz4_err)?;
    out.resize(start + LZ4_CHECKSUM_SIZE + bound, 0);
    let block_start = start + LZ4_CHECKSUM_SIZE;
    let n = lz4::block::compress_to_buffer(chunk, Some(mode), false, &mut out[block_start..]).map_err(lz4_err)?;
    out.truncate(block_start + n);
    let sum = xxh64(&out[block_start..]).to_be_bytes();
    out[start..block_start].copy_from_slice(&sum);
    Ok(())
}

/// Checks the checksum of one LZ4 chunk body and decompresses its block into
/// `target`; returns the bytes written.
pub(super) fn unlz4(body: &[u8], target: &mut [u8]) -> std::result::Result<usize, String> {
    if body.len() < LZ4_CHECKSUM_SIZE {
        return Err("LZ4 chunk is shorter than its 8-byte checksum".into());
    }
    let (sum, data) = body.split_at(LZ4_CHECKSUM_SIZE);
    let mut stored = [0u8; 8];
    stored.copy_from_slice(sum);
    let stored = u64::from_be_bytes(stored);
    let computed = xxh64(data);
    if stored != computed {
        return Err(format!("LZ4 xxhash64 mismatch: stored {stored:#018x}, computed {computed:#018x}"));
    }
    lz4_flex::block::decompress_into(data, target).map_err(|e| format!("lz4: {e}"))
}
