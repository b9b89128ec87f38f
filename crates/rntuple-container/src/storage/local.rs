//! Local files: [`LocalFile`] reads with `pread`, [`LocalSink`] writes
//! through a buffer.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rntuple_format::{Error, Location, Result};

use super::{check_range, ReadAt, WriteSink};

/// Size of a [`LocalSink`]'s write buffer.
const BUFFER_SIZE: usize = 1 << 20;

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
                Error::io(format!("reading {} at byte offset {offset}", self.path.display()), e)
            }
        })
    }
}

/// A new local file written through a 1 MiB buffer: appends are buffered,
/// [`WriteSink::write_at`] flushes and writes in place (`pwrite`),
/// [`WriteSink::append_zeros`] seeks past the zeros (a hole where the file
/// system allows it; something must be appended after it for the file to
/// grow), [`WriteSink::sync`] is `fsync`.
#[derive(Debug)]
pub struct LocalSink {
    out: BufWriter<File>,
    path: PathBuf,
    len: u64,
}

impl LocalSink {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| Error::io(format!("{} (creating it)", path.display()), e))?;
        Ok(Self { out: BufWriter::with_capacity(BUFFER_SIZE, file), path, len: 0 })
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl WriteSink for LocalSink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    fn append_zeros(&mut self, len: u64) -> std::io::Result<()> {
        let end = self.len.checked_add(len).ok_or_else(|| std::io::Error::other("file offset overflows"))?;
        // BufWriter flushes before it seeks.
        self.out.seek(SeekFrom::Start(end))?;
        self.len = end;
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        super::sink::check_rewrite(offset, bytes.len(), self.len)?;
        self.out.flush()?;
        self.out.get_ref().write_all_at(bytes, offset)
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.out.flush()?;
        self.out.get_ref().sync_all()
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}
