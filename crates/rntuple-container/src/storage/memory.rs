//! Bytes in memory: [`MemoryStorage`] to read, [`MemorySink`] to write.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rntuple_format::Result;

use super::{check_range, ReadAt, WriteSink};

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

/// A sink that keeps the file in memory, for tests, for files built to be
/// sent elsewhere, and as the model of a remote sink. Clones share the bytes,
/// so the caller keeps a clone to look at the file after
/// [`crate::FileWriter::finish`] has consumed the writer.
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    data: Arc<Mutex<Vec<u8>>>,
}

impl MemorySink {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of the bytes written so far.
    pub fn bytes(&self) -> Vec<u8> {
        self.lock().clone()
    }

    /// The bytes written so far as a [`MemoryStorage`] to read them back.
    pub fn to_storage(&self) -> MemoryStorage {
        MemoryStorage::new(self.bytes())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<u8>> {
        // A writer that panicked mid-append leaves bytes that are still bytes.
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl WriteSink for MemorySink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.lock().extend_from_slice(bytes);
        Ok(())
    }

    fn append_zeros(&mut self, len: u64) -> std::io::Result<()> {
        let mut data = self.lock();
        let end = usize::try_from(len)
            .ok()
            .and_then(|n| data.len().checked_add(n))
            .ok_or_else(|| std::io::Error::other(format!("{len} zero bytes do not fit in memory")))?;
        let more = end - data.len();
        data.try_reserve(more).map_err(std::io::Error::other)?;
        data.resize(end, 0);
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        let mut data = self.lock();
        super::sink::check_rewrite(offset, bytes.len(), data.len() as u64)?;
        // In range after the check.
        let start = offset as usize;
        data[start..start + bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.lock().len() as u64
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}
