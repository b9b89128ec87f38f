//! The footer's list of linked attribute sets (RNTuple binary format 1.0.1.0
//! and later, spec sections "Footer Envelope" and "Linked Attribute Set
//! Record Frame"; ROOT 6.40 `RNTupleSerializer::SerializeAttributeSet`).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |     Schema Version Major      |     Schema Version Minor      |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |              Attribute Anchor Uncompressed Size               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! locator of the attribute RNTuple's anchor object, then its name (string)
//! ```
//!
//! Each record sits in its own record frame inside one list frame, the last
//! item of the footer. A footer of format 1.0.0.x ends before that list;
//! ROOT reads the list only when bytes are left before the checksum, and so
//! does [`read_attribute_sets`]'s caller. The spec asks for non-empty,
//! distinct names; a list breaking that is refused here with the offset of
//! the offending record.

use crate::constants::RECORD_FRAME_PREAMBLE_SIZE;
use crate::error::Result;
use crate::frame::{Reader, Writer};
use crate::locator::{read_locator, write_locator};
use crate::model::AttributeSetLink;

/// Smallest record: frame preamble, two u16, a u32, a 12-byte locator and an
/// empty string's length.
const MIN_RECORD_SIZE: usize = RECORD_FRAME_PREAMBLE_SIZE + 2 + 2 + 4 + 12 + 4;

/// Reads the list frame of linked attribute set records.
pub(crate) fn read_attribute_sets(r: &mut Reader<'_>) -> Result<Vec<AttributeSetLink>> {
    let (n, mut list) = r.list_frame(MIN_RECORD_SIZE, "linked attribute set list frame")?;
    let mut sets: Vec<AttributeSetLink> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let what = format!("linked attribute set {i}");
        let at = list.clone();
        let mut f = list.record_frame("linked attribute set record frame").map_err(|e| e.within(&what))?;
        let link = (|| {
            Ok(AttributeSetLink {
                schema_version_major: f.u16("attribute schema version major")?,
                schema_version_minor: f.u16("attribute schema version minor")?,
                anchor_length: f.u32("attribute anchor uncompressed size")?,
                anchor_locator: read_locator(&mut f, "attribute anchor locator")?,
                name: f.string("attribute set name")?,
            })
        })()
        .map_err(|e: crate::Error| e.within(&what))?;
        if link.name.is_empty() {
            return Err(at.out_of_spec(&what, "the attribute set has an empty name"));
        }
        if sets.iter().any(|s| s.name == link.name) {
            return Err(at.out_of_spec(&what, format!("a second attribute set named '{}'", link.name)));
        }
        sets.push(link);
    }
    Ok(sets)
}

