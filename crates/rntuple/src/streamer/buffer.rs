//! A bounded big-endian cursor over bytes ROOT's `TBufferFile` wrote: the
//! integers, floats and strings of its object serialisation, byte counts
//! (`kByteCountMask` 0x40000000) and class tags (`kNewClassTag`
//! 0xFFFFFFFF, `kClassMask` 0x80000000, positions offset by `kMapOffset` 2).

use std::collections::HashMap;

/// Byte-count flag of a 32-bit count word.
pub(crate) const BYTE_COUNT_MASK: u32 = 0x4000_0000;
/// A class tag that introduces a class name.
pub(crate) const NEW_CLASS_TAG: u32 = 0xFFFF_FFFF;
/// A class tag that refers to a class named earlier in the buffer.
pub(crate) const CLASS_MASK: u32 = 0x8000_0000;
/// Offset added to buffer positions in class references.
const MAP_OFFSET: usize = 2;
/// Longest class name accepted in a class tag.
const MAX_CLASS_NAME: usize = 4096;

/// A failure: what was expected and the buffer offset where.
pub(crate) type Fail = String;

#[derive(Clone)]
pub(crate) struct Buf<'a> {
    data: &'a [u8],
    pos: usize,
    /// Class names by tag position (+ `MAP_OFFSET`).
    classes: HashMap<usize, String>,
    /// The byte counts and class tags read, in order, when recording
    /// ([`Buf::recording`]).
    marks: Option<Vec<Mark>>,
}

/// A word of the buffer that depends on where objects are: what
/// re-placing an object must rewrite ([`super::info::record_objects`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mark {
    /// A byte count word at `at` (it counts the bytes after it).
    Count { at: usize },
    /// A class tag at `at` naming `class`: the name itself (`new`) or a
    /// reference to an earlier tag.
    Tag { at: usize, class: String, new: bool },
}

impl<'a> Buf<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Buf { data, pos: 0, classes: HashMap::new(), marks: None }
    }

    /// A buffer that records its byte counts and class tags ([`Mark`]).
    pub(crate) fn recording(data: &'a [u8]) -> Self {
        Buf { marks: Some(Vec::new()), ..Buf::new(data) }
    }

    /// The marks recorded so far (empty when not recording).
    pub(crate) fn marks(&self) -> &[Mark] {
        self.marks.as_deref().unwrap_or_default()
    }

    fn mark(&mut self, m: Mark) {
        if let Some(marks) = &mut self.marks {
            marks.push(m);
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn seek(&mut self, pos: usize, what: &str) -> Result<(), Fail> {
        if pos > self.data.len() {
            return Err(format!("{what} ends at byte {pos}, past the {} bytes there are", self.data.len()));
        }
        self.pos = pos;
        Ok(())
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Fail> {
        if n > self.remaining() {
            return Err(format!("{what} at byte {}: needs {n} bytes, {} left", self.pos, self.remaining()));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Fail> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, Fail> {
        Ok(self.array::<1>(what)?[0])
    }
    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, Fail> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, Fail> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }
    pub(crate) fn i32(&mut self, what: &str) -> Result<i32, Fail> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, Fail> {
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// A `TString` / `std::string` body: a one-byte length (255: a four-byte
    /// length follows), then the bytes.
    pub(crate) fn tstring(&mut self, what: &str) -> Result<String, Fail> {
        let n = match self.u8(what)? {
            255 => self.u32(what)? as usize,
            n => usize::from(n),
        };
        let bytes = self.take(n, what)?;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// A byte count word: returns the position where the object ends, or
    /// `None` when the word is not a byte count (then it is not consumed).
    pub(crate) fn byte_count(&mut self, what: &str) -> Result<Option<usize>, Fail> {
        let at = self.pos;
        let word = self.u32(what)?;
        if word & BYTE_COUNT_MASK == 0 || word == NEW_CLASS_TAG {
            self.pos = at;
            return Ok(None);
        }
        let end = self.pos + (word & !BYTE_COUNT_MASK) as usize;
        self.mark(Mark::Count { at });
        if end > self.data.len() {
            return Err(format!(
                "{what} at byte {at}: its byte count {} reaches past the {} bytes there are",
                word & !BYTE_COUNT_MASK,
                self.data.len()
            ));
        }
        Ok(Some(end))
    }

    /// A version header that must have its byte count (classes, STL
    /// containers and strings as ROOT streams them): returns (end, version,
    /// checksum).
    pub(crate) fn counted_version(&mut self, what: &str) -> Result<(Option<usize>, u16, Option<u32>), Fail> {
        let at = self.pos;
        let r = self.version(what)?;
        if r.0.is_none() {
            return Err(format!("{what} at byte {at}: expected a byte count, found {:#010x}", {
                let mut w = [0u8; 4];
                let n = self.data.len().min(at + 4) - at;
                w[..n].copy_from_slice(&self.data[at..at + n]);
                u32::from_be_bytes(w)
            }));
        }
        Ok(r)
    }

    /// A version header: byte count (optional) and version; a version 0
    /// (a class without `ClassDef`, "foreign") is followed by the class
    /// checksum. Returns (end, version, checksum).
    pub(crate) fn version(&mut self, what: &str) -> Result<(Option<usize>, u16, Option<u32>), Fail> {
        let end = self.byte_count(what)?;
        let v = self.u16(what)?;
        let checksum = if v == 0 { Some(self.u32(what)?) } else { None };
        Ok((end, v, checksum))
    }

    /// A pointer to an object as `TBufferFile::WriteObjectAny` writes it:
    /// byte count, class tag (new: the name; else a reference to a name
    /// read before). Returns the class name and where the object ends;
    /// `None` for a null pointer.
    pub(crate) fn object_header(&mut self, what: &str) -> Result<Option<(String, usize)>, Fail> {
        let end = self.byte_count(what)?;
        let tag_at = self.pos;
        let tag = self.u32(what)?;
        if tag == 0 && end.is_none() {
            return Ok(None);
        }
        let Some(end) = end else {
            return Err(format!("{what} at byte {tag_at}: an object reference, which is not decoded"));
        };
        let name =
            if tag == NEW_CLASS_TAG {
                let start = self.pos;
                let len =
                    self.data[start..].iter().take(MAX_CLASS_NAME).position(|&b| b == 0).ok_or_else(|| {
                        format!("{what} at byte {start}: a class name without its terminating zero byte")
                    })?;
                let name = String::from_utf8_lossy(&self.data[start..start + len]).into_owned();
                self.pos = start + len + 1;
                self.classes.insert(tag_at + MAP_OFFSET, name.clone());
                self.mark(Mark::Tag { at: tag_at, class: name.clone(), new: true });
                name
            } else if tag & CLASS_MASK != 0 {
                let at = (tag & !CLASS_MASK) as usize;
                let name = self.classes.get(&at).cloned().ok_or_else(|| {
                    format!("{what} at byte {tag_at}: a reference to class tag {at} that was never read")
                })?;
                self.mark(Mark::Tag { at: tag_at, class: name.clone(), new: false });
                name
            } else {
                return Err(format!("{what} at byte {tag_at}: an object reference, which is not decoded"));
            };
        Ok(Some((name, end)))
    }
}
