//! Speculative reads on open: the first and the last bytes of a file, in one
//! vectored request, so that opening a remote file costs one round trip for
//! what ROOT keeps at both ends.
//!
//! ROOT lays a file out as (`io/io/src/TFile.cxx`, `tree/ntuple/src/RMiniFile.cxx`):
//!
//! ```text
//! 0        file header, top directory record, (RNTuple header envelope, pages ...)
//! ...      page lists, footer envelope, RNTuple anchor key,
//!          streamer info, key list of the top directory, free segments   <- end
//! ```
//!
//! so the head answers the file header and the top directory record, and
//! the tail usually the key list, the anchor and, for files of modest
//! size, footer and page lists. Whatever is not inside either is read on
//! demand as before, with three more guesses:
//!
//! * a key list read once is kept (listing names, then finding a key,
//!   reads it once);
//! * an RNTuple anchor is read together with the [`SPECULATIVE_BEHIND`]
//!   bytes before it, where ROOT writes the footer and the last page lists
//!   just before the anchor (`RPageSinkFile::CommitDatasetImpl`, then the
//!   anchor key);
//! * when a read must go to the store anyway and the bytes not held yet add
//!   up to at most [`SPECULATIVE_REST`], that one request reads all of them
//!   ([`Speculative::missing`]). Files that other programs updated in place
//!   (ATLAS PHYSLITE: the key list in the middle of the file, anchors at
//!   other places, the footer near the end) otherwise need one round trip
//!   for the key list, one for the anchor and one for the envelopes; with
//!   it, a file of up to head + tail + rest bytes opens in two.
//!
//! Together with the engine reading header, footer and page lists in
//! one vectored request each, opening takes at most two round trips for
//! the files ROOT and we write and for small files of any layout
//! (`crates/rntuple/tests/planned_io.rs` counts them).

use std::sync::{Arc, PoisonError, RwLock};

use rntuple_format::Result;

use crate::storage::ReadAt;

/// Bytes read speculatively from the start of a file.
pub const SPECULATIVE_HEAD: u64 = 64 << 10;
/// Bytes read speculatively from the end of a file.
pub const SPECULATIVE_TAIL: u64 = 256 << 10;

/// Bytes read before an RNTuple anchor together with it.
pub const SPECULATIVE_BEHIND: u64 = 256 << 10;

/// The most bytes not held yet that one read on demand fetches all at once
/// (about what a 1.6 Gbit/s link moves in one 10 ms round trip).
pub const SPECULATIVE_REST: u64 = 2 << 20;

/// Byte ranges of a file read ahead of need, each kept whole.
#[derive(Debug, Default)]
pub(crate) struct Speculative {
    pieces: RwLock<Vec<(u64, Arc<[u8]>)>>,
}

impl Speculative {
    /// Reads the head and the tail of a store of `size` bytes in one
    /// vectored request (one range when they meet).
    pub(crate) fn read(storage: &dyn ReadAt, size: u64) -> Result<Arc<Self>> {
        let head = size.min(SPECULATIVE_HEAD);
        let tail = size.saturating_sub(SPECULATIVE_TAIL).max(head);
        let mut ranges = vec![(0u64, head as usize)];
        if tail < size {
            if tail == head {
                ranges[0].1 = size as usize;
            } else {
                ranges.push((tail, (size - tail) as usize));
            }
        }
        let bufs = storage.read_ranges(&ranges)?;
        let pieces = ranges.iter().map(|r| r.0).zip(bufs.into_iter().map(Arc::from)).collect();
        Ok(Arc::new(Self { pieces: RwLock::new(pieces) }))
    }

    /// Keeps `bytes`, read at `offset`, for later reads.
    pub(crate) fn keep(&self, offset: u64, bytes: &[u8]) {
        self.pieces.write().unwrap_or_else(PoisonError::into_inner).push((offset, Arc::from(bytes)));
    }

