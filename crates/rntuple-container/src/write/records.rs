//! Serializers of the ROOT records the writer emits: streamed strings, key
//! headers, directory records, the file header, free segments and UUIDs.
//!
//! The byte layouts are drawn next to their parsers ([`crate::header`],
//! [`crate::key`], [`crate::directory`]); every serializer here is checked
//! against those parsers and against bytes of files written by ROOT. All
//! integers are big-endian.
//!
//! Sources: ROOT `io/io/src/TKey.cxx` (`TKey::FillBuffer`),
//! `io/io/src/TDirectoryFile.cxx` (`TDirectoryFile::FillBuffer`: class version
//! 5, plus 1000 when a seek is past `TFile::kStartBigFile`, then the UUID and,
//! in the small form, three 4-byte zeros), `io/io/src/TFile.cxx`
//! (`TFile::WriteHeader`: the large form when `fEND > kStartBigFile`, then the
//! UUID), `io/io/src/TFree.cxx` (`TFree::FillBuffer`: class version 1, plus
//! 1000 with 64-bit bounds when `fLast > kStartBigFile`), `core/base` `TUUID::FillBuffer`
//! (a 2-byte version, 1, then 16 bytes), and `RTFKey`, `RTFDirectory`,
//! `RTFHeader`, `RTFFreeEntry` in `tree/ntuple/src/RMiniFile.cxx`.

use rntuple_format::{Error, Result};

use crate::constants::{BIG_DIRECTORY_VERSION, BIG_FILE_VERSION, BIG_KEY_VERSION, FILE_MAGIC, TSTRING_LONG_MARKER};
use crate::directory::DirectoryRecord;
use crate::header::FileHeader;

/// `TFile::kStartBigFile`: records whose offsets exceed it use 64-bit fields.
pub(crate) const START_BIG_FILE: u64 = 2_000_000_000;

/// Version of every key the writer emits: `TKey` class version 4 plus 1000,
/// i.e. always 64-bit `fSeekKey` / `fSeekPdir`, as ROOT's RNTuple writer does
/// (`RTFKey`, `RKeyBlob`).
pub(crate) const KEY_VERSION: u16 = 4 + BIG_KEY_VERSION;

/// Fixed part of a 64-bit key header, before its three strings.
const KEY_FIXED_LEN: usize = 18 + 16;

/// `TDirectoryFile` class version.
pub(crate) const DIRECTORY_CLASS_VERSION: u16 = 5;

/// Size of a streamed directory record, both forms (`TDirectoryFile::Sizeof`):
/// 30 + 18 (UUID) + 12 (padding) small, 42 + 18 large.
pub(crate) const DIRECTORY_RECORD_LEN: usize = 60;

/// `TFree` class version.
const FREE_CLASS_VERSION: u16 = 1;

/// Bytes of a streamed `TString`.
pub(crate) fn tstring_len(s: &str) -> usize {
    s.len() + if s.len() < usize::from(TSTRING_LONG_MARKER) { 1 } else { 5 }
}

/// Appends a streamed `TString`: one length byte, or 255 and a 4-byte length.
pub(crate) fn put_tstring(out: &mut Vec<u8>, s: &str) {
    if s.len() < usize::from(TSTRING_LONG_MARKER) {
        out.push(s.len() as u8);
    } else {
        out.push(TSTRING_LONG_MARKER);
        out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

/// One key as the writer emits it (always the 64-bit form, [`KEY_VERSION`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) class_name: String,
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) cycle: i16,
    /// Offset of this key.
    pub(crate) seek_key: u64,
    /// Offset of the key (directory record) of the directory it belongs to.
    pub(crate) seek_pdir: u64,
    /// Payload bytes on disk.
    pub(crate) stored_len: u64,
    /// Payload bytes after decompression (`fObjLen`).
    pub(crate) obj_len: u64,
}

impl Key {
    /// Size of the key header (`fKeyLen`).
    pub(crate) fn key_len(&self) -> usize {
        key_len(&self.class_name, &self.name, &self.title)
    }

    /// Key header plus payload (`fNbytes`).
    pub(crate) fn nbytes(&self) -> u64 {
        self.key_len() as u64 + self.stored_len
    }

