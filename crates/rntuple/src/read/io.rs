//! Fetching page bytes: the pages a read needs are merged into few large
//! requests, grouped into batches that are fetched one ahead of decoding,
//! and counted ([`IoStats`]).
//!
//! Policy (DESIGN.md "I/O is planned"): pages are visited in read order
//! (cluster by cluster, in file order within a cluster); a page joins the
//! current request when it starts at most the coalescing gap bytes after the
//! request's end and the request stays within the largest request size (the
//! skipped gap bytes are read too). Both come from the storage's
//! [`IoHints`] ([`ReadAt::hints`](rntuple_container::ReadAt::hints): for a
//! local file [`MAX_GAP`] and [`MAX_REQUEST`]), overridden by the reader's
//! options ([`crate::ReadOptions::coalesce_gap`],
//! [`crate::ReadOptions::max_request`]). Requests are grouped into batches of at
//! most [`BATCH_BYTES`] or the largest request size, whichever is larger (or
//! one request, if larger still): a store whose hints ask for requests as
//! large as a cluster (XRootD, as ROOT reads a cluster in one vectored read)
//! gets batches that large too. Each batch is fetched with one
//! vectored call
//! ([`ReadAt::read_ranges_into`](rntuple_container::ReadAt::read_ranges_into))
//! into a buffer that is reused batch after batch. A page stored over several
//! keys (larger than the anchor's maximum key size) is a request of its own.
//!
//! One read plans every cluster of its entry range at once, so batches
//! run across cluster boundaries: while the pages of one cluster are
//! decoded, the next cluster's are already being fetched. At most two
//! batches (one decoding, one in flight) are held at a time.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rntuple_container::{IoHints, RootFile};
use rntuple_format::{Error, Location, Result};

/// Largest gap between two pages that one request reads through, on a
/// local file ([`IoHints::LOCAL`]).
pub const MAX_GAP: u64 = IoHints::LOCAL.coalesce_gap;
/// Largest single request on a local file ([`IoHints::LOCAL`]; a bigger page
/// is one request of its own).
pub const MAX_REQUEST: u64 = IoHints::LOCAL.max_request;
/// Bytes fetched per batch: decoding one batch overlaps fetching the next,
/// and two batch buffers are reused, so at most two batches of compressed
/// bytes are held at a time.
pub const BATCH_BYTES: u64 = 8 << 20;

/// I/O figures of the reads of one RNTuple since it was opened (or since
/// [`RNTuple::reset_io_stats`](crate::RNTuple::reset_io_stats)). Clones of
/// an [`RNTuple`](crate::RNTuple) share them. Metadata (anchor, envelopes)
/// read when opening is not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Requests sent to the storage: one per merged byte range, plus one per
    /// key of a page stored over several keys.
    pub requests: u64,
    /// Vectored calls (batches of requests) made.
    pub vectored_calls: u64,
    /// Bytes read from the storage, gaps included.
    pub bytes_read: u64,
    /// Bytes of the pages that were needed (compressed, with checksums;
    /// a page shared by several page locators counts once per batch).
    pub bytes_needed: u64,
    /// Pages decoded (a page needed by two fields counts twice).
    pub pages: u64,
    /// Wall time spent in reads, in nanoseconds.
    pub read_nanos: u64,
}

/// Shared, thread-safe counters behind [`IoStats`].
#[derive(Debug, Default)]
pub(crate) struct IoCounters {
    requests: AtomicU64,
    vectored_calls: AtomicU64,
    bytes_read: AtomicU64,
    bytes_needed: AtomicU64,
    pages: AtomicU64,
    read_nanos: AtomicU64,
}

