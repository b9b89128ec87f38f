//! Unit tests of the engine against an in-memory stand-in for the container:
//! the envelopes and pages it receives are parsed back with the format crate.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, ListBuilder, StringBuilder};
use arrow_array::*;
use arrow_schema::{DataType, Field, Schema};
use rntuple_container::Anchor;
use rntuple_format::column::{decode_page, ColumnSpec, ColumnValues};
use rntuple_format::compression::decompress;
use rntuple_format::envelope::{parse_footer, parse_header, parse_page_list};
use rntuple_format::model::{EnvelopeLink, Footer, Header, PageList};
use rntuple_format::{Location, Result};

use super::*;

mod ordered;
mod schema_changes;
mod schema_plan;

/// Blobs appended to one buffer; offsets start at 100 as in a ROOT file.
#[derive(Debug)]
struct MemorySink {
    data: Vec<u8>,
    /// (offset, size) of every blob.
    blobs: Vec<(u64, u64)>,
    anchors: Vec<(String, Anchor)>,
    max_key: u64,
}

const BASE: u64 = 100;

impl MemorySink {
    fn new(max_key: u64) -> Self {
        MemorySink { data: Vec::new(), blobs: Vec::new(), anchors: Vec::new(), max_key }
    }
    fn at(&self, offset: u64, size: u64) -> &[u8] {
        &self.data[(offset - BASE) as usize..(offset - BASE + size) as usize]
    }
    fn envelope(&self, link: &EnvelopeLink) -> Vec<u8> {
        let raw = self.at(link.locator.offset, link.locator.size);
        if link.locator.size == link.length {
            raw.to_vec()
        } else {
            decompress(raw, link.length as usize, &Location::default()).unwrap()
        }
    }
    /// Header, footer and page lists of the RNTuple `name`.
    fn read(&self, name: &str) -> (Header, Footer, Vec<PageList>) {
        let a = &self.anchors.iter().find(|(n, _)| n == name).unwrap().1;
        let link = |offset, size, length| EnvelopeLink { length, locator: Locator { offset, size } };
        let header = parse_header(&self.envelope(&link(a.seek_header, a.nbytes_header, a.len_header)), true).unwrap();
        let footer = parse_footer(&self.envelope(&link(a.seek_footer, a.nbytes_footer, a.len_footer)), true).unwrap();
        let lists = footer
            .cluster_groups
            .iter()
            .map(|g| parse_page_list(&self.envelope(&g.page_list), true).unwrap())
            .collect();
        (header, footer, lists)
    }
    /// All values of physical column `col`, page by page, checking checksums.
    fn column(&self, header: &Header, lists: &[PageList], col: usize) -> ColumnValues {
        let spec = ColumnSpec::from_descriptor(&header.schema.columns[col]).unwrap();
        let mut out = ColumnValues::for_column(spec.column_type).unwrap();
        for list in lists {
            // Clusters written before a column was added (schema extension) do not list it.
            for cluster in list.page_locations.iter().filter_map(|c| c.get(col)) {
                for p in &cluster.pages {
                    let raw = self.at(p.locator.offset, p.locator.size);
                    if p.has_checksum {
                        let sum = self.at(p.locator.offset + p.locator.size, 8);
                        assert_eq!(u64::from_le_bytes(sum.try_into().unwrap()), rntuple_format::checksum::xxh3_64(raw));
                    }
                    let n = spec.packed_size(u64::from(p.num_elements)) as usize;
                    let bytes =
                        if raw.len() == n { raw.to_vec() } else { decompress(raw, n, &Location::default()).unwrap() };
                    decode_page(&spec, &bytes, p.num_elements as usize, &mut out).unwrap();
                }
            }
        }
        out
    }
}

use rntuple_format::model::Locator;

impl BlobSink for MemorySink {
    fn write_blob(&mut self, parts: &[&[u8]], _uncompressed_len: u64) -> Result<u64> {
        let offset = BASE + self.data.len() as u64;
        let mut size = 0;
        for p in parts {
            self.data.extend_from_slice(p);
            size += p.len() as u64;
        }
        self.blobs.push((offset, size));
        Ok(offset)
    }
    fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        self.anchors.push((name.to_string(), anchor.clone()));
        Ok(())
    }
    fn max_key_size(&self) -> u64 {
        self.max_key
    }
}

