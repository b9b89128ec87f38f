//! Parses the envelopes and pages of a file written by ROOT.
//!
//! `tests/data/test_int_float_rntuple_v1-0-0-0.root` comes from
//! scikit-hep-testdata (BSD-3-Clause). It holds one RNTuple "ntuple" with the
//! fields `one_integers` (std::int32_t) and `two_floats` (float), written by
//! ROOT v6.35 with zstd compression (setting 505).
//!
//! Finding the anchor belongs to the container layer; here the test locates
//! the `ROOT::RNTuple` key by its class name and reads the anchor fields
//! (big-endian, after ROOT's 4-byte byte count and 2-byte class version).
#![allow(clippy::unwrap_used, clippy::panic)]

use rntuple_format::checksum::xxh3_64;
use rntuple_format::compression::decompress;
use rntuple_format::envelope::{header_checksum, parse_footer, parse_header, parse_page_list};
use rntuple_format::model::{ColumnType, Footer, Header, PageList, StructuralRole};
use rntuple_format::{decode_page, ColumnSpec, ColumnValues, Location};

struct Anchor {
    seek_header: u64,
    nbytes_header: u64,
    len_header: u64,
    seek_footer: u64,
    nbytes_footer: u64,
    len_footer: u64,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(b[at..at + 2].try_into().unwrap())
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

fn anchor(file: &[u8]) -> Anchor {
    let class = file.windows(13).position(|w| w == b"ROOT::RNTuple").unwrap();
    // class name, then name and title, each with a length byte
    let name_len = file[class + 13] as usize;
    let title_len = file[class + 14 + name_len] as usize;
    let obj = class + 15 + name_len + title_len;
    let a = obj + 6; // skip byte count and class version
    assert_eq!(be16(file, a), 1, "format epoch 1");
    let at = |i: usize| be64(file, a + 8 + 8 * i);
    Anchor {
        seek_header: at(0),
        nbytes_header: at(1),
        len_header: at(2),
        seek_footer: at(3),
        nbytes_footer: at(4),
        len_footer: at(5),
    }
}

fn blob(file: &[u8], offset: u64, size: u64) -> &[u8] {
    &file[offset as usize..(offset + size) as usize]
}

struct Decoded {
    header: Header,
    footer: Footer,
    page_lists: Vec<PageList>,
    /// Per physical column: its field name and the values of all its pages
    /// (primary representations only).
    columns: Vec<(String, ColumnType, ColumnValues)>,
}

fn decode_file(file: &[u8]) -> Decoded {
    let a = anchor(file);
    let loc = |what: &str, offset| Location::new(what, Some(offset));

    let header_bytes =
        decompress(blob(file, a.seek_header, a.nbytes_header), a.len_header as usize, &loc("header", a.seek_header))
            .unwrap();
    let header = parse_header(&header_bytes, true).unwrap();
    let hsum = header_checksum(&header_bytes).unwrap();

    let footer_bytes =
        decompress(blob(file, a.seek_footer, a.nbytes_footer), a.len_footer as usize, &loc("footer", a.seek_footer))
            .unwrap();
    let footer = parse_footer(&footer_bytes, true).unwrap();
    assert_eq!(footer.header_checksum, hsum);

    let mut fields = header.schema.fields.clone();
    fields.extend(footer.schema_extension.fields.iter().cloned());
    let mut all_columns = header.schema.columns.clone();
    all_columns.extend(footer.schema_extension.columns.iter().cloned());

    let mut columns: Vec<(String, ColumnType, ColumnValues)> = all_columns
        .iter()
        .map(|c| {
            let name = fields[c.field_id as usize].name.clone();
            (name, c.column_type, ColumnValues::for_column(c.column_type).unwrap())
        })
        .collect();

    let mut page_lists = Vec::new();
    for group in &footer.cluster_groups {
        let pl = group.page_list;
        let pl_bytes = decompress(
            blob(file, pl.locator.offset, pl.locator.size),
            pl.length as usize,
            &loc("page list", pl.locator.offset),
        )
        .unwrap();
        let page_list = parse_page_list(&pl_bytes, true).unwrap();
        assert_eq!(page_list.header_checksum, hsum);
        assert_eq!(page_list.clusters.len(), group.num_clusters as usize);
        for cluster in &page_list.page_locations {
            for (i, range) in cluster.iter().enumerate() {
                if range.is_suppressed() {
                    continue;
                }
                let spec = ColumnSpec::from_descriptor(&all_columns[i]).unwrap();
                for page in &range.pages {
                    let stored = blob(file, page.locator.offset, page.locator.size);
                    if page.has_checksum {
                        let sum = blob(file, page.locator.offset + page.locator.size, 8);
                        assert_eq!(u64::from_le_bytes(sum.try_into().unwrap()), xxh3_64(stored));
                    }
                    let len = spec.packed_size(u64::from(page.num_elements)) as usize;
                    let raw = decompress(stored, len, &loc("page", page.locator.offset)).unwrap();
                    decode_page(&spec, &raw, page.num_elements as usize, &mut columns[i].2).unwrap();
                }
            }
        }
        page_lists.push(page_list);
    }
    Decoded { header, footer, page_lists, columns }
}

#[test]
fn int_float() {
    let d = decode_file(include_bytes!("data/test_int_float_rntuple_v1-0-0-0.root"));
    assert_eq!(d.header.name, "ntuple");
    assert!(d.header.writer.starts_with("ROOT v6"), "{}", d.header.writer);
    assert_eq!(d.header.feature_flags, vec![0]);
    let names: Vec<_> = d.header.schema.fields.iter().map(|f| (f.name.as_str(), f.type_name.as_str())).collect();
    assert_eq!(names, [("one_integers", "std::int32_t"), ("two_floats", "float")]);
    assert!(d.header.schema.fields.iter().all(|f| f.role == StructuralRole::Leaf));
    let types: Vec<_> = d.columns.iter().map(|c| c.1).collect();
    assert_eq!(types, [ColumnType::SplitInt32, ColumnType::SplitReal32]);
    assert_eq!(d.footer.cluster_groups.len(), 1);
    assert_eq!(d.footer.cluster_groups[0].entry_span, 10);
    let range = &d.page_lists[0].page_locations[0][0];
    assert_eq!((range.element_offset, range.compression), (0, Some(505)));
    assert_eq!(d.columns[0].2, ColumnValues::I32((0..10).rev().collect()));
    assert_eq!(d.columns[1].2, ColumnValues::F32(vec![9.9, 8.8, 7.7, 6.6, 5.5, 4.4, 3.3, 2.2, 1.1, 0.0]));
}

fn column<'a>(d: &'a Decoded, name: &str, ct: ColumnType) -> &'a ColumnValues {
    &d.columns.iter().find(|c| c.0 == name && c.1 == ct).unwrap_or_else(|| panic!("no {ct} column of {name}")).2
}

