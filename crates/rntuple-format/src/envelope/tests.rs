//! Envelopes built by hand (through the writers and a few raw edits) and
//! parsed back, including every kind of damage a hostile file can carry.

use super::*;
use crate::model::*;

/// Re-stamps length and checksum of an envelope whose body (everything but
/// the checksum) was edited or truncated.
fn reseal(body: &[u8]) -> Vec<u8> {
    let mut v = body.to_vec();
    let len = (v.len() + 8) as u64;
    let word = u64::from_le_bytes(v[..8].try_into().unwrap()) & 0xFFFF | (len << 16);
    v[..8].copy_from_slice(&word.to_le_bytes());
    let sum = xxh3_64(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    v
}

fn field(name: &str, parent: u32, role: StructuralRole) -> FieldDescriptor {
    FieldDescriptor {
        field_version: 0,
        type_version: 0,
        parent_id: parent,
        role,
        flags: 0,
        name: name.into(),
        type_name: "std::int32_t".into(),
        type_alias: String::new(),
        description: String::new(),
        array_size: None,
        source_field_id: None,
        type_checksum: None,
    }
}

fn column(ct: ColumnType, field_id: u32) -> ColumnDescriptor {
    ColumnDescriptor {
        column_type: ct,
        bits_on_storage: ct.default_bits().unwrap_or(16),
        field_id,
        flags: 0,
        representation_index: 0,
        first_element_index: None,
        value_range: None,
    }
}

fn sample_schema() -> SchemaDescription {
    let mut arr = field("arr", 0, StructuralRole::Leaf);
    arr.type_name = "std::array<float,3>".into();
    arr.array_size = Some(3);
    arr.flags = FIELD_FLAG_REPETITIVE;
    let mut proj = field("proj", 2, StructuralRole::Leaf);
    proj.source_field_id = Some(0);
    proj.flags = FIELD_FLAG_PROJECTED;
    let mut cls = field("cls", 3, StructuralRole::Record);
    cls.type_checksum = Some(0xDEAD_BEEF);
    cls.flags = FIELD_FLAG_TYPE_CHECKSUM;
    cls.type_alias = "MyAlias".into();
    cls.description = "a class — with UTF-8".into();
    let future = field("future", 4, StructuralRole::Unknown(0x99));

    let mut quant = column(ColumnType::Real32Quant, 1);
    quant.bits_on_storage = 12;
    quant.value_range = Some((-1.0, 1.0));
    quant.flags = COLUMN_FLAG_RANGE;
    let mut deferred = column(ColumnType::SplitInt32, 0);
    deferred.first_element_index = Some(1000);
    deferred.flags = COLUMN_FLAG_DEFERRED;
    deferred.representation_index = 1;
    let mut suppressed = column(ColumnType::Real32, 0);
    suppressed.first_element_index = Some(-2000);
    suppressed.flags = COLUMN_FLAG_DEFERRED;
    let unknown = column(ColumnType::Unknown(0x77), 4);

    SchemaDescription {
        fields: vec![field("x", 0, StructuralRole::Leaf), arr, proj, cls, future],
        columns: vec![column(ColumnType::SplitInt32, 0), quant, deferred, suppressed, unknown],
        alias_columns: vec![AliasColumnDescriptor { physical_column_id: 0, field_id: 2 }],
        extra_type_info: vec![ExtraTypeInfo {
            content_id: 0,
            type_version: 0,
            type_name: String::new(),
            content: vec![1, 2, 3, 0, 255],
        }],
        unknown_trailing_bytes: Vec::new(),
    }
}

fn sample_header() -> Header {
    Header {
        feature_flags: vec![0],
        name: "ntuple".into(),
        description: "a test".into(),
        writer: "rntuple test".into(),
        schema: sample_schema(),
    }
}

fn sample_footer(header_checksum: u64) -> Footer {
    let mut ext = SchemaDescription::default();
    ext.fields.push(field("late", 5, StructuralRole::Leaf));
    let mut c = column(ColumnType::Int64, 5);
    c.first_element_index = Some(42);
    c.flags = COLUMN_FLAG_DEFERRED;
    ext.columns.push(c);
    Footer {
        feature_flags: vec![0],
        header_checksum,
        schema_extension: ext,
        cluster_groups: vec![
            ClusterGroupDescriptor {
                min_entry: 0,
                entry_span: 100,
                num_clusters: 2,
                page_list: EnvelopeLink { length: 500, locator: Locator { offset: 1000, size: 200 } },
            },
            ClusterGroupDescriptor {
                min_entry: 100,
                entry_span: 5,
                num_clusters: 1,
                page_list: EnvelopeLink { length: 300, locator: Locator { offset: 1 << 40, size: 1 << 33 } },
            },
        ],
        attribute_sets: Vec::new(),
    }
}

fn sample_page_list(header_checksum: u64) -> PageList {
    let page =
        |n, c, off, size| PageDescriptor { num_elements: n, has_checksum: c, locator: Locator { offset: off, size } };
    PageList {
        header_checksum,
        clusters: vec![
            ClusterSummary { first_entry: 0, num_entries: 60, flags: 0 },
            ClusterSummary { first_entry: 60, num_entries: 40, flags: 0x80 },
        ],
        page_locations: vec![
            vec![
                ColumnPageRange {
                    element_offset: 0,
                    compression: Some(505),
                    pages: vec![page(30, true, 100, 50), page(30, false, 158, 60)],
                },
                ColumnPageRange { element_offset: i64::MIN, compression: None, pages: vec![] },
            ],
            vec![
                ColumnPageRange {
                    element_offset: 60,
                    compression: Some(0),
                    pages: vec![page(40, true, 1 << 35, 3 << 31)],
                },
                ColumnPageRange { element_offset: -60, compression: None, pages: vec![] },
            ],
        ],
    }
}

#[test]
fn header_round_trip() {
    let h = sample_header();
    let (bytes, sum) = write_header(&h).unwrap();
    assert_eq!(sum, header_checksum(&bytes).unwrap());
    assert_eq!(sum, xxh3_64(&bytes[..bytes.len() - 8]));
    assert_eq!(parse_header(&bytes, true).unwrap(), h);
    // preamble: type 1 in the low 16 bits, length in the high 48 bits
    assert_eq!(u16::from_le_bytes([bytes[0], bytes[1]]), 1);
    assert_eq!(u64::from_le_bytes(bytes[..8].try_into().unwrap()) >> 16, bytes.len() as u64);
}

#[test]
fn footer_round_trip() {
    let f = sample_footer(0x1234);
    let (bytes, _) = write_footer(&f).unwrap();
    assert_eq!(parse_footer(&bytes, true).unwrap(), f);
    let empty = Footer { schema_extension: SchemaDescription::default(), ..f };
    let (bytes, _) = write_footer(&empty).unwrap();
    assert_eq!(parse_footer(&bytes, true).unwrap(), empty);
}

#[test]
fn page_list_round_trip() {
    let mut p = sample_page_list(7);
    let (bytes, _) = write_page_list(&p).unwrap();
    let back = parse_page_list(&bytes, true).unwrap();
    // suppressed columns are written with the lowest i64
    p.page_locations[1][1].element_offset = i64::MIN;
    assert_eq!(back, p);
    assert!(back.page_locations[0][1].is_suppressed());
}

#[test]
fn checksum_mismatch_is_detected() {
    let (mut bytes, _) = write_header(&sample_header()).unwrap();
    let n = bytes.len();
    bytes[20] ^= 0x01;
    match parse_header(&bytes, true) {
        Err(Error::ChecksumMismatch { location, .. }) => {
            assert!(location.context.contains("header envelope"));
            assert_eq!(location.offset, Some(n as u64 - 8));
        }
        other => panic!("{other:?}"),
    }
    // without verification the flipped byte (inside the name length) is parsed
    let _ = parse_header(&bytes, false);
    let (mut bytes, _) = write_footer(&sample_footer(1)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x80;
    assert!(matches!(parse_footer(&bytes, true), Err(Error::ChecksumMismatch { .. })));
    assert!(parse_footer(&bytes, false).is_ok());
    let (mut bytes, _) = write_page_list(&sample_page_list(1)).unwrap();
    bytes[9] ^= 0x10;
    assert!(matches!(parse_page_list(&bytes, true), Err(Error::ChecksumMismatch { .. })));
}

#[test]
fn wrong_type_and_length() {
    let (bytes, _) = write_header(&sample_header()).unwrap();
    assert!(parse_footer(&bytes, true).is_err());
    assert!(parse_page_list(&bytes, true).is_err());
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(parse_header(&longer, false).is_err());
    assert!(parse_header(&bytes[..bytes.len() - 1], false).is_err());
    assert!(header_checksum(&bytes[..10]).is_err());
}

#[test]
fn truncated_header_at_every_length() {
    let (bytes, _) = write_header(&sample_header()).unwrap();
    for cut in 0..bytes.len() {
        // plain prefix: the length field no longer matches
        assert!(parse_header(&bytes[..cut], true).is_err(), "prefix {cut}");
        // prefix re-stamped as a valid envelope: the parser meets a truncated structure
        if cut >= 8 {
            let env = reseal(&bytes[..cut]);
            if cut < bytes.len() - 8 {
                assert!(parse_header(&env, true).is_err(), "resealed prefix {cut}");
            }
        }
    }
}

#[test]
fn truncated_footer_and_page_list_never_panic() {
    let (f, _) = write_footer(&sample_footer(3)).unwrap();
    // The footer ends with the (empty) list frame of attribute sets, 12 bytes
    // that a 1.0.0 reader may lack; cuts inside the structure before it fail.
    let attribute_sets = 12;
    for cut in 8..f.len() - 8 - attribute_sets {
        assert!(parse_footer(&reseal(&f[..cut]), true).is_err(), "footer prefix {cut}");
    }
    assert!(parse_footer(&reseal(&f[..f.len() - 8 - attribute_sets]), true).is_ok());
    let (p, _) = write_page_list(&sample_page_list(3)).unwrap();
    for cut in 8..p.len() - 8 {
        assert!(parse_page_list(&reseal(&p[..cut]), true).is_err(), "page list prefix {cut}");
    }
}

#[test]
fn mutated_envelopes_never_panic() {
    let (h, _) = write_header(&sample_header()).unwrap();
    let (f, _) = write_footer(&sample_footer(3)).unwrap();
    let (p, _) = write_page_list(&sample_page_list(3)).unwrap();
    for (bytes, which) in [(h, 0), (f, 1), (p, 2)] {
        let body = &bytes[..bytes.len() - 8];
        for i in 8..body.len() {
            for v in [0x00u8, 0xFF, 0x80, 0x7F, body[i] ^ 0x01, body[i].wrapping_add(8)] {
                let mut m = body.to_vec();
                m[i] = v;
                let env = reseal(&m);
                let _ = match which {
                    0 => parse_header(&env, true).map(|_| ()),
                    1 => parse_footer(&env, true).map(|_| ()),
                    _ => parse_page_list(&env, true).map(|_| ()),
                };
            }
        }
    }
}

/// Offset of the field list frame in a header written by `write_header`.
fn field_list_offset(h: &Header) -> usize {
    8 + 8 * h.feature_flags.len().max(1) + 12 + h.name.len() + h.description.len() + h.writer.len()
}

#[test]
fn absurd_list_counts_are_refused() {
    let h = sample_header();
    let (bytes, _) = write_header(&h).unwrap();
    let off = field_list_offset(&h);
    assert!(i64::from_le_bytes(bytes[off..off + 8].try_into().unwrap()) < 0, "a list frame");
    for count in [1u32 << 31, u32::MAX, 6] {
        let mut body = bytes[..bytes.len() - 8].to_vec();
        body[off + 8..off + 12].copy_from_slice(&count.to_le_bytes());
        let err = parse_header(&reseal(&body), true).unwrap_err();
        if count > 1000 {
            assert!(matches!(err, Error::WouldOverAllocate { .. }), "{err}");
        }
    }
    // a list frame claiming more bytes than the envelope has
    let mut body = bytes[..bytes.len() - 8].to_vec();
    body[off..off + 8].copy_from_slice(&(-(1i64 << 40)).to_le_bytes());
    assert!(matches!(parse_header(&reseal(&body), true), Err(Error::Truncated { .. })));
}

#[test]
fn feature_flags() {
    let mut h = sample_header();
    h.feature_flags = vec![0, 0, 0];
    let (bytes, _) = write_header(&h).unwrap();
    assert_eq!(parse_header(&bytes, true).unwrap().feature_flags, vec![0, 0, 0]);
    for (words, bit) in [(vec![1u64 << 5], 5u32), (vec![0, 1 << 2], 65)] {
        h.feature_flags = words;
        let (bytes, _) = write_header(&h).unwrap();
        match parse_header(&bytes, true) {
            Err(Error::Unsupported { feature, .. }) => assert_eq!(feature, format!("feature flag bit {bit}")),
            other => panic!("{other:?}"),
        }
    }
    h.feature_flags = vec![1];
    let (bytes, _) = write_header(&h).unwrap();
    match parse_header(&bytes, true) {
        Err(Error::Unsupported { feature, .. }) => {
            assert_eq!(feature, "feature flag bit 0: nested deferred columns (format 1.1)")
        }
        other => panic!("{other:?}"),
    }
    let mut f = sample_footer(0);
    f.feature_flags = vec![1 << 62];
    let (bytes, _) = write_footer(&f).unwrap();
    assert!(matches!(parse_footer(&bytes, true), Err(Error::Unsupported { .. })));
    // bit 63 cannot be written as a flag
    h.feature_flags = vec![1 << 63];
    assert!(write_header(&h).is_err());
}

#[test]
fn unknown_trailing_data_is_skipped() {
    // A header written by a "newer" writer: extra bytes at the end of a field
    // record, of the column list frame, and of the envelope.
    let mut w = begin(ENVELOPE_TYPE_HEADER);
    w.u64(0);
    for s in ["n", "d", "w"] {
        w.string(s).unwrap();
    }
    let list = w.begin_list(1).unwrap();
    let rec = w.begin_record();
    w.u32(0);
    w.u32(0);
    w.u32(0);
    w.u16(0);
    w.u16(0x80); // unknown field flag
    for s in ["f", "float", "", ""] {
        w.string(s).unwrap();
    }
    w.bytes(b"newer field data");
    w.end_frame(rec);
    w.end_frame(list);
    let list = w.begin_list(1).unwrap();
    let rec = w.begin_record();
    w.u16(0x0C);
    w.u16(32);
    w.u32(0);
    w.u16(0x40); // unknown column flag
    w.u16(0);
    w.end_frame(rec);
    w.bytes(b"list padding");
    w.end_frame(list);
    for _ in 0..2 {
        let list = w.begin_list(0).unwrap();
        w.end_frame(list);
    }
    w.bytes(b"trailing envelope data");
    let (bytes, _) = finish(w).unwrap();
    let h = parse_header(&bytes, true).unwrap();
    assert_eq!(h.schema.fields[0].name, "f");
    assert_eq!(h.schema.fields[0].flags, 0x80);
    assert_eq!(h.schema.columns[0].column_type, ColumnType::Real32);
    assert_eq!(h.schema.columns[0].flags, 0x40);
    // The field record's 16 extra bytes are counted (what merge refuses);
    // the list frame's padding belongs to no record.
    assert_eq!(h.schema.unknown_trailing_bytes, [("field 0 'f'".to_string(), 16)]);
}

#[test]
fn record_frame_where_a_list_is_expected() {
    let mut w = begin(ENVELOPE_TYPE_HEADER);
    w.u64(0);
    for s in ["n", "d", "w"] {
        w.string(s).unwrap();
    }
    let rec = w.begin_record();
    w.end_frame(rec);
    let (bytes, _) = finish(w).unwrap();
    assert!(matches!(parse_header(&bytes, true), Err(Error::OutOfSpec { .. })));
}

#[test]
fn sharded_clusters_are_unsupported() {
    let mut p = sample_page_list(0);
    p.clusters[0].flags = 0x01;
    let (bytes, _) = write_page_list(&p).unwrap();
    match parse_page_list(&bytes, true) {
        Err(Error::Unsupported { feature, location }) => {
            assert!(feature.contains("sharded"));
            assert!(location.context.contains("cluster summary 0"), "{location}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn page_list_consistency() {
    // more cluster summaries than page location lists
    let mut p = sample_page_list(0);
    p.page_locations.pop();
    assert!(write_page_list(&p).is_err());
    // hand-edit: suppressed column that lists pages
    let mut w = begin(ENVELOPE_TYPE_PAGE_LIST);
    w.u64(0);
    let l = w.begin_list(1).unwrap();
    let r = w.begin_record();
    w.u64(0);
    w.u64(1);
    w.end_frame(r);
    w.end_frame(l);
    let top = w.begin_list(1).unwrap();
    let outer = w.begin_list(1).unwrap();
    let inner = w.begin_list(1).unwrap();
    w.i32(1);
    crate::locator::write_locator(&mut w, &Locator { offset: 0, size: 4 });
    w.i64(-1);
    w.end_frame(inner);
    w.end_frame(outer);
    w.end_frame(top);
    let (bytes, _) = finish(w).unwrap();
    let err = parse_page_list(&bytes, true).unwrap_err();
    assert!(err.to_string().contains("suppressed"), "{err}");
}

#[test]
fn unknown_locator_in_page_list() {
    let mut w = begin(ENVELOPE_TYPE_PAGE_LIST);
    w.u64(0);
    let l = w.begin_list(1).unwrap();
    let r = w.begin_record();
    w.u64(0);
    w.u64(1);
    w.end_frame(r);
    w.end_frame(l);
    let top = w.begin_list(1).unwrap();
    let outer = w.begin_list(1).unwrap();
    let inner = w.begin_list(1).unwrap();
    w.i32(1);
    w.i32(-(16 | (2 << 24)));
    w.u32(4);
    w.u64(77);
    w.i64(0);
    w.u32(505);
    w.end_frame(inner);
    w.end_frame(outer);
    w.end_frame(top);
    let (bytes, _) = finish(w).unwrap();
    match parse_page_list(&bytes, true) {
        Err(Error::Unsupported { feature, location }) => {
            assert!(feature.contains("locator type 0x02"), "{feature}");
            assert!(location.context.contains("page 0"), "{location}");
            assert!(location.offset.is_some());
        }
        other => panic!("{other:?}"),
    }
}
