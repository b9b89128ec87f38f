//! The directory record (`TDirectory` / `TDirectoryFile` streamed object).
//!
//! Source: ROOT `io/io/src/TDirectoryFile.cxx` (`TDirectoryFile::FillBuffer`,
//! `TDirectoryFile::Streamer`) and `io/io/src/TFile.cxx` (`TFile::Init`), plus
//! `RTFDirectory` in `tree/ntuple/src/RMiniFile.cxx`. Big-endian.
//!
//! The top directory's record sits at `fBEGIN + fNbytesName` (after the `TFile`
//! key and the streamed name and title); a subdirectory's record is the payload
//! of its key (class `TDirectory`).
//!
//! ```text
//! offset  small (version <= 1000)      large (version > 1000)
//!      0  version     u16              version     u16
//!      2  fDatimeC    u32              fDatimeC    u32
//!      6  fDatimeM    u32              fDatimeM    u32
//!     10  fNbytesKeys i32              fNbytesKeys i32
//!     14  fNbytesName i32              fNbytesName i32
//!     18  fSeekDir    u32              fSeekDir    u64
//!     22  fSeekParent u32           26 fSeekParent u64
//!     26  fSeekKeys   u32           34 fSeekKeys   u64
//!     30  fUUID (u16 version + 16 bytes), then 12 padding bytes in the small form
//! ```
//!
//! The key list at `fSeekKeys` (`fNbytesKeys` bytes) is a key header describing
//! the list itself, an `i32` key count, then that many key headers.

use rntuple_format::{Error, Result};

use crate::bytes::Cursor;
use crate::constants::BIG_DIRECTORY_VERSION;

/// The fields of a directory record that locate its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryRecord {
    /// Class version; above 1000 the seek fields are 64-bit.
    pub version: u16,
    pub datime_c: u32,
    pub datime_m: u32,
    /// Size of the key list at `seek_keys`.
    pub nbytes_keys: u32,
    pub nbytes_name: u32,
    /// Offset of this directory's key.
    pub seek_dir: u64,
    /// Offset of the parent directory's key (0 for the top directory).
    pub seek_parent: u64,
    /// Offset of the key list; 0 for a directory without keys.
    pub seek_keys: u64,
}

impl DirectoryRecord {
    /// Bytes of the small form up to the UUID.
    pub const SMALL_LEN: usize = 30;
    /// Bytes of the large form up to the UUID.
    pub const LARGE_LEN: usize = 42;

    /// Parses a directory record found at file offset `offset`.
    pub fn parse(bytes: &[u8], offset: u64) -> Result<Self> {
        let mut c = Cursor::new(bytes, offset, "directory record");
        let version = c.u16()?;
        let datime_c = c.u32()?;
        let datime_m = c.u32()?;
        let nbytes_keys = c.i32()?;
        let nbytes_name = c.i32()?;
        let large = version > BIG_DIRECTORY_VERSION;
        let seek_dir = c.seek(large)?;
        let seek_parent = c.seek(large)?;
        let seek_keys = c.seek(large)?;
        let (Ok(nbytes_keys), Ok(nbytes_name)) = (u32::try_from(nbytes_keys), u32::try_from(nbytes_name)) else {
            return Err(Error::out_of_spec(
                format!("negative size: fNbytesKeys {nbytes_keys}, fNbytesName {nbytes_name}"),
                rntuple_format::Location::new("directory record", Some(offset.saturating_add(10))),
            ));
        };
        Ok(Self { version, datime_c, datime_m, nbytes_keys, nbytes_name, seek_dir, seek_parent, seek_keys })
    }

    /// True when the seek fields are 64-bit.
    pub fn is_large(&self) -> bool {
        self.version > BIG_DIRECTORY_VERSION
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A record as the writer serializes it (zero UUID).
    fn write(d: &DirectoryRecord) -> Vec<u8> {
        let mut out = Vec::new();
        crate::write::records::put_directory(&mut out, d, &[0; 16]);
        out
    }

    #[test]
    fn parses_real_bytes() {
        // test_int_float_rntuple_v1-0-0-0.root at fBEGIN + fNbytesName = 208.
        let bytes = [
            0x00, 0x05, 0x76, 0xe6, 0x9a, 0x9e, 0x76, 0xe6, 0x9a, 0x9e, 0x00, 0x00, 0x00, 0x75, 0x00, 0x00, //
            0x00, 0x6c, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xca,
        ];
        let d = DirectoryRecord::parse(&bytes, 208).unwrap();
        assert_eq!(d.version, 5);
        assert!(!d.is_large());
        assert_eq!((d.nbytes_keys, d.nbytes_name), (117, 108));
        assert_eq!((d.seek_dir, d.seek_parent, d.seek_keys), (100, 0, 970));
    }

    #[test]
    fn large_form_round_trips() {
        let d = DirectoryRecord {
            version: 1005,
            datime_c: 1,
            datime_m: 2,
            nbytes_keys: 300,
            nbytes_name: 60,
            seek_dir: 100,
            seek_parent: 0,
            seek_keys: 6_000_000_000,
        };
        let bytes = write(&d);
        assert_eq!(DirectoryRecord::parse(&bytes, 0).unwrap(), d);
        assert!(matches!(DirectoryRecord::parse(&bytes[..41], 0), Err(Error::Truncated { .. })));
    }

    #[test]
    fn negative_sizes_are_out_of_spec() {
        let mut bytes = write(&DirectoryRecord {
            version: 5,
            datime_c: 0,
            datime_m: 0,
            nbytes_keys: 0,
            nbytes_name: 0,
            seek_dir: 100,
            seek_parent: 0,
            seek_keys: 0,
        });
        bytes[10] = 0xff;
        assert!(matches!(DirectoryRecord::parse(&bytes, 0), Err(Error::OutOfSpec { .. })));
    }
}