fn f32s(v: &ColumnValues) -> &[f32] {
    match v {
        ColumnValues::F32(v) => v,
        other => panic!("{other:?}"),
    }
}

/// Real32Trunc and Real32Quant pages written by ROOT: checks the bit packing.
#[test]
fn float_types() {
    let d = decode_file(include_bytes!("data/test_float_types_rntuple_v1-0-0-0.root"));
    let full = f32s(column(&d, "trunc31", ColumnType::Real32Trunc)).to_vec();
    assert_eq!(full[0], 1.234_567_9);
    assert_eq!(full[3], -1.906_066_7);
    for bits in [10u32, 16, 24] {
        let t = f32s(column(&d, &format!("trunc{bits}"), ColumnType::Real32Trunc));
        let mask = u32::MAX << (32 - bits);
        for (x, y) in t.iter().zip(&full) {
            assert_eq!(x.to_bits(), y.to_bits() & mask, "trunc{bits}: ROOT truncates, never rounds");
        }
    }
    assert_eq!(f32s(column(&d, "trunc10", ColumnType::Real32Trunc))[0], 1.0);
    assert_eq!(f32s(column(&d, "trunc16", ColumnType::Real32Trunc))[0], 1.234_375);
    // quantized into [-2, 3]
    assert_eq!(f32s(column(&d, "quant1", ColumnType::Real32Quant)), [3.0, 3.0, -2.0, -2.0]);
    assert_eq!(f32s(column(&d, "quant8", ColumnType::Real32Quant)), [1.235_294_1, 1.666_666_6, 0.0, -1.901_960_7]);
    assert_eq!(f32s(column(&d, "quant32", ColumnType::Real32Quant)), [1.234_567_9, 1.666_666_6, 0.0, -1.906_066_8]);
    for name in ["quant16", "quant20", "quant24", "quant25"] {
        let q = f32s(column(&d, name, ColumnType::Real32Quant));
        assert_eq!(q.len(), 4);
        assert!((q[0] - 1.234_567_9).abs() < 1e-4, "{name}: {q:?}");
    }
}

