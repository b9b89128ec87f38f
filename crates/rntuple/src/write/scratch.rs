//! An anonymous scratch file: the sealed pages of the open cluster wait
//! there until the cluster is committed.
//!
//! Created in the directory of the output file when it is local (its own
//! storage; a `tmpfs` `$TMPDIR` would hold the pages in memory after all),
//! else in `$TMPDIR`; under a name no one else uses, and unlinked at once
//! where the system allows it (Unix), so that nothing is left behind even
//! if the process dies. Elsewhere it is deleted when dropped (on error too).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Scratch files made by this process, for unique names.
static MADE: AtomicU64 = AtomicU64::new(0);

#[derive(Debug)]
pub(crate) struct Scratch {
    file: File,
    /// Where the file is, when it could not be unlinked while open.
    path: Option<PathBuf>,
    /// Bytes written since the last [`Scratch::reset`].
    len: u64,
}

impl Scratch {
    /// Creates a scratch file in `dir`, or in `$TMPDIR` when that fails.
    pub fn create(dir: Option<&Path>) -> std::io::Result<Self> {
        let tmp = std::env::temp_dir();
        match dir {
            Some(d) => Self::create_in(d).or_else(|_| Self::create_in(&tmp)),
            None => Self::create_in(&tmp),
        }
    }

    fn create_in(dir: &Path) -> std::io::Result<Self> {
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".rntuple-scratch-{}-{n}", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        // Unix unlinks an open file; Windows refuses: delete it on drop.
        let path = std::fs::remove_file(&path).err().map(|_| path);
        Ok(Scratch { file, path, len: 0 })
    }

    /// Bytes written since the last reset: the offset of the next.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends `bytes`.
    pub fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        write_all_at(&self.file, bytes, self.len)?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Fills `buf` from offset `at`.
    pub fn read_at(&self, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
        if at + buf.len() as u64 > self.len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("bytes {at}..{} of a scratch file of {} bytes", at + buf.len() as u64, self.len),
            ));
        }
        read_exact_at(&self.file, buf, at)
    }

    /// Starts over: the next byte goes to offset 0 (the file keeps its
    /// blocks, to be overwritten).
    pub fn reset(&mut self) {
        self.len = 0;
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(unix)]
fn write_all_at(f: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(f, bytes, at)
}

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
fn write_all_at(mut f: &File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    f.seek(SeekFrom::Start(at))?;
    f.write_all(bytes)
}

#[cfg(not(unix))]
fn read_exact_at(mut f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_file_is_anonymous_and_reusable() {
        let dir = std::env::temp_dir().join(format!("rntuple-scratch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = Scratch::create(Some(&dir)).unwrap();
        s.append(b"hello").unwrap();
        s.append(b" world").unwrap();
        let mut buf = [0u8; 5];
        s.read_at(6, &mut buf).unwrap();
        assert_eq!(&buf, b"world");
        assert!(s.read_at(7, &mut buf).is_err(), "past what was written");
        #[cfg(unix)]
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "unlinked while open");
        s.reset();
        s.append(b"HE").unwrap();
        s.read_at(0, &mut buf[..2]).unwrap();
        assert_eq!(&buf[..2], b"HE");
        drop(s);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        // A directory that cannot hold it: $TMPDIR.
        assert!(Scratch::create(Some(&dir.join("missing"))).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