fn write(sink: &mut MemorySink, batches: &[RecordBatch], ov: &HashMap<String, FieldOverride>, options: WriteOptions) {
    let mut w = RNTupleWriter::with_sink(sink, "t", &batches[0].schema(), ov, options).unwrap();
    for b in batches {
        w.write_batch(b).unwrap();
    }
    w.close().unwrap();
}

fn one(name: &str, a: impl Array + 'static, nullable: bool) -> RecordBatch {
    let schema = Schema::new(vec![Field::new(name, a.data_type().clone(), nullable)]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(a)]).unwrap()
}

/// The model of `/tmp/wref/mk.py`-style reference files written by ROOT 6.40
/// with approx. zipped cluster size 20000 and max page size 4096: ROOT ends
/// its first cluster after entry 520 and fills pages of 1024 floats, 512
/// offsets and 256 switch elements.
fn root_model(n: usize) -> RecordBatch {
    let f = Float32Array::from_iter_values((0..n).map(|i| i as f32 * 0.5));
    let b = BooleanArray::from_iter((0..n).map(|i| Some(i % 3 == 0)));
    let s = StringArray::from_iter_values((0..n).map(|i| "x".repeat(i % 7)));
    let mut v = ListBuilder::new(arrow_array::builder::Float32Builder::new());
    for i in 0..n {
        for _ in 0..i % 4 {
            v.values().append_value(1.5);
        }
        v.append(true);
    }
    let o = Int32Array::from_iter((0..n).map(|i| (i % 2 == 1).then_some(i as i32)));
    let mut type_ids = Vec::new();
    let mut offsets = Vec::new();
    let (mut ints, mut strs) = (Vec::new(), StringBuilder::new());
    for i in 0..n {
        if i % 3 != 0 {
            type_ids.push(0i8);
            offsets.push(ints.len() as i32);
            ints.push(i as i32);
        } else {
            type_ids.push(1);
            offsets.push(strs.len() as i32);
            strs.append_value("ab");
        }
    }
    let fields = arrow_schema::UnionFields::try_new(
        [0i8, 1],
        [Field::new("i", DataType::Int32, false), Field::new("s", DataType::Utf8, false)],
    )
    .unwrap();
    let va = UnionArray::try_new(
        fields,
        type_ids.into(),
        Some(offsets.into()),
        vec![Arc::new(Int32Array::from(ints)), Arc::new(strs.finish())],
    )
    .unwrap();
    let a = FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Int16, false)),
        3,
        Arc::new(Int16Array::from_iter_values((0..n).flat_map(|i| [i as i16, 0, 0]))),
        None,
    );
    let i8s = Int8Array::from_iter_values((0..n).map(|i| i as i8));
    let u64s = UInt64Array::from_iter_values((0..n).map(|i| i as u64 * 1000));
    let cols: Vec<(&str, ArrayRef, bool)> = vec![
        ("f", Arc::new(f), false),
        ("b", Arc::new(b), false),
        ("s", Arc::new(s), false),
        ("v", Arc::new(v.finish()), false),
        ("o", Arc::new(o), true),
        ("va", Arc::new(va), false),
        ("a", Arc::new(a), false),
        ("i8", Arc::new(i8s), false),
        ("u64", Arc::new(u64s), false),
    ];
    let schema =
        Schema::new(cols.iter().map(|(n, a, null)| Field::new(*n, a.data_type().clone(), *null)).collect::<Vec<_>>());
    RecordBatch::try_new(Arc::new(schema), cols.into_iter().map(|(_, a, _)| a).collect()).unwrap()
}

