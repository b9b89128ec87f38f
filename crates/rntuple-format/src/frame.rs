//! A bounds-checked little-endian cursor and the frames of the spec
//! (RNTuple binary format 1.0, sections "Basic Types" and "Frames").
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                                                               |
//! +                             Size                            +-+
//! |                                                             |T|
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |              Number of Items (for list frames)                |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         FRAME PAYLOAD                         |
//! ```
//!
//! The size is a signed 64-bit integer: positive for a record frame, negative
//! for a list frame; its absolute value counts the preamble too. Readers
//! continue after the stored size, so newer writers may append fields.

use crate::constants::{LIST_FRAME_PREAMBLE_SIZE, RECORD_FRAME_PREAMBLE_SIZE};
use crate::error::{Error, Location, Result};

/// `Reader::u16(what)` and its kin: the next value of each type, little-endian
/// (spec "Basic Types").
macro_rules! little_endian_reads {
    ($($t:ident),*) => {$(
        #[doc = concat!("The next `", stringify!($t), "`, little-endian.")]
        pub fn $t(&mut self, what: &str) -> Result<$t> {
            self.array(what).map($t::from_le_bytes)
        }
    )*};
}

/// `Writer::u16(v)` and its kin: appends each value little-endian.
macro_rules! little_endian_writes {
    ($($t:ident),*) => {$(
        #[doc = concat!("Appends a `", stringify!($t), "`, little-endian.")]
        pub fn $t(&mut self, v: $t) {
            self.bytes(&v.to_le_bytes());
        }
    )*};
}

/// A cursor over a byte slice that never reads past its end.
///
/// Every error names `what` was being read, the structure the cursor belongs
/// to (`context`) and the byte offset, counted from the start of the buffer
/// the outermost cursor was created for (e.g. the envelope).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf[0]` in the outermost buffer.
    base: u64,
    context: &'static str,
}

impl<'a> Reader<'a> {
    /// A cursor over `buf`; errors say they happened in `context`.
    pub fn new(buf: &'a [u8], context: &'static str) -> Self {
        Self { buf, pos: 0, base: 0, context }
    }

    /// Offset of the next byte, counted from the start of the outermost buffer.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes.
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// A location at the current offset, for errors.
    pub fn location(&self, what: &str) -> Location {
        Location::new(format!("{}: {}", self.context, what), Some(self.offset()))
    }

    /// An [`Error::OutOfSpec`] at the current offset.
    pub fn out_of_spec(&self, what: &str, message: impl Into<String>) -> Error {
        Error::out_of_spec(message, self.location(what))
    }

    /// An [`Error::Unsupported`] at the current offset.
    pub fn unsupported(&self, what: &str, feature: impl Into<String>) -> Error {
        Error::unsupported(feature, self.location(what))
    }

    fn truncated(&self, what: &str, needed: usize) -> Error {
        Error::Truncated { needed: needed as u64, available: self.remaining() as u64, location: self.location(what) }
    }

    /// Fails unless at least `n` bytes remain.
    pub fn ensure(&self, n: usize, what: &str) -> Result<()> {
        if self.remaining() < n {
            Err(self.truncated(what, n))
        } else {
            Ok(())
        }
    }