impl IoCounters {
    pub(crate) fn snapshot(&self) -> IoStats {
        IoStats {
            requests: self.requests.load(Ordering::Relaxed),
            vectored_calls: self.vectored_calls.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bytes_needed: self.bytes_needed.load(Ordering::Relaxed),
            pages: self.pages.load(Ordering::Relaxed),
            read_nanos: self.read_nanos.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn reset(&self) {
        let all =
            [&self.requests, &self.vectored_calls, &self.bytes_read, &self.bytes_needed, &self.pages, &self.read_nanos];
        for c in all {
            c.store(0, Ordering::Relaxed);
        }
    }

    pub(crate) fn add_pages(&self, n: u64) {
        self.pages.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_read_time(&self, time: std::time::Duration) {
        self.read_nanos.fetch_add(u64::try_from(time.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// The stored bytes of a page: its locator's range plus the 8-byte checksum
/// that follows it when present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Extent {
    pub offset: u64,
    pub len: u64,
}

impl Extent {
    fn end(&self) -> u64 {
        self.offset.saturating_add(self.len)
    }
}

/// One request of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Request {
    /// A plain byte range, stored at `at` in the batch buffer.
    Range { offset: u64, len: u64, at: u64 },
    /// A payload stored over several keys, reassembled by the container
    /// into answer `index` of the batch's split payloads.
    Split { offset: u64, len: u64, index: usize },
}

/// Where an extent's bytes are once its batch is fetched: from `start` of
/// the answer to request `request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    pub batch: usize,
    pub request: usize,
    pub start: usize,
}

/// Requests of one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Batch {
    pub requests: Vec<Request>,
    /// Bytes of the distinct extents it serves.
    pub needed: u64,
    /// Bytes of its range requests (the size of its buffer).
    pub range_bytes: u64,
}

impl Batch {
    /// Lays the range requests out one after the other in the buffer.
    fn seal(&mut self) {
        let (mut at, mut index) = (0u64, 0usize);
        for r in &mut self.requests {
            match r {
                Request::Range { len, at: pos, .. } => {
                    *pos = at;
                    at += *len;
                }
                Request::Split { index: i, .. } => {
                    *i = index;
                    index += 1;
                }
            }
        }
        self.range_bytes = at;
    }
}

/// The answers to a batch's requests: the range requests in one buffer, the
/// split payloads apart.
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    pub buf: Vec<u8>,
    pub split: Vec<Vec<u8>>,
}

impl Fetched {
    /// Empty answers with a buffer for batches of up to `bytes` range bytes.
    pub(crate) fn with_capacity(bytes: u64) -> Result<Self> {
        // Fresh zeroed memory, mapped lazily (the reads write every byte);
        // fallibly, as the sizes come from the file.
        let buf = rntuple_format::alloc::try_zeroed(batch_len(bytes)?, || format!("a read buffer of {bytes} bytes"))?;
        Ok(Fetched { buf, split: Vec::new() })
    }

    /// `len` bytes of an extent placed at `p` in `batch`.
    pub(crate) fn bytes(&self, batch: &Batch, p: Placement, len: u64) -> Option<&[u8]> {
        let (answer, start) = match *batch.requests.get(p.request)? {
            Request::Range { at, .. } => (&self.buf[..batch.range_bytes as usize], at as usize + p.start),
            Request::Split { index, .. } => (self.split.get(index)?.as_slice(), p.start),
        };
        answer.get(start..start.checked_add(len as usize)?)
    }
}

/// Merges `extents` (visited in the given order; duplicates are read once)
/// into batches of requests shaped by `hints` (gap and largest request).
/// Returns the batches and where each distinct extent ends up.
pub(crate) fn plan_requests(
    file: &RootFile,
    max_key_size: u64,
    hints: &IoHints,
    extents: impl IntoIterator<Item = Extent>,
) -> Result<(Vec<Batch>, HashMap<Extent, Placement>)> {
    let mut batches: Vec<Batch> = Vec::new();
    let mut placed: HashMap<Extent, Placement> = HashMap::new();
    let mut current = Batch::default();
    // Bytes of the requests of `current`.
    let mut bytes = 0u64;
    let batch_limit = BATCH_BYTES.max(hints.max_request);
    // The open range request: (offset, end, index in `current.requests`).
    let mut open: Option<(u64, u64, usize)> = None;
    // Extents of the current batch: (extent, request, start in request).
    let mut pending: Vec<(Extent, usize, usize)> = Vec::new();

    let close = |current: &mut Batch,
                 batches: &mut Vec<Batch>,
                 pending: &mut Vec<(Extent, usize, usize)>,
                 placed: &mut HashMap<Extent, Placement>| {
        let batch = batches.len();
        for (e, request, start) in pending.drain(..) {
            placed.insert(e, Placement { batch, request, start });
        }
        let mut b = std::mem::take(current);
        b.seal();
        batches.push(b);
    };

    for e in extents {
        if placed.contains_key(&e) || pending.iter().any(|p| p.0 == e) {
            continue;
        }
        let split = file.payload_is_split(e.offset, e.len, max_key_size)?;
        if let (false, Some((start, end, index))) = (split, open) {
            let new_end = e.end().max(end);
            let joins = e.offset >= start
                && e.offset <= end.saturating_add(hints.coalesce_gap)
                && new_end - start <= hints.max_request
                && bytes + (new_end - end) <= batch_limit;
            if joins {
                bytes += new_end - end;
                if let Request::Range { len, .. } = &mut current.requests[index] {
                    *len = new_end - start;
                }
                open = Some((start, new_end, index));
                pending.push((e, index, (e.offset - start) as usize));
                current.needed += e.len;
                continue;
            }
        }
        // A new request, in this batch or the next.
        if !current.requests.is_empty() && bytes.saturating_add(e.len) > batch_limit {
            close(&mut current, &mut batches, &mut pending, &mut placed);
            bytes = 0;
        }
        bytes = bytes.saturating_add(e.len);
        let index = current.requests.len();
        if split {
            current.requests.push(Request::Split { offset: e.offset, len: e.len, index: 0 });
            open = None;
        } else {
            current.requests.push(Request::Range { offset: e.offset, len: e.len, at: 0 });
            open = Some((e.offset, e.end(), index));
        }
        pending.push((e, index, 0));
        current.needed += e.len;
    }
    if !current.requests.is_empty() {
        close(&mut current, &mut batches, &mut pending, &mut placed);
    }
    Ok((batches, placed))
}

/// The buffer length of a batch of `bytes` range bytes.
fn batch_len(bytes: u64) -> Result<usize> {
    usize::try_from(bytes).map_err(|_| Error::WouldOverAllocate {
        requested: bytes,
        limit: usize::MAX as u64,
        location: Location::new("page batch", None),
    })
}

/// Fetches the requests of a batch into `into` (whose buffer is reused):
/// the ranges in one vectored call, split payloads one by one.
pub(crate) fn fetch(
    file: &RootFile,
    max_key_size: u64,
    batch: &Batch,
    counters: &IoCounters,
    into: &mut Fetched,
) -> Result<()> {
    let ranges: Vec<(u64, usize)> = batch
        .requests
        .iter()
        .filter_map(|r| match *r {
            Request::Range { offset, len, .. } => Some((offset, len as usize)),
            Request::Split { .. } => None,
        })
        .collect();
    let total = batch_len(batch.range_bytes)?;
    if into.buf.len() < total {
        *into = Fetched::with_capacity(batch.range_bytes)?;
    }
    let mut requests = ranges.len() as u64;
    let mut bytes = batch.range_bytes;
    if !ranges.is_empty() {
        file.storage().read_ranges_into(&ranges, &mut into.buf[..total])?;
    }
    into.split.clear();
    for r in &batch.requests {
        if let Request::Split { offset, len, .. } = *r {
            into.split.push(file.read_payload(offset, len, max_key_size)?);
            requests += len.div_ceil(max_key_size.max(1));
            bytes += len;
        }
    }
    counters.requests.fetch_add(requests, Ordering::Relaxed);
    counters.vectored_calls.fetch_add(u64::from(!ranges.is_empty()), Ordering::Relaxed);
    counters.bytes_read.fetch_add(bytes, Ordering::Relaxed);
    counters.bytes_needed.fetch_add(batch.needed, Ordering::Relaxed);
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A real file's bytes followed by zeros up to `size` bytes (nothing is
    /// allocated for the zeros).
    #[derive(Debug)]
    struct Padded {
        head: Vec<u8>,
        size: u64,
    }

    impl rntuple_container::ReadAt for Padded {
        fn size(&self) -> Result<u64> {
            Ok(self.size)
        }
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            for (i, b) in buf.iter_mut().enumerate() {
                *b = self.head.get(offset as usize + i).copied().unwrap_or(0);
            }
            Ok(())
        }
    }

    fn file(size: u64) -> RootFile {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/test_int_float_rntuple_v1-0-0-0.root");
        let head = std::fs::read(path).unwrap();
        RootFile::from_storage(Arc::new(Padded { head, size })).unwrap()
    }

    fn e(offset: u64, len: u64) -> Extent {
        Extent { offset, len }
    }

    #[test]
    fn neighbours_merge_gaps_up_to_the_limit() {
        let f = file(200 << 20);
        let big = u64::MAX >> 1;
        let (batches, placed) = plan_requests(
            &f,
            big,
            &IoHints::LOCAL,
            [e(1000, 100), e(1100, 50), e(1150 + MAX_GAP, 10), e(1160 + 2 * MAX_GAP + 1, 10), e(1000, 100)],
        )
        .unwrap();
        assert_eq!(batches.len(), 1);
        assert_eq!(
            batches[0].requests,
            [
                Request::Range { offset: 1000, len: 150 + MAX_GAP + 10, at: 0 },
                Request::Range { offset: 1160 + 2 * MAX_GAP + 1, len: 10, at: 150 + MAX_GAP + 10 }
            ]
        );
        assert_eq!(batches[0].range_bytes, 170 + MAX_GAP);
        assert_eq!(batches[0].needed, 170);
        assert_eq!(placed[&e(1100, 50)], Placement { batch: 0, request: 0, start: 100 });
        assert_eq!(placed[&e(1150 + MAX_GAP, 10)], Placement { batch: 0, request: 0, start: (150 + MAX_GAP) as usize });
        assert_eq!(placed[&e(1160 + 2 * MAX_GAP + 1, 10)].request, 1);
    }

    #[test]
    fn requests_and_batches_are_bounded() {
        let f = file(200 << 20);
        let page = 1 << 20;
        let extents: Vec<Extent> = (0..100).map(|i| e(1000 + i * page, page)).collect();
        let (batches, placed) = plan_requests(&f, u64::MAX >> 1, &IoHints::LOCAL, extents.clone()).unwrap();
        for b in &batches {
            assert!(b.range_bytes <= BATCH_BYTES, "{}", b.range_bytes);
            for r in &b.requests {
                assert!(matches!(r, Request::Range { len, .. } if *len <= MAX_REQUEST));
            }
        }
        assert_eq!(batches.len() as u64, (100 * page).div_ceil(BATCH_BYTES));
        assert_eq!(batches.iter().map(|b| b.requests.len() as u64).sum::<u64>(), (100 * page).div_ceil(MAX_REQUEST));
        // Every page is placed inside its request.
        for x in extents {
            let p = placed[&x];
            let Request::Range { offset, len, .. } = batches[p.batch].requests[p.request] else { panic!() };
            assert_eq!(offset + p.start as u64, x.offset);
            assert!(p.start as u64 + x.len <= len);
        }
    }

    #[test]
    fn backwards_and_overlapping_extents() {
        let f = file(1 << 20);
        let (batches, placed) =
            plan_requests(&f, u64::MAX >> 1, &IoHints::LOCAL, [e(5000, 100), e(4000, 100), e(5050, 100)]).unwrap();
        // 4000 lies before the open request: a new one; 5050 overlaps neither open request's end... it starts
        // after 4100 within the gap, so it extends the second request.
        assert_eq!(
            batches[0].requests,
            [Request::Range { offset: 5000, len: 100, at: 0 }, Request::Range { offset: 4000, len: 1150, at: 100 }]
        );
        assert_eq!(placed[&e(5050, 100)], Placement { batch: 0, request: 1, start: 1050 });
    }
}