    /// Appends the key header. Fails when a size does not fit its field:
    /// `fNbytes` and `fObjLen` are 32-bit signed, `fKeyLen` 16-bit signed.
    pub(crate) fn encode(&self, datime: u32, out: &mut Vec<u8>) -> Result<()> {
        let key_len = self.key_len();
        let nbytes = self.nbytes();
        let too_big = |what: &str, v: u64, max: u64| {
            Error::invalid(format!(
                "key '{}' (class {}): {what} {v} exceeds the ROOT key limit {max}",
                self.name, self.class_name
            ))
        };
        let (Ok(nbytes), Ok(obj_len), Ok(key_len)) =
            (i32::try_from(nbytes), i32::try_from(self.obj_len), i16::try_from(key_len))
        else {
            return Err(if i16::try_from(key_len).is_err() {
                too_big("key header length", key_len as u64, i16::MAX as u64)
            } else if i32::try_from(nbytes).is_err() {
                too_big("size", nbytes, i32::MAX as u64)
            } else {
                too_big("object length", self.obj_len, i32::MAX as u64)
            });
        };
        out.extend_from_slice(&nbytes.to_be_bytes());
        out.extend_from_slice(&KEY_VERSION.to_be_bytes());
        out.extend_from_slice(&obj_len.to_be_bytes());
        out.extend_from_slice(&datime.to_be_bytes());
        out.extend_from_slice(&key_len.to_be_bytes());
        out.extend_from_slice(&self.cycle.to_be_bytes());
        out.extend_from_slice(&self.seek_key.to_be_bytes());
        out.extend_from_slice(&self.seek_pdir.to_be_bytes());
        put_tstring(out, &self.class_name);
        put_tstring(out, &self.name);
        put_tstring(out, &self.title);
        Ok(())
    }
}

/// Size of a 64-bit key header with these strings.
pub(crate) fn key_len(class_name: &str, name: &str, title: &str) -> usize {
    KEY_FIXED_LEN + tstring_len(class_name) + tstring_len(name) + tstring_len(title)
}

/// A streamed `TUUID` (`TUUID::FillBuffer`): version 1, then the 16 bytes.
pub(crate) fn put_uuid(out: &mut Vec<u8>, uuid: &[u8; 16]) {
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(uuid);
}

/// The class version a directory record gets for its offsets: 5, or 1005 with
/// 64-bit offsets when one of them is past [`START_BIG_FILE`].
pub(crate) fn directory_version(seek_dir: u64, seek_parent: u64, seek_keys: u64) -> u16 {
    if seek_dir.max(seek_parent).max(seek_keys) > START_BIG_FILE {
        DIRECTORY_CLASS_VERSION + BIG_DIRECTORY_VERSION
    } else {
        DIRECTORY_CLASS_VERSION
    }
}

