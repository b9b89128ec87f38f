//! Payloads split over several `RBlob` keys.
//!
//! Source: `ComputeNumChunks`, `RNTupleFileWriter::WriteBlob` and
//! `RMiniFileReader::TryReadBuffer` in ROOT `tree/ntuple/src/RMiniFile.cxx`
//! (the specification, "ROOT File embedding", only says that payloads larger
//! than the anchor's `fMaxKeySize` are split).
//!
//! A payload (envelope or page) of `n > max_key_size` bytes on disk is written
//! as `k` chunks, each the payload of its own `RBlob` key. The locator (or the
//! anchor) points at the payload of the *first* key, which holds exactly
//! `max_key_size` bytes:
//!
//! ```text
//! first key payload (max_key_size bytes)
//! +-------------------------------------------+
//! | payload bytes 0 .. max_key_size - 8(k-1)   |
//! |-------------------------------------------|
//! | offset of chunk 2   u64 little-endian     |  each offset is the file offset
//! | ...                                       |  of that chunk's key payload
//! | offset of chunk k   u64 little-endian     |
//! +-------------------------------------------+
//! ```
//!
//! Chunks 2..k carry the rest in order, `min(max_key_size, remaining)` bytes
//! each. The offsets are little-endian (ROOT writes them with the RNTuple
//! serializer, not as TFile big-endian integers). ROOT writes the first key
//! last, so chunk 2 usually precedes it in the file.
//!
//! The number of chunks: `k = ceil(n / max)`; if the `8(k-1)` offset bytes do
//! not fit in the slack `k * max - n` of the last chunk, one more chunk is
//! needed (`k + 1`, with `8k` offset bytes). The offsets must fit in one key.

use rntuple_format::{Error, Location, Result};

use crate::constants::CHUNK_OFFSET_LEN;

/// How a payload of `nbytes` bytes is split over keys of at most `max_key_size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    /// Total number of keys (at least 2).
    pub n_chunks: u64,
    /// Payload bytes carried by the first key (before the chunk offsets).
    pub first_chunk_len: u64,
    /// Bytes of chunk offsets at the end of the first key: `8 * (n_chunks - 1)`.
    pub offsets_len: u64,
}

impl ChunkLayout {
    /// The layout ROOT uses for `nbytes` bytes, or `None` when the payload fits
    /// in one key. A `max_key_size` of 0 means "no limit": uproot 5.7 writes
    /// 0 into its anchors and stores every payload in one key. Fails when
    /// `max_key_size` is too small for the offsets.
    pub fn compute(nbytes: u64, max_key_size: u64, location: &Location) -> Result<Option<Self>> {
        if max_key_size == 0 || nbytes <= max_key_size {
            return Ok(None);
        }
        let mut n_chunks = nbytes.div_ceil(max_key_size);
        let tail = nbytes % max_key_size;
        let slack = if tail > 0 { max_key_size - tail } else { 0 };
        // n_chunks <= nbytes, so this cannot overflow for any real payload size;
        // saturate anyway so that hostile sizes fail the check below.
        let mut offsets_len = (n_chunks - 1).saturating_mul(CHUNK_OFFSET_LEN);
        if offsets_len > slack {
            n_chunks += 1;
            offsets_len = offsets_len.saturating_add(CHUNK_OFFSET_LEN);
        }
        if offsets_len > max_key_size {
            return Err(Error::out_of_spec(
                format!(
                    "payload of {nbytes} bytes needs {n_chunks} keys, whose {offsets_len} bytes of chunk offsets \
                     do not fit in one key of max key size {max_key_size}"
                ),
                location.clone(),
            ));
        }
        Ok(Some(Self { n_chunks, first_chunk_len: max_key_size - offsets_len, offsets_len }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(n: u64, max: u64) -> Option<ChunkLayout> {
        ChunkLayout::compute(n, max, &Location::default()).unwrap()
    }

    /// Checks that a layout carries exactly `n` bytes: the first chunk plus
    /// `n_chunks - 1` chunks of `min(max, remaining)` with the last one non-empty.
    fn carries_exactly(n: u64, max: u64, l: ChunkLayout) -> bool {
        let mut remaining = n - l.first_chunk_len;
        for _ in 1..l.n_chunks {
            if remaining == 0 {
                return false;
            }
            remaining -= remaining.min(max);
        }
        remaining == 0
    }

    #[test]
    fn single_key_when_it_fits() {
        assert_eq!(layout(100, 100), None);
        assert_eq!(layout(0, 1), None);
    }

    #[test]
    fn worked_examples() {
        // 250 bytes in keys of 100: 3 chunks, 16 offset bytes fit in the 50 slack.
        assert_eq!(layout(250, 100), Some(ChunkLayout { n_chunks: 3, first_chunk_len: 84, offsets_len: 16 }));
        // 200 bytes in keys of 100: no slack, so a third chunk.
        assert_eq!(layout(200, 100), Some(ChunkLayout { n_chunks: 3, first_chunk_len: 84, offsets_len: 16 }));
        // 195 bytes: 5 bytes of slack < 8, so a third chunk.
        assert_eq!(layout(195, 100), Some(ChunkLayout { n_chunks: 3, first_chunk_len: 84, offsets_len: 16 }));
        // 192 bytes: 8 bytes of slack hold the one offset.
        assert_eq!(layout(192, 100), Some(ChunkLayout { n_chunks: 2, first_chunk_len: 92, offsets_len: 8 }));
    }

    #[test]
    fn every_layout_carries_its_payload_exactly() {
        for max in [8, 9, 16, 17, 64, 100, 1000] {
            for n in max + 1..max * 12 {
                match ChunkLayout::compute(n, max, &Location::default()) {
                    Ok(Some(l)) => assert!(carries_exactly(n, max, l), "n={n} max={max} {l:?}"),
                    Ok(None) => panic!("n={n} > max={max} must split"),
                    Err(_) => assert!((n.div_ceil(max)) * 8 > max, "n={n} max={max} should fit"),
                }
            }
        }
    }

    #[test]
    fn zero_means_unsplit_and_tiny_max_key_size_is_rejected() {
        assert!(ChunkLayout::compute(10, 0, &Location::default()).unwrap().is_none());
        assert!(ChunkLayout::compute(1000, 1, &Location::default()).is_err());
        assert!(ChunkLayout::compute(u64::MAX, 8, &Location::default()).is_err());
        assert!(ChunkLayout::compute(u64::MAX, u64::MAX - 1, &Location::default()).is_ok());
    }
}
