//! Where the bytes live: the storage seams of the container.
//!
//! * Reading: the [`ReadAt`] trait, positional and thread-safe (no cursor, so
//!   one storage serves many threads at once), with vectored reads that a
//!   backend may coalesce. Backends: [`LocalFile`] (`pread`) and
//!   [`MemoryStorage`].
//! * Writing: the [`WriteSink`] trait, an append-mostly sink that may rewrite
//!   the first bytes of the file (its header) once at the end. Backends:
//!   [`LocalSink`] (a buffered local file) and [`MemorySink`].
//!   [`crate::FileWriter`] writes through it, so a crash-safe or remote sink
//!   plugs in without touching the ROOT layout code.
//! * Locations: [`open_storage`] takes a local path or a URL. A path or a
//!   `file://` URL opens locally; other schemes go to the backend registered
//!   for them ([`register_backend`]; the built-in remote schemes `root://`,
//!   `xroot://`, `http(s)://` and `s3://` are named in [`url::builtin_backend`],
//!   the one place where their backends will be added).
//!
//! * Caching: [`cache::CachedStorage`] keeps the bytes fetched from a
//!   remote store in a local directory (`RNTUPLE_CACHE_DIR`), exactly the
//!   ranges read; [`open_storage_with`] puts it in front of remote URLs.
//!
//! The planner above does not care which backend answers: it knows every
//! byte range before it asks (DESIGN.md, "Remote storage").

pub mod cache;
#[doc(hidden)]
pub mod fuzzing;
mod hints;
#[macro_use]
pub mod http;
mod local;
mod memory;
mod owner;
pub mod redact;
pub mod s3;
mod sink;
pub mod url;
mod xrootd;

pub use cache::{set_process_cache, CacheConfig, CachedStorage};
pub use hints::{Identity, IoHints, TransportCounters, TransportStats};
pub use http::{DavSink, HttpBackend, HttpFile};
pub use local::{LocalFile, LocalSink};
pub use memory::{MemorySink, MemoryStorage};
pub use redact::{has_credentials, redact_text, redact_url};
pub use s3::{S3Backend, S3File, S3Sink};
pub use sink::WriteSink;
pub use url::{open_storage, open_storage_with, register_backend, Backend, StorageUrl};
pub use xrootd::{XrootdBackend, XrootdFile, XrootdSink, XROOTD_HINTS};

use rntuple_format::{Error, Location, Result};