/// Appends a directory record of [`DIRECTORY_RECORD_LEN`] bytes; `d.version`
/// decides the form (see [`directory_version`]).
pub(crate) fn put_directory(out: &mut Vec<u8>, d: &DirectoryRecord, uuid: &[u8; 16]) {
    let start = out.len();
    out.extend_from_slice(&d.version.to_be_bytes());
    out.extend_from_slice(&d.datime_c.to_be_bytes());
    out.extend_from_slice(&d.datime_m.to_be_bytes());
    out.extend_from_slice(&d.nbytes_keys.to_be_bytes());
    out.extend_from_slice(&d.nbytes_name.to_be_bytes());
    for v in [d.seek_dir, d.seek_parent, d.seek_keys] {
        if d.is_large() {
            out.extend_from_slice(&v.to_be_bytes());
        } else {
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
    }
    put_uuid(out, uuid);
    // The small form is padded so that the record can grow into the large one.
    out.resize(start + DIRECTORY_RECORD_LEN, 0);
}

/// The file header, zero-padded to `h.begin` bytes; `h.version` decides the
/// form. The UUID follows the fields, as `TFile::WriteHeader` writes it.
pub(crate) fn file_header_bytes(h: &FileHeader, uuid: &[u8; 16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(h.begin as usize);
    out.extend_from_slice(&FILE_MAGIC);
    out.extend_from_slice(&h.version.to_be_bytes());
    out.extend_from_slice(&(h.begin as u32).to_be_bytes());
    let large = h.version >= BIG_FILE_VERSION;
    let seek = |out: &mut Vec<u8>, v: u64| {
        if large {
            out.extend_from_slice(&v.to_be_bytes());
        } else {
            out.extend_from_slice(&(v as u32).to_be_bytes());
        }
    };
    seek(&mut out, h.end);
    seek(&mut out, h.seek_free);
    out.extend_from_slice(&h.nbytes_free.to_be_bytes());
    out.extend_from_slice(&h.nfree.to_be_bytes());
    out.extend_from_slice(&h.nbytes_name.to_be_bytes());
    out.push(h.units);
    out.extend_from_slice(&h.compress.to_be_bytes());
    seek(&mut out, h.seek_info);
    out.extend_from_slice(&h.nbytes_info.to_be_bytes());
    put_uuid(&mut out, uuid);
    out.resize(h.begin as usize, 0);
    out
}

/// Size of a streamed free segment ending at `last`: 10 bytes, or 18 with
/// 64-bit bounds when `last` is past [`START_BIG_FILE`].
pub(crate) fn free_segment_len(last: u64) -> usize {
    if last > START_BIG_FILE {
        18
    } else {
        10
    }
}

/// Appends a streamed free segment `[first, last]` (`TFree::FillBuffer`).
pub(crate) fn put_free_segment(out: &mut Vec<u8>, first: u64, last: u64) {
    if last > START_BIG_FILE {
        out.extend_from_slice(&(FREE_CLASS_VERSION + 1000).to_be_bytes());
        out.extend_from_slice(&first.to_be_bytes());
        out.extend_from_slice(&last.to_be_bytes());
    } else {
        out.extend_from_slice(&FREE_CLASS_VERSION.to_be_bytes());
        out.extend_from_slice(&(first as u32).to_be_bytes());
        out.extend_from_slice(&(last as u32).to_be_bytes());
    }
}

/// The end of the free segment that starts at `first`, the unused rest of the
/// file: ROOT's RNTuple writer makes it the next multiple of 10⁹ past `first`,
/// at least 2·10⁹ (`RNTupleFileWriter::WriteTFileFreeList`).
pub(crate) fn free_segment_last(first: u64) -> u64 {
    START_BIG_FILE.max((first / 1_000_000_000 + 1) * 1_000_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::KeyInfo;

    #[test]
    fn tstrings_short_and_long() {
        let mut out = Vec::new();
        put_tstring(&mut out, "RBlob");
        assert_eq!(out, b"\x05RBlob");
        let long = "x".repeat(300);
        let mut out = Vec::new();
        put_tstring(&mut out, &long);
        assert_eq!(&out[..5], &[255, 0, 0, 1, 44]);
        assert_eq!(out.len(), tstring_len(&long));
        assert_eq!(tstring_len(&"y".repeat(254)), 255);
        assert_eq!(tstring_len(&"y".repeat(255)), 260);
    }

    #[test]
    fn blob_key_matches_root() {
        // The first RBlob key of tests/data/multikey.root (ROOT 6.40's RNTuple
        // writer) at offset 230: 4096 payload bytes, no names.
        let real = [
            0x00, 0x00, 0x10, 0x2a, 0x03, 0xec, 0x00, 0x00, 0x10, 0x00, 0x7e, 0xec, 0x32, 0xc5, 0x00, 0x2a, //
            0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe6, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
            0x00, 0x64, 0x05, b'R', b'B', b'l', b'o', b'b', 0x00, 0x00,
        ];
        let key = Key {
            class_name: "RBlob".into(),
            name: String::new(),
            title: String::new(),
            cycle: 1,
            seek_key: 230,
            seek_pdir: 100,
            stored_len: 4096,
            obj_len: 4096,
        };
        let mut out = Vec::new();
        key.encode(0x7eec_32c5, &mut out).unwrap();
        assert_eq!(out, real);
        let (parsed, len) = KeyInfo::parse(&out, 230).unwrap();
        assert_eq!((len, parsed.nbytes, parsed.obj_len, parsed.version), (42, 4138, 4096, 1004));
    }

    #[test]
    fn oversized_keys_are_refused() {
        let mut key = Key {
            class_name: "RBlob".into(),
            name: String::new(),
            title: String::new(),
            cycle: 1,
            seek_key: 0,
            seek_pdir: 100,
            stored_len: i32::MAX as u64,
            obj_len: 1,
        };
        assert!(matches!(key.encode(0, &mut Vec::new()), Err(Error::InvalidArgument { .. })));
        key.stored_len = 1;
        key.obj_len = 1 << 31;
        assert!(matches!(key.encode(0, &mut Vec::new()), Err(Error::InvalidArgument { .. })));
        key.obj_len = 1;
        key.title = "t".repeat(40_000);
        assert!(matches!(key.encode(0, &mut Vec::new()), Err(Error::InvalidArgument { .. })));
    }

    #[test]
    fn directory_record_both_forms() {
        let uuid = [7u8; 16];
        for (seek_keys, version, large) in [(970, 5, false), (6_000_000_000, 1005, true)] {
            let d = DirectoryRecord {
                version: directory_version(100, 0, seek_keys),
                datime_c: 1,
                datime_m: 2,
                nbytes_keys: 117,
                nbytes_name: 108,
                seek_dir: 100,
                seek_parent: 0,
                seek_keys,
            };
            assert_eq!(d.version, version);
            let mut out = Vec::new();
            put_directory(&mut out, &d, &uuid);
            assert_eq!(out.len(), DIRECTORY_RECORD_LEN);
            assert_eq!(DirectoryRecord::parse(&out, 0).unwrap(), d);
            let uuid_at = if large { 42 } else { 30 };
            assert_eq!(&out[uuid_at..uuid_at + 2], &[0, 1]);
            assert_eq!(&out[uuid_at + 2..uuid_at + 18], &uuid);
            assert!(out[uuid_at + 18..].iter().all(|&b| b == 0));
        }
        assert_eq!(directory_version(2_000_000_001, 100, 0), 1005);
        assert_eq!(directory_version(2_000_000_000, 100, 0), 5);
    }

    #[test]
    fn file_header_both_forms() {
        let mut h = FileHeader {
            version: 64000,
            begin: 100,
            end: 110_225,
            seek_free: 110_165,
            nbytes_free: 60,
            nfree: 1,
            nbytes_name: 70,
            units: 4,
            compress: 0,
            seek_info: 108_839,
            nbytes_info: 1326,
        };
        let bytes = file_header_bytes(&h, &[0; 16]);
        // tests/data/multikey.root (ROOT 6.40's RNTuple writer, which leaves the
        // header's UUID zero) starts with exactly these 100 bytes.
        let real = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/multikey.root")).unwrap();
        let mut expected = real[..100].to_vec();
        expected[45..47].copy_from_slice(&[0, 1]); // UUID version, as TFile::WriteHeader writes it
        assert_eq!(bytes, expected);
        assert_eq!(FileHeader::parse(&bytes).unwrap(), h);

        h.version += BIG_FILE_VERSION;
        h.units = 8;
        h.end = 5_000_000_000;
        h.seek_free = 4_999_999_000;
        h.seek_info = 4_999_998_000;
        let bytes = file_header_bytes(&h, &[9; 16]);
        assert_eq!(bytes.len(), 100);
        assert_eq!(FileHeader::parse(&bytes).unwrap(), h);
        assert_eq!(&bytes[57..59], &[0, 1]);
        assert_eq!(&bytes[59..75], &[9; 16]);
    }

    #[test]
    fn free_segments() {
        // tests/data/multikey.root: one segment [110225, 2000000000].
        let mut out = Vec::new();
        put_free_segment(&mut out, 110_225, free_segment_last(110_225));
        assert_eq!(out, [0x00, 0x01, 0x00, 0x01, 0xae, 0x91, 0x77, 0x35, 0x94, 0x00]);
        assert_eq!(free_segment_len(2_000_000_000), 10);
        assert_eq!(free_segment_last(1_500_000_000), 2_000_000_000);
        assert_eq!(free_segment_last(2_000_000_000), 3_000_000_000);
        let mut out = Vec::new();
        put_free_segment(&mut out, 2_500_000_000, 3_000_000_000);
        assert_eq!(out.len(), free_segment_len(3_000_000_000));
        assert_eq!(&out[..2], &[0x03, 0xe9]);
    }
}
