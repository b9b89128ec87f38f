//! Key headers (`TKey`): the record in front of every object in a ROOT file,
//! also repeated, without payload, in each directory's key list.
//!
//! Source: ROOT `io/io/src/TKey.cxx` (`TKey::ReadKeyBuffer`, `TKey::FillBuffer`)
//! and `RTFKey` in `tree/ntuple/src/RMiniFile.cxx`. Big-endian.
//!
//! ```text
//! offset  small (version <= 1000)   large (version > 1000)
//!      0  fNbytes   i32   key header + payload on disk
//!      4  fVersion  i16
//!      6  fObjLen   i32   payload size after decompression
//!     10  fDatime   u32
//!     14  fKeyLen   i16   size of this header, strings included
//!     16  fCycle    i16
//!     18  fSeekKey  u32             fSeekKey  u64
//!     22  fSeekPdir u32          26 fSeekPdir u64
//!     26  class name, object name, title: TStrings (34 in the large form)
//! ```
//!
//! The payload starts at `fSeekKey + fKeyLen` and has `fNbytes - fKeyLen` bytes
//! on disk; it is compressed (in ROOT compression blocks) when
//! `fObjLen > fNbytes - fKeyLen`.

use rntuple_format::{Error, Location, Result};

use crate::bytes::Cursor;
use crate::constants::{BIG_KEY_VERSION, DIRECTORY_CLASS_NAMES, RNTUPLE_CLASS_NAME};

/// One key of a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// Path from the top directory, `/`-separated: `"Events"`, `"dir/sub/Events"`.
    pub path: String,
    /// The object name (last path component).
    pub name: String,
    pub title: String,
    /// Class name as stored, e.g. `"ROOT::RNTuple"`, `"TTree"`, `"TDirectory"`.
    pub class_name: String,
    pub cycle: i16,
    /// Offset of the key header in the file.
    pub seek_key: u64,
    /// Key header plus payload on disk.
    pub nbytes: u32,
    /// Payload size after decompression.
    pub obj_len: u32,
    /// Size of the key header.
    pub key_len: u16,
    /// ROOT `TDatime` packed date.
    pub datime: u32,
    /// Key version; above 1000 the seek fields are 64-bit.
    pub version: u16,
    /// Offset of the directory record (key) this key belongs to.
    pub seek_pdir: u64,
}

impl KeyInfo {
    /// Parses one key header from the front of `bytes`, found at file offset
    /// `offset`. Returns the key (with `path` = `name`) and the header's parsed
    /// length.
    pub fn parse(bytes: &[u8], offset: u64) -> Result<(Self, usize)> {
        let mut c = Cursor::new(bytes, offset, "key header");
        let key = parse_key(&mut c, "")?;
        Ok((key, c.position()))
    }

    /// File offset of the payload.
    pub fn payload_offset(&self) -> u64 {
        self.seek_key.saturating_add(u64::from(self.key_len))
    }

    /// Size of the payload on disk (compressed size if compressed).
    pub fn stored_len(&self) -> u32 {
        self.nbytes.saturating_sub(u32::from(self.key_len))
    }

    /// True when the payload is stored compressed.
    pub fn is_compressed(&self) -> bool {
        self.obj_len > self.stored_len()
    }

    /// True for a subdirectory key.
    pub fn is_directory(&self) -> bool {
        DIRECTORY_CLASS_NAMES.contains(&self.class_name.as_str())
    }

    /// True for an RNTuple anchor key.
    pub fn is_rntuple(&self) -> bool {
        self.class_name == RNTUPLE_CLASS_NAME
    }
}