    /// Fails unless `count` items of at least `min_item_size` bytes each can fit
    /// in the remaining bytes. Call before allocating for a stored count.
    pub fn ensure_items(&self, count: u64, min_item_size: usize, what: &str) -> Result<()> {
        let need = count.saturating_mul(min_item_size as u64);
        if need > self.remaining() as u64 {
            return Err(Error::WouldOverAllocate {
                requested: need,
                limit: self.remaining() as u64,
                location: self.location(&format!("{what} ({count} items)")),
            });
        }
        Ok(())
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        self.ensure(n, what)?;
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N, what)?);
        Ok(out)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize, what: &str) -> Result<()> {
        self.bytes(n, what).map(|_| ())
    }

    pub fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    little_endian_reads!(u16, u32, i32, u64, i64, f64);

    /// A string: 32-bit byte count, then UTF-8 bytes (spec "Basic Types").
    pub fn string(&mut self, what: &str) -> Result<String> {
        let start = self.clone();
        let len = self.u32(what)? as usize;
        let bytes = self.bytes(len, what)?;
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(start.out_of_spec(what, format!("string is not valid UTF-8: {e}"))),
        }
    }

    /// A cursor over the next `n` bytes; `self` moves past them.
    pub fn sub(&mut self, n: usize, what: &str) -> Result<Reader<'a>> {
        let base = self.offset();
        let buf = self.bytes(n, what)?;
        Ok(Reader { buf, pos: 0, base, context: self.context })
    }

    /// Reads a frame preamble and returns the frame; `self` moves past the
    /// whole frame (its stored size), whatever the caller reads of it.
    pub fn frame(&mut self, what: &str) -> Result<Frame<'a>> {
        let start = self.clone();
        let raw = self.i64(what)?;
        let (kind, size, min) = if raw >= 0 {
            (FrameKind::Record, raw.unsigned_abs(), RECORD_FRAME_PREAMBLE_SIZE)
        } else {
            let n = self.u32(what)?;
            (FrameKind::List(n), raw.unsigned_abs(), LIST_FRAME_PREAMBLE_SIZE)
        };
        if size < min as u64 {
            return Err(start.out_of_spec(what, format!("frame size {size} is smaller than its {min}-byte preamble")));
        }
        if size > start.remaining() as u64 {
            return Err(Error::Truncated {
                needed: size,
                available: start.remaining() as u64,
                location: start.location(&format!("{what} (frame)")),
            });
        }
        let payload = self.sub(size as usize - min, what)?;
        Ok(Frame { kind, payload })
    }

    /// Reads a record frame; a list frame is an error.
    pub fn record_frame(&mut self, what: &str) -> Result<Reader<'a>> {
        let start = self.clone();
        let frame = self.frame(what)?;
        match frame.kind {
            FrameKind::Record => Ok(frame.payload),
            FrameKind::List(_) => Err(start.out_of_spec(what, "expected a record frame, found a list frame")),
        }
    }

    /// Reads a list frame, returning the item count and the payload; checks
    /// that `count` items of at least `min_item_size` bytes fit in the frame.
    pub fn list_frame(&mut self, min_item_size: usize, what: &str) -> Result<(u32, Reader<'a>)> {
        let start = self.clone();
        let frame = self.frame(what)?;
        match frame.kind {
            FrameKind::List(n) => {
                frame.payload.ensure_items(u64::from(n), min_item_size, what)?;
                Ok((n, frame.payload))
            }
            FrameKind::Record => Err(start.out_of_spec(what, "expected a list frame, found a record frame")),
        }
    }
}

/// Record or list, with the item count of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Record,
    List(u32),
}

/// A frame: its kind and a cursor over its payload (after the preamble).
#[derive(Debug, Clone)]
pub struct Frame<'a> {
    pub kind: FrameKind,
    pub payload: Reader<'a>,
}

/// The writing twin of [`Reader`]: appends little-endian values to a buffer
/// and back-patches frame sizes.
#[derive(Debug, Default, Clone)]
pub struct Writer {
    buf: Vec<u8>,
}