#[test]
fn clusters_and_pages_as_root_sizes_them() {
    let mut sink = MemorySink::new(1 << 30);
    let options =
        WriteOptions { approx_zipped_cluster_size: 20000, max_unzipped_page_size: 4096, ..Default::default() };
    write(&mut sink, &[root_model(5000)], &HashMap::new(), options);
    let (header, footer, lists) = sink.read("t");
    assert_eq!(header.schema.fields[7].type_name, "std::variant<std::int32_t,std::string>");
    assert_eq!(header.schema.fields[5].type_name, "std::optional<std::int32_t>");
    let clusters: Vec<_> = lists.iter().flat_map(|l| l.clusters.iter()).collect();
    assert_eq!((clusters[0].first_entry, clusters[0].num_entries), (0, 520));
    assert_eq!(footer.cluster_groups.len(), 1);
    assert_eq!(clusters.iter().map(|c| c.num_entries).sum::<u64>(), 5000);
    let first = &lists[0].page_locations[0];
    let counts = |col: usize| first[col].pages.iter().map(|p| p.num_elements).collect::<Vec<_>>();
    assert_eq!(counts(0), [520]); // floats: 1024 per page
    assert_eq!(counts(2), [512, 8]); // offsets: 512 per page
    assert_eq!(counts(8), [256, 256, 8]); // switch elements: 256 per page
                                          // Values survive.
    let ColumnValues::F32(f) = sink.column(&header, &lists, 0) else { panic!() };
    assert_eq!(f.len(), 5000);
    assert_eq!(f[4999], 2499.5);
    let ColumnValues::Switch { index, tag } = sink.column(&header, &lists, 8) else { panic!() };
    assert_eq!((index[0], tag[0], index[1], tag[1], index[4], tag[4]), (0, 2, 0, 1, 2, 1));
}

#[test]
fn same_page_merging_shares_locators() {
    let batch = one("x", Int64Array::from_iter_values(std::iter::repeat_n(7, 10_000)), false);
    let options = |merge| WriteOptions { max_unzipped_page_size: 1024, same_page_merging: merge, ..Default::default() };
    let mut merged = MemorySink::new(1 << 30);
    write(&mut merged, std::slice::from_ref(&batch), &HashMap::new(), options(true));
    let (_, _, lists) = merged.read("t");
    let pages = &lists[0].page_locations[0][0].pages;
    assert_eq!(pages.len(), 79);
    assert!(pages[1..78].iter().all(|p| p.locator == pages[0].locator));
    assert_ne!(pages[78].locator, pages[0].locator);
    let mut plain = MemorySink::new(1 << 30);
    write(&mut plain, &[batch], &HashMap::new(), options(false));
    let (header, _, lists) = plain.read("t");
    let pages = &lists[0].page_locations[0][0].pages;
    let distinct: std::collections::HashSet<u64> = pages.iter().map(|p| p.locator.offset).collect();
    assert_eq!(distinct.len(), 79);
    assert!(plain.data.len() > merged.data.len());
    let ColumnValues::I64(v) = plain.column(&header, &lists, 0) else { panic!() };
    assert_eq!(v.len(), 10_000);
}

#[test]
fn pages_are_coalesced_within_the_max_key_size() {
    let batch = one("x", Float64Array::from_iter_values((0..20_000).map(|i| (i as f64).sin())), false);
    let mut sink = MemorySink::new(3000);
    // The layout of grouped pages (`layout`); streamed pages go in blobs of a page or more.
    let options = WriteOptions {
        compression: 0,
        max_unzipped_page_size: 1024,
        group_pages_by_column: true,
        ..Default::default()
    };
    write(&mut sink, &[batch], &HashMap::new(), options);
    let (header, _, lists) = sink.read("t");
    // 1024-byte pages plus checksums: two per key of 3000 bytes.
    let page_blobs: Vec<_> = sink.blobs.iter().filter(|(_, s)| *s > 1000).collect();
    assert!(page_blobs.iter().all(|(_, s)| *s <= 3000), "{page_blobs:?}");
    assert!(page_blobs.iter().any(|(_, s)| *s == 2 * 1032));
    let ColumnValues::F64(v) = sink.column(&header, &lists, 0) else { panic!() };
    assert_eq!(v[12345], (12345f64).sin());
}