    /// The bytes `offset..offset + len` when the pieces held cover them all
    /// (one piece, or several that meet or overlap).
    pub(crate) fn get(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let end = offset.checked_add(len)?;
        let pieces = self.pieces.read().unwrap_or_else(PoisonError::into_inner);
        // (A size the allocator refuses: not held; the caller reads it, fallibly.)
        let mut out = rntuple_format::alloc::try_with_capacity(usize::try_from(len).ok()?, String::new).ok()?;
        let mut at = offset;
        while at < end {
            // The piece holding `at` that reaches furthest.
            let (start, bytes) = pieces
                .iter()
                .filter(|(start, bytes)| *start <= at && at < start.saturating_add(bytes.len() as u64))
                .max_by_key(|(start, bytes)| start.saturating_add(bytes.len() as u64))?;
            let from = usize::try_from(at - start).ok()?;
            let to = usize::try_from(end.min(start.saturating_add(bytes.len() as u64)) - start).ok()?;
            out.extend_from_slice(bytes.get(from..to)?);
            at += (to - from) as u64;
        }
        Some(out)
    }

    /// The ranges of `0..size` that no piece holds, in file order.
    pub(crate) fn missing(&self, size: u64) -> Vec<(u64, u64)> {
        let pieces = self.pieces.read().unwrap_or_else(PoisonError::into_inner);
        let mut held: Vec<(u64, u64)> =
            pieces.iter().map(|(start, bytes)| (*start, start.saturating_add(bytes.len() as u64))).collect();
        held.sort_unstable();
        let mut gaps = Vec::new();
        let mut at = 0u64;
        for (start, end) in held {
            if start > at {
                gaps.push((at, start.min(size) - at));
            }
            at = at.max(end);
            if at >= size {
                break;
            }
        }
        if at < size {
            gaps.push((at, size - at));
        }
        gaps.retain(|g| g.1 > 0);
        gaps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    #[test]
    fn head_and_tail_answer_what_they_hold() {
        let size = SPECULATIVE_HEAD + SPECULATIVE_TAIL + 1000;
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let s = Speculative::read(&MemoryStorage::from(data.clone()), size).unwrap();
        assert_eq!(s.pieces.read().unwrap().len(), 2);
        assert_eq!(s.get(10, 5).unwrap(), &data[10..15]);
        assert_eq!(s.get(size - 8, 8).unwrap(), &data[(size - 8) as usize..]);
        s.keep(SPECULATIVE_HEAD + 10, &data[(SPECULATIVE_HEAD + 10) as usize..][..4]);
        assert_eq!(s.get(SPECULATIVE_HEAD + 10, 4).unwrap(), &data[(SPECULATIVE_HEAD + 10) as usize..][..4]);
        // Across the end of the head, in the hole, past the end: not held.
        assert!(s.get(SPECULATIVE_HEAD - 2, 4).is_none());
        assert_eq!(s.missing(size), [(SPECULATIVE_HEAD, 10), (SPECULATIVE_HEAD + 14, 1000 - 14)]);
        assert!(s.get(SPECULATIVE_HEAD + 20, 4).is_none());
        assert!(s.get(size - 2, 4).is_none());
        // A small file is one piece, read whole.
        let small = Speculative::read(&MemoryStorage::from(data[..100_000].to_vec()), 100_000).unwrap();
        assert_eq!(small.pieces.read().unwrap().len(), 1);
        assert_eq!(small.get(99_990, 10).unwrap(), &data[99_990..100_000]);
        assert!(small.missing(100_000).is_empty());
    }

    #[test]
    fn pieces_that_meet_or_overlap_answer_together() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let s = Speculative::default();
        s.keep(100, &data[100..300]);
        s.keep(300, &data[300..400]);
        s.keep(350, &data[350..600]);
        assert_eq!(s.get(150, 400).unwrap(), &data[150..550]);
        assert_eq!(s.get(100, 500).unwrap(), &data[100..600]);
        assert!(s.get(99, 10).is_none() && s.get(590, 20).is_none());
        assert_eq!(s.missing(1000), [(0, 100), (600, 400)]);
        assert_eq!(s.missing(500), [(0, 100)]);
    }
}