/// A frame opened with [`Writer::begin_record`] or [`Writer::begin_list`].
#[derive(Debug, Clone, Copy)]
#[must_use = "a frame must be closed with Writer::end_frame"]
pub struct OpenFrame {
    start: usize,
    list: bool,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.buf.len()
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf
    }
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    little_endian_writes!(u16, u32, i32, u64, i64, f64);
    /// A string (32-bit length, then bytes). Fails beyond 4 GiB.
    pub fn string(&mut self, s: &str) -> Result<()> {
        let len = u32::try_from(s.len())
            .map_err(|_| Error::invalid(format!("string of {} bytes exceeds the 4 GiB limit", s.len())))?;
        self.u32(len);
        self.bytes(s.as_bytes());
        Ok(())
    }
    /// Opens a record frame; close it with [`Writer::end_frame`].
    pub fn begin_record(&mut self) -> OpenFrame {
        let start = self.buf.len();
        self.i64(0);
        OpenFrame { start, list: false }
    }
    /// Opens a list frame of `count` items; close it with [`Writer::end_frame`].
    pub fn begin_list(&mut self, count: usize) -> Result<OpenFrame> {
        let count = u32::try_from(count)
            .map_err(|_| Error::invalid(format!("list of {count} items exceeds the 2^32 limit of a list frame")))?;
        let start = self.buf.len();
        self.i64(0);
        self.u32(count);
        Ok(OpenFrame { start, list: true })
    }
    /// Writes the size of a frame opened before.
    pub fn end_frame(&mut self, frame: OpenFrame) {
        let size = (self.buf.len() - frame.start) as i64;
        let stored = if frame.list { -size } else { size };
        self.buf[frame.start..frame.start + 8].copy_from_slice(&stored.to_le_bytes());
    }
    /// A list frame of one record frame per item, `write` giving each
    /// record its payload.
    pub fn record_list<T>(&mut self, items: &[T], mut write: impl FnMut(&mut Self, &T) -> Result<()>) -> Result<()> {
        let list = self.begin_list(items.len())?;
        for item in items {
            let rec = self.begin_record();
            write(self, item)?;
            self.end_frame(rec);
        }
        self.end_frame(list);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_little_endian() {
        let data = [1u8, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        let mut r = Reader::new(&data, "test");
        assert_eq!(r.u16("a").unwrap(), 1);
        assert_eq!(r.u32("b").unwrap(), 2);
        assert_eq!(r.i64("c").unwrap(), -1);
        assert!(r.is_empty());
        assert!(matches!(r.u8("d"), Err(Error::Truncated { needed: 1, available: 0, .. })));
    }

    #[test]
    fn frames_skip_unknown_trailing_data() {
        let mut w = Writer::new();
        let f = w.begin_record();
        w.u32(7);
        w.bytes(b"future");
        w.end_frame(f);
        w.u8(42);
        let buf = w.into_inner();
        let mut r = Reader::new(&buf, "test");
        let mut rec = r.record_frame("rec").unwrap();
        assert_eq!(rec.u32("x").unwrap(), 7);
        assert_eq!(r.u8("after").unwrap(), 42);
    }

    #[test]
    fn list_frame_with_absurd_count_is_rejected() {
        let mut w = Writer::new();
        let f = w.begin_list(0).unwrap();
        w.bytes(&[0u8; 88]);
        w.end_frame(f);
        let mut buf = w.into_inner();
        buf[8..12].copy_from_slice(&(1u32 << 31).to_le_bytes());
        let mut r = Reader::new(&buf, "test");
        let err = r.list_frame(8, "list").unwrap_err();
        assert!(matches!(err, Error::WouldOverAllocate { .. }), "{err}");
    }

    #[test]
    fn bad_frame_sizes_are_rejected() {
        // size smaller than the preamble
        let buf = 4i64.to_le_bytes();
        assert!(Reader::new(&buf, "t").frame("f").is_err());
        // size larger than the buffer
        let buf = 100i64.to_le_bytes();
        assert!(matches!(Reader::new(&buf, "t").frame("f"), Err(Error::Truncated { .. })));
        // i64::MIN
        let mut buf = i64::MIN.to_le_bytes().to_vec();
        buf.extend_from_slice(&[0; 4]);
        assert!(Reader::new(&buf, "t").frame("f").is_err());
        // list frame with size 8 (< 12)
        let mut buf = (-8i64).to_le_bytes().to_vec();
        buf.extend_from_slice(&[0; 4]);
        assert!(Reader::new(&buf, "t").frame("f").is_err());
    }

    #[test]
    fn errors_carry_absolute_offsets() {
        let mut w = Writer::new();
        w.u32(0);
        let f = w.begin_record();
        w.u8(1);
        w.end_frame(f);
        let buf = w.into_inner();
        let mut r = Reader::new(&buf, "test envelope");
        r.u32("pad").unwrap();
        let mut rec = r.record_frame("rec").unwrap();
        rec.u8("x").unwrap();
        match rec.u32("y").unwrap_err() {
            Error::Truncated { location, .. } => {
                assert_eq!(location.offset, Some(13));
                assert!(location.context.contains("test envelope: y"));
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn strings_must_be_utf8() {
        let mut w = Writer::new();
        w.u32(2);
        w.bytes(&[0xff, 0xfe]);
        let buf = w.into_inner();
        assert!(matches!(Reader::new(&buf, "t").string("s"), Err(Error::OutOfSpec { .. })));
        let mut w = Writer::new();
        w.string("héllo").unwrap();
        let buf = w.into_inner();
        assert_eq!(Reader::new(&buf, "t").string("s").unwrap(), "héllo");
    }
}