#[test]
fn the_page_buffer_budget_seals_the_largest_pages_early() {
    let plans: Vec<model::ColumnPlan> = (0..8)
        .map(|_| model::ColumnPlan {
            spec: ColumnSpec::new(rntuple_format::model::ColumnType::Int64, 64, None).unwrap(),
            mem_size: 8,
            empty: ColumnValues::I64(Vec::new()),
            first_element: 0,
        })
        .collect();
    let pages_below_max = |budget: u64| {
        let options = WriteOptions {
            max_unzipped_page_size: 8192,
            page_buffer_budget: budget,
            compression: 0,
            same_page_merging: false,
            ..Default::default()
        };
        let mut columns = pages::Columns::new(&plans, &options).unwrap();
        let values: Vec<i64> = (0..100).collect();
        for _ in 0..20 {
            for k in 0..8 {
                columns.push(k, &values).unwrap();
            }
        }
        let out = columns.finish_cluster().unwrap();
        for c in &out {
            assert_eq!(c.pages.iter().map(|p| u64::from(p.num_elements)).sum::<u64>(), 2000);
            assert!(c.pages.iter().all(|p| p.num_elements <= 1024));
        }
        out.iter().flat_map(|c| &c.pages).filter(|p| p.num_elements < 1024).count()
    };
    // With room for all pages, each column has one full page and the rest.
    assert_eq!(pages_below_max(1 << 20), 8);
    // With room for two full pages, growing pages seal the largest others early.
    assert!(pages_below_max(16384) > 16);
    // The initial pages must fit.
    let tiny = WriteOptions { page_buffer_budget: 1000, ..Default::default() };
    assert!(pages::Columns::new(&plans, &tiny).is_err());
}

#[test]
fn clusters_end_where_asked_and_entries_are_counted() {
    let mut sink = MemorySink::new(1 << 30);
    {
        let b = one("x", Int32Array::from_iter_values(0..10), false);
        let mut w =
            RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
        w.write_batch(&b.slice(0, 3)).unwrap();
        w.commit_cluster().unwrap();
        w.commit_cluster().unwrap(); // nothing new: no empty cluster
        w.write_batch(&b.slice(3, 7)).unwrap();
        assert_eq!(w.num_entries(), 10);
        w.close().unwrap();
    }
    let (_, _, lists) = sink.read("t");
    let c: Vec<_> = lists[0].clusters.iter().map(|c| (c.first_entry, c.num_entries)).collect();
    assert_eq!(c, [(0, 3), (3, 7)]);
    assert_eq!(lists[0].page_locations[1][0].element_offset, 3);
}

#[test]
fn an_rntuple_without_entries_has_no_cluster_group() {
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, &[one("x", Int32Array::from(Vec::<i32>::new()), false)], &HashMap::new(), WriteOptions::default());
    let (header, footer, _) = sink.read("t");
    assert_eq!(header.name, "t");
    assert!(header.writer.starts_with("rntuple"));
    assert!(footer.cluster_groups.is_empty());
}

#[test]
fn the_footer_has_the_four_extension_lists_as_root_writes_them() {
    let footer = Footer { feature_flags: vec![0], header_checksum: 42, ..Default::default() };
    let bytes = rntuple_format::envelope::write_footer(&footer).unwrap().0;
    // preamble, flags, header checksum, extension frame of 8 + 4 * 12 bytes,
    // empty cluster group list, empty attribute set list, checksum.
    assert_eq!(bytes.len(), 8 + 8 + 8 + 56 + 12 + 12 + 8);
    assert_eq!(&bytes[24..32], &56i64.to_le_bytes());
    assert_eq!(parse_footer(&bytes, true).unwrap(), footer);
}

#[test]
fn bad_input_is_refused() {
    let opts = WriteOptions::default;
    let mut sink = MemorySink::new(1 << 30);
    // Nulls in a field that is not optional poison the writer.
    let b = one("x", Int32Array::from(vec![Some(1), None]), true);
    let no_optionals = WriteOptions { nullable_as_optional: false, ..opts() };
    let mut w = RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), no_optionals).unwrap();
    let e = w.write_batch(&b).unwrap_err().to_string();
    assert!(e.contains("std::optional"), "{e}");
    assert!(w.write_batch(&one("x", Int32Array::from(vec![1]), true)).is_err());
    drop(w);
    // A batch of another schema is refused before anything is written.
    let b = one("x", Int32Array::from(vec![1]), false);
    let mut w = RNTupleWriter::with_sink(&mut sink, "u", &b.schema(), &HashMap::new(), opts()).unwrap();
    assert!(w.write_batch(&one("x", Float32Array::from(vec![1.0]), false)).is_err());
    assert!(w.write_batch(&one("y", Int32Array::from(vec![1]), false)).is_err());
    w.write_batch(&b).unwrap();
    w.close().unwrap();
    // Quantized values outside their range.
    let b = one("q", Float64Array::from(vec![0.5, 2.0]), false);
    let ov: HashMap<String, FieldOverride> =
        [("q".to_string(), FieldOverride::real(RealEncoding::Real32Quant { bits: 8, min: 0.0, max: 1.0 }))].into();
    let mut w = RNTupleWriter::with_sink(&mut sink, "q", &b.schema(), &ov, opts()).unwrap();
    w.write_batch(&b).unwrap();
    assert!(w.close().is_err());
    // Names and options.
    assert!(RNTupleWriter::with_sink(&mut sink, "a b", &b.schema(), &HashMap::new(), opts()).is_err());
    let bad = WriteOptions { max_unzipped_page_size: 100, initial_unzipped_page_size: 200, ..opts() };
    assert!(RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), bad).is_err());
    let bad = WriteOptions { compression: 9999, ..opts() };
    assert!(RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), bad).is_err());
}

