//! Where the bytes come from: the [`ReadAt`] trait and its local backends.
//!
//! Every backend answers positional reads; none keeps a cursor, so one storage
//! can serve many threads at once.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rntuple_format::{Error, Location, Result};

/// Positional, thread-safe reads from a file-like store.
pub trait ReadAt: Send + Sync + std::fmt::Debug {
    /// Total size in bytes.
    fn size(&self) -> Result<u64>;

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`. Reading past
    /// the end is an [`Error::Truncated`] naming the offset.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

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
                let mut buf = vec![0u8; len];
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

/// Checks `ranges` against a store of `size` bytes and an output of
/// `out_len` bytes that must hold them one after the other.
fn check_ranges_into(ranges: &[(u64, usize)], size: u64, out_len: usize) -> Result<()> {
    let mut total = 0usize;
    for &(offset, len) in ranges {
        check_range(offset, len as u64, size, "vectored read")?;
        total = total.saturating_add(len);
    }
    if total != out_len {
        return Err(Error::InvalidArgument {
            message: format!("vectored read of {total} bytes into a buffer of {out_len} bytes"),
        });
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

/// A file on the local file system, read with `pread`.
#[derive(Debug)]
pub struct LocalFile {
    file: File,
    path: PathBuf,
    size: u64,
}

impl LocalFile {
    /// Opens `path` for reading. A missing file is an [`Error::Io`] whose source
    /// keeps [`std::io::ErrorKind::NotFound`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        let size = file.metadata().map_err(|e| Error::io(format!("reading the size of {}", path.display()), e))?.len();
        Ok(Self { file, path, size })
    }

    /// The path this file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl ReadAt for LocalFile {
    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.size, "read")?;
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                // The file shrank after it was opened.
                Error::Truncated {
                    needed: offset.saturating_add(buf.len() as u64),
                    available: self.size,
                    location: Location::new(format!("reading {}", self.path.display()), Some(offset)),
                }
            } else {
                Error::io(format!("{} at byte offset {offset}", self.path.display()), e)
            }
        })
    }
}

/// Bytes held in memory; for tests, fuzzing and small embedded files.
#[derive(Debug, Clone, Default)]
pub struct MemoryStorage {
    data: Vec<u8>,
}

impl MemoryStorage {
    pub fn new(data: Vec<u8>) -> Self {
        Self { data }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.data
    }
}

impl From<Vec<u8>> for MemoryStorage {
    fn from(data: Vec<u8>) -> Self {
        Self::new(data)
    }
}

impl ReadAt for MemoryStorage {
    fn size(&self) -> Result<u64> {
        Ok(self.data.len() as u64)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.data.len() as u64, "read")?;
        // In range after the check above, which also rules out overflow.
        let start = offset as usize;
        buf.copy_from_slice(&self.data[start..start + buf.len()]);
        Ok(())
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
