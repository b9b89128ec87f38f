//! Locators and envelope links (RNTuple binary format 1.0, section
//! "Locators and Envelope Links").
//!
//! Standard on-disk locator (T = 0):
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                             Size                            |T|
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            Offset (64 bit)                    |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Non-standard locator (T = 1): the first 32-bit word, negated, holds the
//! locator's own size in bits 0:15 (counting that word), a reserved byte in
//! bits 16:23 and the locator type in bits 24:30; the payload follows. This
//! reading of the diagram is the one of the files ROOT writes
//! (`RNTupleSerializer::SerializeLocator` stores `-(size | reserved << 16 |
//! type << 24)`). Type 0x01 ("large") carries a 64-bit size and a 64-bit
//! offset; every other type is rejected as unsupported.

use crate::constants::{LOCATOR_LARGE_PAYLOAD_SIZE, LOCATOR_STANDARD_SIZE, LOCATOR_TYPE_LARGE, LOCATOR_TYPE_OBJECT64};
use crate::error::Result;
use crate::frame::{Reader, Writer};
use crate::model::{EnvelopeLink, Locator};

/// Smallest number of bytes a locator can occupy.
pub const MIN_LOCATOR_SIZE: usize = 4;

/// Reads a standard or large locator.
pub fn read_locator(r: &mut Reader<'_>, what: &str) -> Result<Locator> {
    let start = r.clone();
    let head = r.i32(what)?;
    if head >= 0 {
        let offset = r.u64(what)?;
        return Ok(Locator { offset, size: head.unsigned_abs().into() });
    }
    let word = head.unsigned_abs();
    let own_size = (word & 0xFFFF) as usize;
    let locator_type = ((word >> 24) & 0x7F) as u8;
    if own_size < MIN_LOCATOR_SIZE {
        return Err(start.out_of_spec(what, format!("non-standard locator claims a size of {own_size} bytes")));
    }
    let mut payload = r.sub(own_size - MIN_LOCATOR_SIZE, what)?;
    match locator_type {
        LOCATOR_TYPE_LARGE => {
            payload.ensure(LOCATOR_LARGE_PAYLOAD_SIZE, what)?;
            let size = payload.u64(what)?;
            let offset = payload.u64(what)?;
            Ok(Locator { offset, size })
        }
        LOCATOR_TYPE_OBJECT64 => Err(start
            .unsupported(what, "locator type 0x02 (object store / DAOS object id); only on-disk locators can be read")),
        t => Err(start.unsupported(what, format!("locator type {t:#04x}"))),
    }
}

/// Reads an envelope link: 64-bit uncompressed length, then a locator.
pub fn read_envelope_link(r: &mut Reader<'_>, what: &str) -> Result<EnvelopeLink> {
    let length = r.u64(what)?;
    let locator = read_locator(r, what)?;
    Ok(EnvelopeLink { length, locator })
}

/// Writes a locator: standard when the size fits in 31 bits, large otherwise.
pub fn write_locator(w: &mut Writer, loc: &Locator) {
    match i32::try_from(loc.size) {
        Ok(size) => {
            w.i32(size);
            w.u64(loc.offset);
        }
        Err(_) => {
            let own = (MIN_LOCATOR_SIZE + LOCATOR_LARGE_PAYLOAD_SIZE) as i32;
            w.i32(-(own | (i32::from(LOCATOR_TYPE_LARGE) << 24)));
            w.u64(loc.size);
            w.u64(loc.offset);
        }
    }
}

/// Writes an envelope link.
pub fn write_envelope_link(w: &mut Writer, link: &EnvelopeLink) {
    w.u64(link.length);
    write_locator(w, &link.locator);
}

/// Bytes a standard locator takes (the common case, for size estimates).
pub const STANDARD_LOCATOR_SIZE: usize = LOCATOR_STANDARD_SIZE;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn round_trip(loc: Locator) -> (Locator, usize) {
        let mut w = Writer::new();
        write_locator(&mut w, &loc);
        let buf = w.into_inner();
        let mut r = Reader::new(&buf, "t");
        let back = read_locator(&mut r, "loc").unwrap();
        assert!(r.is_empty());
        (back, buf.len())
    }

    #[test]
    fn standard_and_large_round_trip() {
        let small = Locator { offset: 1234, size: 77 };
        assert_eq!(round_trip(small), (small, 12));
        let big = Locator { offset: 1 << 40, size: 3 << 31 };
        assert_eq!(round_trip(big), (big, 20));
    }

    #[test]
    fn large_locator_as_root_writes_it() {
        // head = -(20 | 0x01 << 24)
        let mut w = Writer::new();
        w.i32(-(20 | (1 << 24)));
        w.u64(5_000_000_000);
        w.u64(99);
        let buf = w.into_inner();
        let loc = read_locator(&mut Reader::new(&buf, "t"), "loc").unwrap();
        assert_eq!(loc, Locator { offset: 99, size: 5_000_000_000 });
    }

    #[test]
    fn object_store_locators_are_unsupported() {
        let mut w = Writer::new();
        w.i32(-(16 | (2 << 24)));
        w.u32(10);
        w.u64(99);
        let buf = w.into_inner();
        let err = read_locator(&mut Reader::new(&buf, "t"), "loc").unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref feature, .. } if feature.contains("0x02")), "{err}");
        let mut w = Writer::new();
        w.i32(-(4 | (0x33 << 24)));
        let buf = w.into_inner();
        let err = read_locator(&mut Reader::new(&buf, "t"), "loc").unwrap_err();
        assert!(matches!(err, Error::Unsupported { ref feature, .. } if feature.contains("0x33")), "{err}");
    }

    #[test]
    fn malformed_locators_fail() {
        for head in [i32::MIN, -1, -(3 | (1 << 24)), -(12 | (1 << 24)), -(200 | (1 << 24))] {
            let mut w = Writer::new();
            w.i32(head);
            w.bytes(&[0; 16]);
            let buf = w.into_inner();
            assert!(read_locator(&mut Reader::new(&buf, "t"), "loc").is_err(), "head {head:#x}");
        }
    }
}
