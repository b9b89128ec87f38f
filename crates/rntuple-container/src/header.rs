//! The ROOT file header at byte 0.
//!
//! Source: ROOT `io/io/src/TFile.cxx`, `TFile::Init` (and the `RTFHeader`
//! struct in `tree/ntuple/src/RMiniFile.cxx`). All integers big-endian.
//!
//! ```text
//! offset  small form (fVersion < 1000000)   large form (fVersion >= 1000000)
//!      0  "root"                             "root"
//!      4  fVersion      u32                  fVersion      u32
//!      8  fBEGIN        u32                  fBEGIN        u32
//!     12  fEND          u32                  fEND          u64
//!     16  fSeekFree     u32               20 fSeekFree     u64
//!     20  fNbytesFree   u32               28 fNbytesFree   u32
//!     24  nfree         u32               32 nfree         u32
//!     28  fNbytesName   u32               36 fNbytesName   u32
//!     32  fUnits        u8                40 fUnits        u8
//!     33  fCompress     u32               41 fCompress     u32
//!     37  fSeekInfo     u32               45 fSeekInfo     u64
//!     41  fNbytesInfo   u32               53 fNbytesInfo   u32
//!     45  fUUID (version u16 + 16 bytes)  57 fUUID
//! ```
//!
//! The top directory record follows at `fBEGIN + fNbytesName`.

use rntuple_format::{Error, Location, Result};

use crate::bytes::Cursor;
use crate::constants::{BIG_FILE_VERSION, FILE_MAGIC, INCOMPLETE_FILE_MAGIC};

/// The fields of the ROOT file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// ROOT version that wrote the file (e.g. 63800 for 6.38/00), plus 1000000
    /// in the large form.
    pub version: u32,
    /// Offset of the first record (the `TFile` key), normally 100.
    pub begin: u64,
    /// Offset of the first unused byte: the file's logical size.
    pub end: u64,
    /// Offset of the free-segments record.
    pub seek_free: u64,
    /// Size of the free-segments record.
    pub nbytes_free: u32,
    /// Number of free segments.
    pub nfree: u32,
    /// Size of the `TFile` key plus the streamed name and title that precede the
    /// top directory record.
    pub nbytes_name: u32,
    /// Width of file offsets: 4 (small form) or 8 (large form).
    pub units: u8,
    /// Default compression setting (algorithm × 100 + level).
    pub compress: u32,
    /// Offset of the streamer-info key.
    pub seek_info: u64,
    /// Size of the streamer-info key.
    pub nbytes_info: u32,
}

impl FileHeader {
    /// Bytes of the small form up to (not including) the UUID.
    pub const SMALL_LEN: usize = 45;
    /// Bytes of the large form up to (not including) the UUID.
    pub const LARGE_LEN: usize = 57;