#[test]
fn optional_and_variant_columns_hold_root_offsets() {
    let b = one("o", Int32Array::from(vec![Some(1), None, None, Some(4), Some(5)]), true);
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, &[b], &HashMap::new(), WriteOptions { compression: 0, ..Default::default() });
    let (header, _, lists) = sink.read("t");
    assert_eq!(header.schema.columns[0].column_type, rntuple_format::model::ColumnType::Index64);
    let ColumnValues::Index(idx) = sink.column(&header, &lists, 0) else { panic!() };
    assert_eq!(idx, [1, 1, 1, 2, 3]);
    let ColumnValues::I32(v) = sink.column(&header, &lists, 1) else { panic!() };
    assert_eq!(v, [1, 4, 5]);
}

/// A null entry of an optional of a variant is an empty optional, as ROOT
/// writes a reset `std::optional<std::variant<…>>` (its index does not
/// advance and the variant gets no switch element), not a present variant
/// in the invalid state.
#[test]
fn empty_optionals_of_variants_are_empty() {
    use arrow_schema::UnionFields;
    let fields = UnionFields::try_new(
        [0i8, 1],
        [Field::new("i", DataType::Int32, true), Field::new("f", DataType::Float32, true)],
    )
    .unwrap();
    // 7, null, 2.5, null, 9
    let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), None, None, Some(9)]));
    let floats: ArrayRef = Arc::new(Float32Array::from(vec![2.5]));
    let u = UnionArray::try_new(
        fields,
        vec![0i8, 0, 1, 0, 0].into(),
        Some(vec![0i32, 1, 0, 2, 3].into()),
        vec![ints, floats],
    )
    .unwrap();
    for (name, ov) in [
        ("inferred", HashMap::new()),
        (
            "unique_ptr",
            HashMap::from([("o".to_string(), FieldOverride::type_name("std::unique_ptr<std::variant<int,float>>"))]),
        ),
    ] {
        let mut sink = MemorySink::new(1 << 30);
        write(&mut sink, &[one("o", u.clone(), true)], &ov, WriteOptions { compression: 0, ..Default::default() });
        let (header, _, lists) = sink.read("t");
        assert!(header.schema.fields[0].type_name.ends_with("<std::variant<std::int32_t,float>>"), "{name}");
        let ColumnValues::Index(idx) = sink.column(&header, &lists, 0) else { panic!() };
        assert_eq!(idx, [1, 1, 2, 2, 3], "{name}");
        let ColumnValues::Switch { index, tag } = sink.column(&header, &lists, 1) else { panic!() };
        assert_eq!((index, tag), (vec![0, 0, 1], vec![1, 2, 1]), "{name}: one switch element per present value");
    }
}

#[test]
fn bytes_do_not_depend_on_the_number_of_threads() {
    let data = |threads| {
        let mut sink = MemorySink::new(1 << 30);
        let options = WriteOptions {
            compression_threads: threads,
            approx_zipped_cluster_size: 20000,
            max_unzipped_page_size: 4096,
            ..Default::default()
        };
        write(&mut sink, &[root_model(20_000)], &HashMap::new(), options);
        sink.data
    };
    let one = data(1);
    assert_eq!(one, data(3));
    assert_eq!(one, data(8));
}

