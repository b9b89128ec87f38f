//! What a backend tells the planner and the I/O report about itself: the
//! identity of the stored object, how requests should be shaped for it, and
//! the requests it actually sent over the wire.

use std::sync::atomic::{AtomicU64, Ordering};

/// What identifies the content of a stored object: its size plus a version
/// tag where the store has one (an HTTP/S3 `ETag`, an XRootD or local
/// modification time). A cache keys on it, so that a changed remote file is
/// never served stale.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Identity {
    /// Size in bytes.
    pub size: u64,
    /// ETag or modification time, when the store gives one.
    pub version: Option<String>,
}

/// How the read planner shapes requests for a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoHints {
    /// Largest gap between two needed ranges that one request reads through
    /// (reading the gap is cheaper than another request).
    pub coalesce_gap: u64,
    /// Largest single merged request.
    pub max_request: u64,
    /// Requests a backend keeps in flight at once when it answers a vectored
    /// read with several wire requests.
    pub max_in_flight: usize,
}

impl IoHints {
    /// A local file: small gaps, requests of a few MiB, one at a time.
    pub const LOCAL: IoHints = IoHints { coalesce_gap: 64 << 10, max_request: 8 << 20, max_in_flight: 1 };
}

/// Wire-level figures of a backend (what crossed the network), as opposed to
/// the planner's logical requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransportStats {
    /// Requests of one byte range.
    pub single_requests: u64,
    /// Requests of several byte ranges at once (XRootD `kXR_readv`, HTTP
    /// `multipart/byteranges`).
    pub vectored_requests: u64,
    /// Byte ranges asked for inside vectored requests.
    pub sub_ranges: u64,
    /// Payload bytes received.
    pub bytes_transferred: u64,
    /// Requests sent again after a transient failure.
    pub retries: u64,
    /// Byte ranges answered from a local cache instead of the store.
    pub cache_hits: u64,
    /// Bytes answered from a local cache.
    pub cache_bytes: u64,
}

/// Thread-safe counters behind [`TransportStats`], kept by a backend.
#[derive(Debug, Default)]
pub struct TransportCounters {
    single_requests: AtomicU64,
    vectored_requests: AtomicU64,
    sub_ranges: AtomicU64,
    bytes_transferred: AtomicU64,
    retries: AtomicU64,
    cache_hits: AtomicU64,
    cache_bytes: AtomicU64,
}

impl TransportCounters {
    /// Counts one request of one range that brought `bytes`.
    pub fn single(&self, bytes: u64) {
        self.single_requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_transferred.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts one vectored request of `ranges` ranges that brought `bytes`.
    pub fn vectored(&self, ranges: u64, bytes: u64) {
        self.vectored_requests.fetch_add(1, Ordering::Relaxed);
        self.sub_ranges.fetch_add(ranges, Ordering::Relaxed);
        self.bytes_transferred.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts one retry.
    pub fn retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one range of `bytes` answered from a cache.
    pub fn cache_hit(&self, bytes: u64) {
        self.cache_hits.fetch_add(1, Ordering::Relaxed);
        self.cache_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The figures so far.
    pub fn snapshot(&self) -> TransportStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TransportStats {
            single_requests: get(&self.single_requests),
            vectored_requests: get(&self.vectored_requests),
            sub_ranges: get(&self.sub_ranges),
            bytes_transferred: get(&self.bytes_transferred),
            retries: get(&self.retries),
            cache_hits: get(&self.cache_hits),
            cache_bytes: get(&self.cache_bytes),
        }
    }
}
