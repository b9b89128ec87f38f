//! The `ROOT::RNTuple` anchor: the object a directory key points to, locating
//! the header and footer envelopes.
//!
//! Source: RNTuple specification 1.0 (`tree/ntuple/doc/BinaryFormatSpecification.md`,
//! "ROOT File embedding" and "Anchor schema"), and `RTFNTuple` /
//! `RMiniFileReader::GetNTupleProperAtOffset` in `tree/ntuple/src/RMiniFile.cxx`,
//! which is what ROOT writes and reads. Where the spec text is silent, the files
//! ROOT writes decide:
//!
//! * the object starts with ROOT's 4-byte byte count (flag `0x40000000`, count
//!   66 = the fields without the checksum) and 2-byte class version (2), which
//!   the spec's schema does not draw;
//! * all integers, the checksum included, are big-endian (unlike the rest of
//!   RNTuple);
//! * the xxh3-64 checksum covers the fields only, not the 6-byte prefix, and is
//!   the last 8 bytes of the object (later class versions may append fields
//!   before it).
//!
//! ```text
//! offset
//!      0  byte count | 0x40000000   u32   (not checksummed)
//!      4  class version             u16   (not checksummed)
//!      6  fVersionEpoch             u16  ┐
//!      8  fVersionMajor             u16  │
//!     10  fVersionMinor             u16  │
//!     12  fVersionPatch             u16  │
//!     14  fSeekHeader               u64  │ checksummed
//!     22  fNBytesHeader             u64  │
//!     30  fLenHeader                u64  │
//!     38  fSeekFooter               u64  │
//!     46  fNBytesFooter             u64  │
//!     54  fLenFooter                u64  │
//!     62  fMaxKeySize               u64  ┘ (+ fields of later class versions)
//!  len-8  xxh3-64 of bytes 6..len-8  u64
//! ```

use rntuple_format::checksum::xxh3_64;
use rntuple_format::{Error, Location, Result};

use crate::bytes::Cursor;
use crate::constants::{
    ANCHOR_CLASS_VERSION, ANCHOR_FIELDS_LEN, ANCHOR_MIN_LEN, ANCHOR_PREFIX_LEN, BYTE_COUNT_FLAG, SUPPORTED_EPOCH,
};

/// The fields of an RNTuple anchor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub version_epoch: u16,
    pub version_major: u16,
    pub version_minor: u16,
    pub version_patch: u16,
    /// File offset of the header envelope (payload of its first `RBlob` key).
    pub seek_header: u64,
    /// Header envelope size on disk (compressed).
    pub nbytes_header: u64,
    /// Header envelope size after decompression.
    pub len_header: u64,
    pub seek_footer: u64,
    pub nbytes_footer: u64,
    pub len_footer: u64,
    /// Largest payload of one key; bigger payloads are split over several keys
    /// (see [`crate::RootFile::read_payload`]).
    pub max_key_size: u64,
}

impl Anchor {
    /// Parses the anchor from its key's object payload (after decompression),
    /// prefix included. `location` names where the payload came from; offsets in
    /// errors are relative to `location.offset`.
    ///
    /// Checks, in order: the size, the checksum (when `verify_checksum`), the
    /// version epoch (only 1 is read; others are [`Error::Unsupported`]). A
    /// `max_key_size` of 0 (uproot 5.7 writes it) means payloads are never split.
    pub fn parse(bytes: &[u8], verify_checksum: bool, location: &Location) -> Result<Self> {
        let at =
            |rel: usize| Location::new(location.context.clone(), location.offset.map(|o| o.saturating_add(rel as u64)));
        if bytes.len() < ANCHOR_MIN_LEN {
            return Err(Error::Truncated {
                needed: ANCHOR_MIN_LEN as u64,
                available: bytes.len() as u64,
                location: at(0),
            });
        }
        let ck_pos = bytes.len() - 8;
        if verify_checksum {
            let mut stored = [0u8; 8];
            stored.copy_from_slice(&bytes[ck_pos..]);
            let stored = u64::from_be_bytes(stored);
            let computed = xxh3_64(&bytes[ANCHOR_PREFIX_LEN..ck_pos]);
            if stored != computed {
                return Err(Error::ChecksumMismatch { stored, computed, location: at(ck_pos) });
            }
        }
        let fields = &bytes[ANCHOR_PREFIX_LEN..ANCHOR_PREFIX_LEN + ANCHOR_FIELDS_LEN];
        let mut c = Cursor::new(fields, 0, "RNTuple anchor");
        let anchor = Anchor {
            version_epoch: c.u16()?,
            version_major: c.u16()?,
            version_minor: c.u16()?,
            version_patch: c.u16()?,
            seek_header: c.u64()?,
            nbytes_header: c.u64()?,
            len_header: c.u64()?,
            seek_footer: c.u64()?,
            nbytes_footer: c.u64()?,
            len_footer: c.u64()?,
            max_key_size: c.u64()?,
        };
        if anchor.version_epoch != SUPPORTED_EPOCH {
            return Err(Error::unsupported(
                format!(
                    "RNTuple format version {}.{}.{}.{} (only epoch {SUPPORTED_EPOCH} is read)",
                    anchor.version_epoch, anchor.version_major, anchor.version_minor, anchor.version_patch
                ),
                at(ANCHOR_PREFIX_LEN),
            ));
        }
        // fMaxKeySize 0 (as uproot 5.7 writes it) means payloads are never split.
        Ok(anchor)
    }