/// Writes the list frame of linked attribute set records.
pub(crate) fn write_attribute_sets(w: &mut Writer, sets: &[AttributeSetLink]) -> Result<()> {
    w.record_list(sets, |w, s| {
        w.u16(s.schema_version_major);
        w.u16(s.schema_version_minor);
        w.u32(s.anchor_length);
        write_locator(w, &s.anchor_locator);
        w.string(&s.name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{parse_footer, write_footer};
    use crate::model::{Footer, Locator};
    use crate::Error;

    /// The end of a footer ROOT 6.40 wrote for one attribute set "runs"
    /// (schema 1.0) whose 78-byte anchor is at offset 1474.
    const ROOT_LIST: [u8; 56] = [
        0xd0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, // list frame, 48 bytes, 1 item
        0x24, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // record frame, 36 bytes
        0x01, 0x00, 0x00, 0x00, 0x4e, 0x00, 0x00, 0x00, // 1.0, 78 bytes
        0x4e, 0x00, 0x00, 0x00, 0xc2, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 78 bytes at 1474
        0x04, 0x00, 0x00, 0x00, b'r', b'u', b'n', b's', // "runs"
        0, 0, 0, 0, 0, 0, 0, 0, // (what follows the list)
    ];

    fn runs() -> AttributeSetLink {
        AttributeSetLink {
            schema_version_major: 1,
            schema_version_minor: 0,
            anchor_length: 78,
            anchor_locator: Locator { offset: 1474, size: 78 },
            name: "runs".into(),
        }
    }

    #[test]
    fn reads_and_writes_roots_bytes() {
        let mut r = Reader::new(&ROOT_LIST, "footer envelope");
        assert_eq!(read_attribute_sets(&mut r).unwrap(), vec![runs()]);
        assert_eq!(r.remaining(), 8);
        let mut w = Writer::new();
        write_attribute_sets(&mut w, &[runs()]).unwrap();
        assert_eq!(w.as_slice(), &ROOT_LIST[..48]);
    }

    #[test]
    fn empty_list_is_twelve_bytes() {
        let mut w = Writer::new();
        write_attribute_sets(&mut w, &[]).unwrap();
        assert_eq!(w.as_slice(), &[0xf4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        assert!(read_attribute_sets(&mut Reader::new(w.as_slice(), "footer envelope")).unwrap().is_empty());
    }

    #[test]
    fn later_fields_in_a_record_are_skipped() {
        let mut w = Writer::new();
        let list = w.begin_list(2).unwrap();
        for name in ["a", "b"] {
            let rec = w.begin_record();
            w.u16(1);
            w.u16(7);
            w.u32(78);
            write_locator(&mut w, &Locator { offset: 100, size: 78 });
            w.string(name).unwrap();
            w.u64(0xdead_beef); // a field of a later minor version
            w.end_frame(rec);
        }
        w.end_frame(list);
        let sets = read_attribute_sets(&mut Reader::new(w.as_slice(), "footer envelope")).unwrap();
        assert_eq!(
            sets.iter().map(|s| (s.name.as_str(), s.schema_version_minor)).collect::<Vec<_>>(),
            [("a", 7), ("b", 7)]
        );
    }

    fn message(e: Error) -> String {
        e.to_string()
    }

    #[test]
    fn truncated_record_names_the_set_and_offset() {
        // The name's length claims more bytes than its record frame holds.
        let mut bytes = ROOT_LIST[..48].to_vec();
        bytes[40] = 9;
        let e = read_attribute_sets(&mut Reader::new(&bytes, "footer envelope")).unwrap_err();
        let m = message(e);
        assert!(m.contains("linked attribute set 0"), "{m}");
        assert!(m.contains("attribute set name"), "{m}");
        assert!(m.contains("offset 44"), "{m}"); // where the name's bytes start
    }

    #[test]
    fn list_claiming_more_records_than_fit_is_refused() {
        let mut bytes = ROOT_LIST[..48].to_vec();
        bytes[8] = 2;
        let e = read_attribute_sets(&mut Reader::new(&bytes, "footer envelope")).unwrap_err();
        assert!(message(e).contains("linked attribute set list frame"));
    }

    #[test]
    fn empty_and_duplicate_names_are_refused_with_their_offset() {
        let write = |names: &[&str]| {
            let sets: Vec<_> = names.iter().map(|n| AttributeSetLink { name: n.to_string(), ..runs() }).collect();
            let mut w = Writer::new();
            write_attribute_sets(&mut w, &sets).unwrap();
            w.into_inner()
        };
        let m = message(read_attribute_sets(&mut Reader::new(&write(&[""]), "footer envelope")).unwrap_err());
        assert!(m.contains("empty name") && m.contains("offset 12"), "{m}");
        let m = message(read_attribute_sets(&mut Reader::new(&write(&["x", "x"]), "footer envelope")).unwrap_err());
        assert!(m.contains("second attribute set named 'x'") && m.contains("offset 45"), "{m}");
    }

    #[test]
    fn a_record_frame_where_the_list_should_be_is_refused() {
        let mut w = Writer::new();
        let rec = w.begin_record();
        w.end_frame(rec);
        let m = message(read_attribute_sets(&mut Reader::new(w.as_slice(), "footer envelope")).unwrap_err());
        assert!(m.contains("expected a list frame"), "{m}");
    }

    // --- the list inside a whole footer envelope -------------------------

    fn footer(sets: Vec<AttributeSetLink>) -> Footer {
        Footer { feature_flags: vec![0], header_checksum: 7, attribute_sets: sets, ..Default::default() }
    }

    #[test]
    fn footer_round_trips_its_attribute_sets() {
        let flags =
            AttributeSetLink { anchor_locator: Locator { offset: 5 << 32, size: 60 }, name: "flags".into(), ..runs() };
        let sets = vec![runs(), flags];
        let (bytes, _) = write_footer(&footer(sets.clone())).unwrap();
        assert_eq!(parse_footer(&bytes, true).unwrap().attribute_sets, sets);
    }

    #[test]
    fn footer_without_the_list_has_no_attribute_sets() {
        // A 1.0.0.x footer ends after the cluster groups: drop the 12-byte
        // empty list and reseal.
        let (bytes, _) = write_footer(&footer(Vec::new())).unwrap();
        let body = &bytes[..bytes.len() - 8 - 12];
        let mut w = Writer::new();
        w.bytes(body);
        let mut env = w.into_inner();
        let len = (env.len() + 8) as u64;
        env[2..8].copy_from_slice(&len.to_le_bytes()[..6]);
        let ck = crate::checksum::xxh3_64(&env);
        env.extend_from_slice(&ck.to_le_bytes());
        assert!(parse_footer(&env, true).unwrap().attribute_sets.is_empty());
    }

    #[test]
    fn a_bad_record_in_a_footer_names_the_footer_offset() {
        let set = AttributeSetLink { name: "x".into(), ..Default::default() };
        let (mut bytes, _) = write_footer(&footer(vec![set])).unwrap();
        // Empty the name: its length (1) becomes 0; the record is then short
        // of nothing but names nothing.
        let at = bytes.len() - 8 - 1 - 4;
        bytes[at] = 0;
        let n = bytes.len();
        let ck = crate::checksum::xxh3_64(&bytes[..n - 8]);
        bytes[n - 8..].copy_from_slice(&ck.to_le_bytes());
        let m = parse_footer(&bytes, true).unwrap_err().to_string();
        let record_at = n - 8 - 33;
        assert!(m.contains("empty name") && m.contains(&format!("offset {record_at}")), "{m}");
    }
}