    /// Parses the header from the first bytes of a file (at least
    /// [`FileHeader::SMALL_LEN`] or [`FileHeader::LARGE_LEN`] bytes).
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        if bytes.starts_with(&INCOMPLETE_FILE_MAGIC) {
            return Err(Error::out_of_spec(
                "the file was not completed by its writer (the writer failed or was abandoned): it starts with \
                 the writer's placeholder instead of a ROOT file header",
                Location::new("ROOT file header", Some(0)),
            ));
        }
        let mut c = Cursor::new(bytes, 0, "ROOT file header");
        let magic = c.take(4)?;
        if magic != FILE_MAGIC {
            return Err(Error::out_of_spec(
                format!("not a ROOT file: magic bytes are {magic:02x?}, expected \"root\""),
                Location::new("ROOT file header", Some(0)),
            ));
        }
        let version = c.u32()?;
        let begin = u64::from(c.u32()?);
        let large = version >= BIG_FILE_VERSION;
        let end = c.seek(large)?;
        let seek_free = c.seek(large)?;
        let nbytes_free = c.u32()?;
        let nfree = c.u32()?;
        let nbytes_name = c.u32()?;
        let units = c.u8()?;
        let compress = c.u32()?;
        let seek_info = c.seek(large)?;
        let nbytes_info = c.u32()?;
        let header = Self {
            version,
            begin,
            end,
            seek_free,
            nbytes_free,
            nfree,
            nbytes_name,
            units,
            compress,
            seek_info,
            nbytes_info,
        };
        // TFile::Init rejects fBEGIN < 0 || fBEGIN > fEND.
        let min_begin = if large { Self::LARGE_LEN } else { Self::SMALL_LEN } as u64;
        if header.begin < min_begin || header.begin > header.end {
            return Err(Error::out_of_spec(
                format!("fBEGIN {} is not between the header size {min_begin} and fEND {}", header.begin, header.end),
                Location::new("ROOT file header", Some(8)),
            ));
        }
        Ok(header)
    }

    /// True for the large form (64-bit `fEND`, `fSeekFree`, `fSeekInfo`).
    pub fn is_large(&self) -> bool {
        self.version >= BIG_FILE_VERSION
    }

    /// The ROOT version without the large-file marker, e.g. 63800.
    pub fn root_version(&self) -> u32 {
        self.version % BIG_FILE_VERSION
    }

    /// Offset of the top directory record.
    pub fn top_directory_offset(&self) -> u64 {
        self.begin.saturating_add(u64::from(self.nbytes_name))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The header fields as the writer serializes them (`fBEGIN` kept as
    /// given, even where it is impossible, for the rejection tests).
    fn write(h: &FileHeader) -> Vec<u8> {
        let len = if h.is_large() { FileHeader::LARGE_LEN } else { FileHeader::SMALL_LEN };
        let mut bytes =
            crate::write::records::file_header_bytes(&FileHeader { begin: len as _, ..h.clone() }, &[0; 16]);
        bytes[8..12].copy_from_slice(&(h.begin as u32).to_be_bytes());
        bytes
    }

    fn sample(version: u32) -> FileHeader {
        FileHeader {
            version,
            begin: 100,
            end: 5_000_000_000,
            seek_free: 4_999_999_000,
            nbytes_free: 60,
            nfree: 1,
            nbytes_name: 58,
            units: 8,
            compress: 505,
            seek_info: 4_999_998_000,
            nbytes_info: 900,
        }
    }

    #[test]
    fn small_form_from_a_root_file() {
        let mut h = sample(63501);
        h.end = 1561;
        h.seek_free = 1500;
        h.seek_info = 1100;
        h.units = 4;
        let bytes = write(&h);
        assert_eq!(bytes.len(), FileHeader::SMALL_LEN);
        assert_eq!(FileHeader::parse(&bytes).unwrap(), h);
        assert!(!h.is_large());
        assert_eq!(h.root_version(), 63501);
    }

    #[test]
    fn parses_real_bytes() {
        // The first 45 bytes of test_int_float_rntuple_v1-0-0-0.root (written by
        // ROOT 6.35/01's RNTuple writer; the UUID that follows is zero).
        let bytes = [
            0x72, 0x6f, 0x6f, 0x74, 0x00, 0x00, 0xf8, 0x0d, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x06, 0x19, //
            0x00, 0x00, 0x05, 0xce, 0x00, 0x00, 0x00, 0x4b, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x6c, //
            0x04, 0x00, 0x00, 0x01, 0xf9, 0x00, 0x00, 0x04, 0x3f, 0x00, 0x00, 0x01, 0x8f,
        ];
        let h = FileHeader::parse(&bytes).unwrap();
        let expected = FileHeader {
            version: 63501,
            begin: 100,
            end: 1561,
            seek_free: 1486,
            nbytes_free: 75,
            nfree: 1,
            nbytes_name: 108,
            units: 4,
            compress: 505,
            seek_info: 1087,
            nbytes_info: 399,
        };
        assert_eq!(h, expected);
        assert_eq!(write(&h), bytes);
        assert_eq!(h.top_directory_offset(), 208);
    }

    #[test]
    fn large_form_has_64_bit_offsets() {
        let h = sample(1_063_800);
        let bytes = write(&h);
        assert_eq!(bytes.len(), FileHeader::LARGE_LEN);
        let parsed = FileHeader::parse(&bytes).unwrap();
        assert_eq!(parsed, h);
        assert!(parsed.is_large());
        assert_eq!(parsed.root_version(), 63800);
        assert_eq!(parsed.end, 5_000_000_000);
    }

    #[test]
    fn rejects_wrong_magic_short_input_and_bad_begin() {
        let mut bytes = write(&sample(63800));
        bytes[0] = b'R';
        assert!(matches!(FileHeader::parse(&bytes), Err(Error::OutOfSpec { .. })));
        assert!(matches!(FileHeader::parse(b"root\0\0"), Err(Error::Truncated { .. })));
        let mut h = sample(1_063_800);
        h.end = 99;
        assert!(matches!(FileHeader::parse(&write(&h)), Err(Error::OutOfSpec { .. })));
        h.end = 200;
        h.begin = 20; // inside the header itself
        assert!(matches!(FileHeader::parse(&write(&h)), Err(Error::OutOfSpec { .. })));
    }
}