/// Parses a key header at the cursor; `dir_path` is the directory's path
/// (empty for the top directory).
pub(crate) fn parse_key(c: &mut Cursor<'_>, dir_path: &str) -> Result<KeyInfo> {
    let start = c.offset();
    let nbytes = c.i32()?;
    let version = c.u16()?;
    let obj_len = c.i32()?;
    let datime = c.u32()?;
    let key_len = c.i16()?;
    let cycle = c.i16()?;
    let large = version > BIG_KEY_VERSION;
    let seek_key = c.seek(large)?;
    let seek_pdir = c.seek(large)?;
    let class_name = c.tstring()?;
    let name = c.tstring()?;
    let title = c.tstring()?;
    let bad = |message: String| Error::out_of_spec(message, Location::new(format!("key '{name}'"), Some(start)));
    let (Ok(nbytes), Ok(obj_len), Ok(key_len)) =
        (u32::try_from(nbytes), u32::try_from(obj_len), u16::try_from(key_len))
    else {
        return Err(bad(format!("negative size: fNbytes {nbytes}, fObjLen {obj_len}, fKeyLen {key_len}")));
    };
    if u32::from(key_len) > nbytes {
        return Err(bad(format!("fKeyLen {key_len} exceeds fNbytes {nbytes}")));
    }
    let path = if dir_path.is_empty() { name.clone() } else { format!("{dir_path}/{name}") };
    Ok(KeyInfo { path, name, title, class_name, cycle, seek_key, nbytes, obj_len, key_len, datime, version, seek_pdir })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Serializes a key header (test helper); sets nothing implicitly.
    pub(crate) fn write(k: &KeyInfo) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&k.nbytes.to_be_bytes());
        out.extend_from_slice(&k.version.to_be_bytes());
        out.extend_from_slice(&k.obj_len.to_be_bytes());
        out.extend_from_slice(&k.datime.to_be_bytes());
        out.extend_from_slice(&k.key_len.to_be_bytes());
        out.extend_from_slice(&k.cycle.to_be_bytes());
        for v in [k.seek_key, k.seek_pdir] {
            if k.version > BIG_KEY_VERSION {
                out.extend_from_slice(&v.to_be_bytes());
            } else {
                out.extend_from_slice(&(v as u32).to_be_bytes());
            }
        }
        for s in [&k.class_name, &k.name, &k.title] {
            if s.len() < 255 {
                out.push(s.len() as u8);
            } else {
                out.push(255);
                out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            }
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    /// Length of the header `write` produces.
    pub(crate) fn header_len(version: u16, class_name: &str, name: &str, title: &str) -> u16 {
        let strs: usize = [class_name, name, title].iter().map(|s| s.len() + if s.len() < 255 { 1 } else { 5 }).sum();
        (18 + if version > BIG_KEY_VERSION { 16 } else { 8 } + strs) as u16
    }

    #[test]
    fn parses_real_key_list_entry() {
        // The anchor's entry in the key list of test_int_float_rntuple_v1-0-0-0.root
        // (offset 1039 = 970 + the list's own 65-byte key + 4-byte count).
        let bytes = [
            0x00, 0x00, 0x00, 0x7e, 0x00, 0x04, 0x00, 0x00, 0x00, 0x4e, 0x76, 0xe6, 0x9a, 0x9e, 0x00, 0x30, //
            0x00, 0x01, 0x00, 0x00, 0x03, 0x4c, 0x00, 0x00, 0x00, 0x64, 0x0d, b'R', b'O', b'O', b'T', b':', //
            b':', b'R', b'N', b'T', b'u', b'p', b'l', b'e', 0x06, b'n', b't', b'u', b'p', b'l', b'e', 0x00,
        ];
        let (k, len) = KeyInfo::parse(&bytes, 1039).unwrap();
        assert_eq!(len, 48);
        assert_eq!(usize::from(k.key_len), len);
        assert_eq!((k.nbytes, k.version, k.obj_len, k.cycle), (126, 4, 78, 1));
        assert_eq!((k.seek_key, k.seek_pdir), (844, 100));
        assert_eq!((k.class_name.as_str(), k.name.as_str(), k.title.as_str()), ("ROOT::RNTuple", "ntuple", ""));
        assert!(k.is_rntuple() && !k.is_directory() && !k.is_compressed());
        assert_eq!((k.payload_offset(), k.stored_len()), (892, 78));
        assert_eq!(write(&k), bytes);
    }

    #[test]
    fn large_key_has_64_bit_seeks_and_long_strings() {
        let title = "t".repeat(300);
        let key_len = header_len(1004, "TDirectory", "dir", &title);
        let k = KeyInfo {
            path: "dir".into(),
            name: "dir".into(),
            title,
            class_name: "TDirectory".into(),
            cycle: 3,
            seek_key: 5_000_000_000,
            nbytes: u32::from(key_len) + 60,
            obj_len: 60,
            key_len,
            datime: 7,
            version: 1004,
            seek_pdir: 100,
        };
        let bytes = write(&k);
        assert_eq!(bytes.len(), usize::from(key_len));
        let (parsed, len) = KeyInfo::parse(&bytes, 0).unwrap();
        assert_eq!(parsed, k);
        assert_eq!(len, bytes.len());
        assert!(parsed.is_directory());
    }

    #[test]
    fn rejects_inconsistent_sizes() {
        let mut k = KeyInfo::parse(&write(&sample()), 0).unwrap().0;
        k.key_len = 500;
        assert!(matches!(KeyInfo::parse(&write(&k), 0), Err(Error::OutOfSpec { .. })));
        let mut bytes = write(&sample());
        bytes[0] = 0x80; // negative fNbytes
        assert!(matches!(KeyInfo::parse(&bytes, 0), Err(Error::OutOfSpec { .. })));
        assert!(matches!(KeyInfo::parse(&bytes[..20], 0), Err(Error::Truncated { .. })));
    }

    fn sample() -> KeyInfo {
        KeyInfo {
            path: "a".into(),
            name: "a".into(),
            title: String::new(),
            class_name: "TTree".into(),
            cycle: 1,
            seek_key: 1000,
            nbytes: 100,
            obj_len: 100,
            key_len: header_len(4, "TTree", "a", ""),
            datime: 0,
            version: 4,
            seek_pdir: 100,
        }
    }
}