/// Positional, thread-safe reads from a file-like store.
pub trait ReadAt: Send + Sync + std::fmt::Debug {
    /// Total size in bytes.
    fn size(&self) -> Result<u64>;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`. Reading past
    /// the end is an [`Error::Truncated`] naming the offset.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// What identifies the stored content (size, and a version tag where the
    /// store has one); a cache keys on it. The default is the size alone.
    fn identity(&self) -> Result<Identity> {
        Ok(Identity { size: self.size()?, version: None })
    }

    /// How the planner should shape requests for this store.
    fn hints(&self) -> IoHints {
        IoHints::LOCAL
    }

    /// Wire-level figures, for a backend that keeps them (remote stores).
    fn transport_stats(&self) -> Option<TransportStats> {
        None
    }

    /// Vectored read of `(offset, len)` ranges, answered in order. The default
    /// checks every range against [`ReadAt::size`] before allocating anything,
    /// then reads them one by one; backends may coalesce neighbouring ranges.
    fn read_ranges(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        let size = self.size()?;
        for &(offset, len) in ranges {
            check_range(offset, len as u64, size, "vectored read")?;
        }
        ranges
            .iter()
            .map(|&(offset, len)| {
                let mut buf = rntuple_format::alloc::try_zeroed(len, || format!("{len} bytes at offset {offset}"))?;
                self.read_exact_at(offset, &mut buf)?;
                Ok(buf)
            })
            .collect()
    }

    /// Vectored read into one caller-owned buffer: the `(offset, len)` ranges
    /// are stored one after the other in `out`, whose length must be their
    /// sum (so a reader can reuse one buffer for many batches). The default
    /// checks every range first, then reads them one by one.
    fn read_ranges_into(&self, ranges: &[(u64, usize)], out: &mut [u8]) -> Result<()> {
        check_ranges_into(ranges, self.size()?, out.len())?;
        let mut rest = out;
        for &(offset, len) in ranges {
            let (head, tail) = rest.split_at_mut(len);
            self.read_exact_at(offset, head)?;
            rest = tail;
        }
        Ok(())
    }
}

/// [`ReadAt::read_ranges`] through one [`ReadAt::read_ranges_into`] call (so
/// the ranges go out together), after checking them against `size`.
pub(crate) fn read_ranges_via_into(reader: &dyn ReadAt, size: u64, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
    let total = ranges.iter().map(|r| r.1).fold(0usize, usize::saturating_add);
    check_ranges_into(ranges, size, total)?;
    let mut out = rntuple_format::alloc::try_zeroed(total, || format!("a vectored read of {total} bytes"))?;
    reader.read_ranges_into(ranges, &mut out)?;
    // One range: its buffer is the one read into. Several: each is copied
    // out (fallibly: their sizes come from the file).
    if ranges.len() == 1 {
        return Ok(vec![out]);
    }
    let mut rest = out.as_slice();
    ranges
        .iter()
        .map(|&(offset, len)| {
            let (head, tail) = rest.split_at(len);
            rest = tail;
            rntuple_format::alloc::try_copy(head, || format!("{len} bytes at offset {offset} of a vectored read"))
        })
        .collect()
}

/// Checks `ranges` against a store of `size` bytes and an output of
/// `out_len` bytes that must hold them one after the other.
pub(crate) fn check_ranges_into(ranges: &[(u64, usize)], size: u64, out_len: usize) -> Result<()> {
    let mut total = 0usize;
    for &(offset, len) in ranges {
        check_range(offset, len as u64, size, "vectored read")?;
        total = total.saturating_add(len);
    }
    if total != out_len {
        return Err(Error::invalid(format!("vectored read of {total} bytes into a buffer of {out_len} bytes")));
    }
    Ok(())
}

/// Checks that `offset..offset + len` lies inside a store of `size` bytes.
pub(crate) fn check_range(offset: u64, len: u64, size: u64, what: &str) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(Error::Truncated {
            needed: offset.saturating_add(len),
            available: size,
            location: Location::new(format!("{what} of {len} bytes past the end of the file"), Some(offset)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_and_bounds() {
        let m = MemoryStorage::from((0u8..100).collect::<Vec<_>>());
        let mut buf = [0u8; 4];
        m.read_exact_at(10, &mut buf).unwrap();
        assert_eq!(buf, [10, 11, 12, 13]);
        match m.read_exact_at(98, &mut buf) {
            Err(Error::Truncated { needed: 102, available: 100, location }) => assert_eq!(location.offset, Some(98)),
            other => panic!("unexpected {other:?}"),
        }
        assert!(m.read_exact_at(u64::MAX, &mut buf).is_err());
        let r = m.read_ranges(&[(0, 2), (50, 3)]).unwrap();
        assert_eq!(r, vec![vec![0, 1], vec![50, 51, 52]]);
        // An absurd range is refused before anything is allocated.
        assert!(m.read_ranges(&[(0, 2), (0, usize::MAX)]).is_err());
        let mut out = [0u8; 5];
        m.read_ranges_into(&[(0, 2), (50, 3)], &mut out).unwrap();
        assert_eq!(out, [0, 1, 50, 51, 52]);
        // Ranges that do not fill the buffer exactly, or lie past the end, are refused.
        assert!(m.read_ranges_into(&[(0, 2)], &mut out).is_err());
        assert!(matches!(m.read_ranges_into(&[(98, 5)], &mut out), Err(Error::Truncated { .. })));
    }

    #[test]
    fn missing_local_file_keeps_not_found() {
        let err = LocalFile::open("/nonexistent/definitely/missing.root").unwrap_err();
        match err {
            Error::Io { source, .. } => assert_eq!(source.kind(), std::io::ErrorKind::NotFound),
            other => panic!("unexpected {other:?}"),
        }
    }
}