    /// Serializes the anchor as ROOT 6.34+ streams it into its key: prefix
    /// (byte count 66 with the `0x40000000` flag, class version 2), fields and
    /// big-endian xxh3 checksum; 78 bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(ANCHOR_MIN_LEN);
        let count = (ANCHOR_PREFIX_LEN - 4 + ANCHOR_FIELDS_LEN) as u32;
        out.extend_from_slice(&(BYTE_COUNT_FLAG | count).to_be_bytes());
        out.extend_from_slice(&ANCHOR_CLASS_VERSION.to_be_bytes());
        for v in [self.version_epoch, self.version_major, self.version_minor, self.version_patch] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in [
            self.seek_header,
            self.nbytes_header,
            self.len_header,
            self.seek_footer,
            self.nbytes_footer,
            self.len_footer,
            self.max_key_size,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        let checksum = xxh3_64(&out[ANCHOR_PREFIX_LEN..]);
        out.extend_from_slice(&checksum.to_be_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The anchor payload of test_int_float_rntuple_v1-0-0-0.root (key payload at
    /// offset 892, stored uncompressed).
    const REAL: [u8; 78] = [
        0x40, 0x00, 0x00, 0x42, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x01, 0x2e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa7, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x01, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xfa, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x52, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x94, 0x00, 0x00, //
        0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x1b, 0x82, 0x48, 0x2c, 0x09, 0xf5, 0x2d, 0x5c,
    ];

    fn loc() -> Location {
        Location::new("anchor", Some(892))
    }

    #[test]
    fn parses_real_anchor() {
        let a = Anchor::parse(&REAL, true, &loc()).unwrap();
        let expected = Anchor {
            version_epoch: 1,
            version_major: 0,
            version_minor: 0,
            version_patch: 0,
            seek_header: 302,
            nbytes_header: 167,
            len_header: 263,
            seek_footer: 762,
            nbytes_footer: 82,
            len_footer: 148,
            max_key_size: 1 << 30,
        };
        assert_eq!(a, expected);
        // Our serializer reproduces ROOT's bytes exactly.
        assert_eq!(a.to_bytes(), REAL);
    }

    #[test]
    fn checksum_mismatch_is_reported_unless_disabled() {
        let mut bytes = REAL;
        bytes[20] ^= 1;
        match Anchor::parse(&bytes, true, &loc()) {
            Err(Error::ChecksumMismatch { location, .. }) => assert_eq!(location.offset, Some(892 + 70)),
            other => panic!("unexpected {other:?}"),
        }
        let a = Anchor::parse(&bytes, false, &loc()).unwrap();
        assert_eq!(a.seek_header, 302 ^ (1 << 8));
        // The prefix is not checksummed.
        let mut bytes = REAL;
        bytes[5] = 7;
        assert!(Anchor::parse(&bytes, true, &loc()).is_ok());
    }

    #[test]
    fn later_class_versions_may_append_fields() {
        let mut bytes = REAL[..70].to_vec();
        bytes.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        let ck = xxh3_64(&bytes[6..]);
        bytes.extend_from_slice(&ck.to_be_bytes());
        let a = Anchor::parse(&bytes, true, &loc()).unwrap();
        assert_eq!(a.max_key_size, 1 << 30);
    }

    #[test]
    fn accepts_any_1_x_and_rejects_other_epochs() {
        let base = Anchor::parse(&REAL, true, &loc()).unwrap();
        let v1020 = Anchor { version_minor: 2, ..base.clone() };
        assert_eq!(Anchor::parse(&v1020.to_bytes(), true, &loc()).unwrap(), v1020);
        let v1900 = Anchor { version_major: 9, ..base.clone() };
        assert!(Anchor::parse(&v1900.to_bytes(), true, &loc()).is_ok());
        for epoch in [0, 2] {
            let other = Anchor { version_epoch: epoch, ..base.clone() };
            assert!(matches!(Anchor::parse(&other.to_bytes(), true, &loc()), Err(Error::Unsupported { .. })));
        }
    }

    #[test]
    fn rejects_short_payload_accepts_zero_max_key_size() {
        assert!(matches!(Anchor::parse(&REAL[..77], false, &loc()), Err(Error::Truncated { .. })));
        assert!(matches!(Anchor::parse(&[], false, &loc()), Err(Error::Truncated { .. })));
        let base = Anchor::parse(&REAL, true, &loc()).unwrap();
        let zero = Anchor { max_key_size: 0, ..base };
        // uproot 5.7 writes 0: no payload is split over keys.
        assert_eq!(Anchor::parse(&zero.to_bytes(), true, &loc()).unwrap().max_key_size, 0);
    }
}