#[test]
fn maps_are_collections_of_pairs() {
    use arrow_array::builder::{Float32Builder, Int32Builder, MapBuilder};
    // An Arrow map: std::map<K,V> by default.
    let mut m = MapBuilder::new(None, StringBuilder::new(), Float32Builder::new());
    for (k, v) in [("a", 1.0), ("b", 2.0)] {
        m.keys().append_value(k);
        m.values().append_value(v);
    }
    m.append(true).unwrap();
    m.append(true).unwrap();
    m.keys().append_value("c");
    m.values().append_value(3.0);
    m.append(true).unwrap();
    let b = one("m", m.finish(), false);
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, std::slice::from_ref(&b), &HashMap::new(), WriteOptions { compression: 0, ..Default::default() });
    let (header, _, lists) = sink.read("t");
    let f = &header.schema.fields;
    let names: Vec<(&str, &str)> = f.iter().map(|f| (f.name.as_str(), f.type_name.as_str())).collect();
    assert_eq!(
        names,
        [
            ("m", "std::map<std::string,float>"),
            ("_0", "std::pair<std::string,float>"),
            ("_0", "std::string"),
            ("_1", "float")
        ]
    );
    let ColumnValues::Index(idx) = sink.column(&header, &lists, 0) else { panic!() };
    assert_eq!(idx, [2, 2, 3]);
    // A list of two-member structs with a map type name.
    let pair = DataType::Struct(
        vec![Field::new("key", DataType::Int32, false), Field::new("value", DataType::Float32, false)].into(),
    );
    let mut l = ListBuilder::new(arrow_array::builder::StructBuilder::from_fields(
        match &pair {
            DataType::Struct(f) => f.clone(),
            _ => unreachable!(),
        },
        0,
    ))
    .with_field(Field::new("item", pair, false));
    for i in 0..3 {
        let s = l.values();
        s.field_builder::<Int32Builder>(0).unwrap().append_value(i);
        s.field_builder::<Float32Builder>(1).unwrap().append_value(i as f32);
        s.append(true);
        l.append(true);
    }
    let b = one("u", l.finish(), false);
    let ov: HashMap<String, FieldOverride> =
        [("u".to_string(), FieldOverride::type_name("std::unordered_map<int, float>"))].into();
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, &[b], &ov, WriteOptions::default());
    let (header, _, _) = sink.read("t");
    assert_eq!(header.schema.fields[0].type_name, "std::unordered_map<std::int32_t,float>");
    assert_eq!(header.schema.fields[1].type_name, "std::pair<std::int32_t,float>");
}

#[test]
fn check_batch_refuses_bad_values_and_keeps_the_writer_usable() {
    let mut sink = MemorySink::new(1 << 30);
    let b = one("x", Int32Array::from(vec![1, 2]), false);
    let nulls = one("x", Int32Array::from(vec![Some(1), None]), true);
    let no_optionals = WriteOptions { nullable_as_optional: false, ..Default::default() };
    let mut w = RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), no_optionals).unwrap();
    let e = w.check_batch(&nulls).unwrap_err().to_string();
    assert!(e.contains("null"), "{e}");
    w.check_batch(&b).unwrap();
    w.write_batch(&b).unwrap();
    w.close().unwrap();
    // Quantization ranges, nested in a list.
    let mut l = ListBuilder::new(arrow_array::builder::Float64Builder::new());
    l.values().append_slice(&[0.0, 0.5]);
    l.append(true);
    l.values().append_slice(&[1.5]);
    l.append(true);
    let b = one("q", l.finish(), false);
    let ov: HashMap<String, FieldOverride> =
        [("q._0".to_string(), FieldOverride::real(RealEncoding::Real32Quant { bits: 8, min: 0.0, max: 1.0 }))].into();
    let w = RNTupleWriter::with_sink(&mut sink, "q", &b.schema(), &ov, WriteOptions::default()).unwrap();
    let e = w.check_batch(&b).unwrap_err().to_string();
    assert!(e.contains("'q._0'") && e.contains("value 2"), "{e}");
    assert!(w.check_batch(&b.slice(0, 1)).is_ok());
    // Strings that are not UTF-8 need unchecked (unsafe) construction: the
    // Python tests cover them with arrays imported over the C data interface.
}