#[test]
fn bit_column() {
    let d = decode_file(include_bytes!("data/test_bit_rntuple_v1-0-0-0.root"));
    let expected: Vec<bool> = (0..10).map(|i| i % 3 == 0).collect();
    assert_eq!(column(&d, "one_bit", ColumnType::Bit), &ColumnValues::Bool(expected));
}

#[test]
fn split_integers_with_zigzag() {
    let d = decode_file(include_bytes!("data/test_splitint_rntuple_v1-0-1-0.root"));
    assert_eq!(
        column(&d, "int16", ColumnType::SplitInt16),
        &ColumnValues::I16(vec![0, 1, -1, 16384, -16384, i16::MAX, i16::MIN])
    );
    assert_eq!(
        column(&d, "int32", ColumnType::SplitInt32),
        &ColumnValues::I32(vec![0, 1, -1, 1 << 30, -(1 << 30), i32::MAX, i32::MIN])
    );
    assert_eq!(
        column(&d, "int64", ColumnType::SplitInt64),
        &ColumnValues::I64(vec![0, 1, -1, 1 << 62, -(1 << 62), i64::MAX, i64::MIN])
    );
}

#[test]
fn multiple_representations_and_suppressed_columns() {
    let d = decode_file(include_bytes!("data/test_multiple_representations_rntuple_v1-0-0-0.root"));
    let reprs: Vec<_> = d.header.schema.columns.iter().map(|c| (c.column_type, c.representation_index)).collect();
    assert_eq!(reprs, [(ColumnType::Real32, 0), (ColumnType::Real16, 1)]);
    assert_eq!(column(&d, "real", ColumnType::Real32), &ColumnValues::F32(vec![1.0, 3.0]));
    assert_eq!(column(&d, "real", ColumnType::Real16), &ColumnValues::F32(vec![2.0]));
    let suppressed: usize =
        d.page_lists.iter().flat_map(|p| &p.page_locations).flatten().filter(|r| r.is_suppressed()).count();
    assert_eq!(suppressed, 3, "each of the three clusters suppresses one representation");
}

#[test]
fn schema_extension_and_deferred_columns() {
    let d = decode_file(include_bytes!("data/test_extension_columns_rntuple_v1-0-0-0.root"));
    let ext = &d.footer.schema_extension;
    let names: Vec<_> = ext.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["float_field", "intvec_field", "_0"]);
    let deferred: Vec<_> = ext.columns.iter().map(|c| c.first_element_index).collect();
    assert_eq!(deferred, [Some(200), Some(400), None]);
    let ints = column(&d, "int_field", ColumnType::SplitInt32);
    assert_eq!(ints.len(), 600);
}

#[test]
fn stl_containers_and_atomic_bitset_decode() {
    let d = decode_file(include_bytes!("data/test_stl_containers_rntuple_v1-0-0-0.root"));
    assert!(d.columns.iter().any(|c| c.1 == ColumnType::Switch));
    let ColumnValues::U8(chars) = column(&d, "string", ColumnType::Char) else { panic!() };
    assert!(chars.iter().all(u8::is_ascii), "{chars:?}");
    let d = decode_file(include_bytes!("data/test_atomic_bitset_rntuple_v1-0-0-0.root"));
    assert!(d.columns.iter().any(|c| c.1 == ColumnType::Bit));
}
