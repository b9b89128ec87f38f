//! A bounds-checked big-endian cursor over a byte slice.
//!
//! ROOT's own records (file header, keys, directories, the anchor) are
//! big-endian. Every read names what was being parsed and the absolute file
//! offset where the data ran out.

use rntuple_format::{Error, Location, Result};

use crate::constants::TSTRING_LONG_MARKER;

#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute file offset of `buf[0]`.
    base: u64,
    what: &'a str,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], base: u64, what: &'a str) -> Self {
        Self { buf, pos: 0, base, what }
    }

    /// Bytes consumed so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Absolute file offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base.saturating_add(self.pos as u64)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn location(&self) -> Location {
        Location::new(self.what, Some(self.offset()))
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error::Truncated {
                needed: n as u64,
                available: self.remaining() as u64,
                location: self.location(),
            });
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    /// A file offset (a "seek" field of ROOT's records): 64-bit in the
    /// `large` form of the record (a class version past ROOT's "big file"
    /// threshold), 32-bit otherwise.
    pub(crate) fn seek(&mut self, large: bool) -> Result<u64> {
        if large {
            self.u64()
        } else {
            self.u32().map(u64::from)
        }
    }

    /// A streamed `TString`: one length byte, or 255 followed by a 4-byte
    /// big-endian length, then the characters. Names that are not UTF-8 are
    /// converted lossily (ROOT strings are bytes).
    pub(crate) fn tstring(&mut self) -> Result<String> {
        let short = self.u8()?;
        let len = if short == TSTRING_LONG_MARKER { self.u32()? as usize } else { short as usize };
        let bytes = self.take(len)?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_tstrings() {
        let mut buf = vec![0x12, 0x34, 0xff, 0xff, 0xff, 0xfe, 3, b'a', b'b', b'c', 255, 0, 0, 0, 2];
        buf.extend_from_slice(b"xy");
        let mut c = Cursor::new(&buf, 100, "test");
        assert_eq!(c.u16().unwrap(), 0x1234);
        assert_eq!(c.i32().unwrap(), -2);
        assert_eq!(c.tstring().unwrap(), "abc");
        assert_eq!(c.tstring().unwrap(), "xy");
        assert_eq!(c.remaining(), 0);
        assert_eq!(c.offset(), 100 + buf.len() as u64);
    }

    #[test]
    fn truncation_reports_offset() {
        let buf = [5u8, b'a'];
        let mut c = Cursor::new(&buf, 1000, "key name");
        match c.tstring() {
            Err(Error::Truncated { needed: 5, available: 1, location }) => {
                assert_eq!(location.offset, Some(1001));
                assert_eq!(location.context, "key name");
            }
            other => panic!("unexpected {other:?}"),
        }
        // A long TString claiming 4 GB in a tiny buffer errors, it does not allocate.
        let buf = [255u8, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(Cursor::new(&buf, 0, "x").tstring(), Err(Error::Truncated { .. })));
    }
}
