//! Shared by the fuzz targets: a byte source that never runs dry, Arrow
//! record batches with hostile shapes and types built from fuzz bytes
//! ([`arrow_gen`]), an in-memory write sink ([`VecSink`]), and the
//! structure-aware rewriting of real files ([`rewrite`]).

pub mod arrow_gen;
pub mod rewrite;

use std::sync::{Arc, Mutex};

use rntuple_container::WriteSink;

/// Reads the fuzz input front to back; past its end every read is 0, so a
/// short input still describes a complete (small) case.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0 }
    }
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            usize::from(self.u16()) % n
        }
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    pub fn exhausted(&self) -> bool {
        self.pos >= self.data.len()
    }
    /// The input not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }
}

/// A file written to memory: the bytes stay readable through the shared
/// handle after the writer that owns the sink is finished.
#[derive(Debug, Clone, Default)]
pub struct VecSink(pub Arc<Mutex<Vec<u8>>>);

impl VecSink {
    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

fn poisoned() -> std::io::Error {
    std::io::Error::other("sink poisoned")
}

impl WriteSink for VecSink {
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.0.lock().map_err(|_| poisoned())?.extend_from_slice(bytes);
        Ok(())
    }
    fn append_zeros(&mut self, len: u64) -> std::io::Result<()> {
        let mut v = self.0.lock().map_err(|_| poisoned())?;
        let n = v.len() + usize::try_from(len).map_err(|_| std::io::Error::other("too long"))?;
        v.resize(n, 0);
        Ok(())
    }
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        let mut v = self.0.lock().map_err(|_| poisoned())?;
        let start = usize::try_from(offset).map_err(|_| std::io::Error::other("offset"))?;
        let dst = v.get_mut(start..start + bytes.len()).ok_or_else(|| std::io::Error::other("past the end"))?;
        dst.copy_from_slice(bytes);
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().map_or(0, |v| v.len() as u64)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn describe(&self) -> String {
        "memory".into()
    }
}
