//! Projected fields, late schema extension and `std::bitset`, as the
//! envelopes and pages the writer produces say.

use arrow_array::builder::{BooleanBuilder, FixedSizeListBuilder, Int32Builder, StructBuilder};
use arrow_schema::Fields;
use rntuple_format::model::{AliasColumnDescriptor, ColumnType, StructuralRole};

use super::*;

/// `x: int64`, `c: list<struct<pt: float, q: int32>>`, `a: fixed_size_list<int16, 2>`.
fn muons(n: usize, seed: i64) -> RecordBatch {
    let members =
        Fields::from(vec![Field::new("pt", DataType::Float32, false), Field::new("q", DataType::Int32, false)]);
    let item = StructBuilder::from_fields(members.clone(), 0);
    let mut c = ListBuilder::new(item).with_field(Field::new("item", DataType::Struct(members), false));
    for i in 0..n {
        for k in 0..(i % 3) {
            let s = c.values();
            s.field_builder::<arrow_array::builder::Float32Builder>(0).unwrap().append_value((i * 10 + k) as f32);
            s.field_builder::<Int32Builder>(1).unwrap().append_value(k as i32);
            s.append(true);
        }
        c.append(true);
    }
    let mut a = FixedSizeListBuilder::new(arrow_array::builder::Int16Builder::new(), 2).with_field(Field::new(
        "item",
        DataType::Int16,
        false,
    ));
    for i in 0..n {
        a.values().append_value(i as i16);
        a.values().append_value(-(i as i16));
        a.append(true);
    }
    let x = Int64Array::from_iter_values((0..n as i64).map(|i| i + seed));
    let c = c.finish();
    let a = a.finish();
    let schema = Schema::new(vec![
        Field::new("x", DataType::Int64, false),
        Field::new("c", c.data_type().clone(), false),
        Field::new("a", a.data_type().clone(), false),
    ]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(x), Arc::new(c), Arc::new(a)]).unwrap()
}

#[test]
fn projections_follow_the_written_fields_and_alias_their_columns() {
    let b = muons(20, 0);
    let mut sink = MemorySink::new(1 << 30);
    let mut w =
        RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
    let projections = [
        Projection::typed("nc", "ROOT::RNTupleCardinality<std::uint32_t>", "c"),
        Projection::new("c_pt", "c._0.pt"),
        Projection::typed("c_q", "std::vector<int>", "c._0.q"),
        Projection::new("x2", "x"),
    ];
    w.add_fields(&Schema::empty(), &HashMap::new(), &projections).unwrap();
    assert_eq!(w.schema().fields().len(), 3, "projections are not in the batches");
    w.write_batch(&b).unwrap();
    w.close().unwrap();
    let (header, footer, lists) = sink.read("t");
    assert!(footer.schema_extension.fields.is_empty(), "projections added before the first entry are in the header");
    let names: Vec<(&str, &str, u32, Option<u32>)> = header
        .schema
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.type_name.as_str(), f.parent_id, f.source_field_id))
        .collect();
    assert_eq!(
        names,
        [
            ("x", "std::int64_t", 0, None),
            ("c", "", 1, None),
            ("_0", "", 1, None),
            ("pt", "float", 2, None),
            ("q", "std::int32_t", 2, None),
            ("a", "std::array<std::int16_t,2>", 5, None),
            ("_0", "std::int16_t", 5, None),
            ("nc", "ROOT::RNTupleCardinality<std::uint32_t>", 7, Some(1)),
            ("c_pt", "ROOT::VecOps::RVec<float>", 8, Some(1)),
            ("_0", "float", 8, Some(3)),
            ("c_q", "std::vector<std::int32_t>", 10, Some(1)),
            ("_0", "std::int32_t", 10, Some(4)),
            ("x2", "std::int64_t", 12, Some(0)),
        ]
    );
    let roles: Vec<StructuralRole> = header.schema.fields[7..].iter().map(|f| f.role).collect();
    use StructuralRole as R;
    assert_eq!(roles, [R::Leaf, R::Collection, R::Leaf, R::Collection, R::Leaf, R::Leaf]);
    // Physical columns: x, c (index), pt, q, a._0; projections only alias them, in field order.
    assert_eq!(header.schema.columns.len(), 5);
    let alias = |physical_column_id, field_id| AliasColumnDescriptor { physical_column_id, field_id };
    assert_eq!(
        header.schema.alias_columns,
        [alias(1, 7), alias(1, 8), alias(2, 9), alias(1, 10), alias(3, 11), alias(0, 12)]
    );
    assert_eq!(lists[0].page_locations[0].len(), 5, "no pages for projected fields");
}

#[test]
fn wrong_projections_are_refused_and_leave_the_writer_usable() {
    let b = muons(5, 0);
    let mut sink = MemorySink::new(1 << 30);
    let mut w =
        RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
    let cases: Vec<(Vec<Projection>, &str)> = vec![
        (vec![Projection::new("y", "nope")], "no written top-level field is named 'nope'"),
        (vec![Projection::new("y", "c._0.eta")], "'c._0' has no subfield 'eta' (it has: 'pt', 'q')"),
        (vec![Projection::new("y", "x.z")], "'x' has no subfields"),
        (vec![Projection::new("x", "c._0.pt")], "already has a top-level field named 'x'"),
        (vec![Projection::new("y", "x"), Projection::new("y", "x")], "already has a top-level field named 'y'"),
        (vec![Projection::new("a.b", "x")], "invalid projected field name"),
        (vec![Projection::typed("y", "float", "x")], "does not describe the source 'x' (std::int64_t)"),
        (vec![Projection::typed("y", "std::int64_t", "c._0.q")], "inside the collection 'c' (untyped collection)"),
        (
            vec![Projection::typed("y", "ROOT::RNTupleCardinality<std::uint32_t>", "x")],
            "a cardinality projects a collection",
        ),
        (vec![Projection::new("y", "c")], "'c' is an untyped collection"),
        (vec![Projection::new("y", "a._0")], "projections of std::array"),
        (vec![Projection::new("y", "a")], "projections of std::array"),
        (vec![Projection::typed("y", "Double32_t", "c._0.pt")], "RVec"),
        (
            vec![Projection::typed("y", "std::vector<Double32_t>", "c._0.pt")],
            "does not describe the source 'c._0.pt' (float)",
        ),
        (vec![Projection::typed("y", "std::map<int>", "x")], "std::map takes two template arguments"),
    ];
    for (p, expected) in cases {
        let e = w.add_fields(&Schema::empty(), &HashMap::new(), &p).expect_err(&format!("{p:?}")).to_string();
        assert!(e.contains(expected), "{p:?}: {e}");
        assert!(e.contains(&format!("projection '{}'", p[0].name)) || e.contains("invalid"), "{e}");
    }
    w.write_batch(&b).unwrap();
    w.close().unwrap();
    let (header, _, _) = sink.read("t");
    assert!(header.schema.fields.iter().all(|f| f.source_field_id.is_none()));
    assert!(header.schema.alias_columns.is_empty());
}

#[test]
fn fields_added_after_entries_are_in_the_schema_extension_with_deferred_columns() {
    let options = WriteOptions { compression: 0, ..Default::default() };
    let first = one("x", Int64Array::from_iter_values(0..15), false);
    let mut sink = MemorySink::new(1 << 30);
    let mut w = RNTupleWriter::with_sink(&mut sink, "t", &first.schema(), &HashMap::new(), options).unwrap();
    w.write_batch(&first.slice(0, 10)).unwrap();
    w.commit_cluster().unwrap();
    w.write_batch(&first.slice(10, 5)).unwrap();
    // 15 entries so far, 5 of them in the open cluster: the new fields start in its middle.
    let late = muons(7, 15);
    let added = Schema::new(late.schema().fields()[1..].to_vec());
    let projections =
        [Projection::typed("nc", "ROOT::RNTupleCardinality<std::uint64_t>", "c"), Projection::new("x2", "x")];
    w.add_fields(&added, &HashMap::new(), &projections).unwrap();
    assert_eq!(w.schema().fields().len(), 3);
    let e = w.write_batch(&first.slice(0, 1)).unwrap_err().to_string();
    assert!(e.contains("batch has 1 columns"), "{e}");
    w.write_batch(&late).unwrap();
    w.close().unwrap();

    let (header, footer, lists) = sink.read("t");
    assert_eq!(header.schema.fields.len(), 1);
    assert_eq!(header.schema.columns.len(), 1);
    let ext = &footer.schema_extension;
    let names: Vec<(&str, u32)> = ext.fields.iter().map(|f| (f.name.as_str(), f.parent_id)).collect();
    assert_eq!(names, [("c", 1), ("_0", 1), ("pt", 2), ("q", 2), ("a", 5), ("_0", 5), ("nc", 7), ("x2", 8)]);
    assert_eq!(ext.fields[6].source_field_id, Some(1));
    assert_eq!(ext.fields[7].source_field_id, Some(0), "a projection in the extension of a header field");
    let alias = |physical_column_id, field_id| AliasColumnDescriptor { physical_column_id, field_id };
    assert_eq!(ext.alias_columns, [alias(1, 7), alias(0, 8)]);
    // ROOT's EntryToColumnElementIndex: the collection's offsets start at entry 15, its items at 0
    // (they are inside a collection), the array items at 15 * 2.
    let first_elements: Vec<(ColumnType, Option<i64>)> =
        ext.columns.iter().map(|c| (c.column_type, c.first_element_index)).collect();
    assert_eq!(
        first_elements,
        [
            (ColumnType::Index64, Some(15)),
            (ColumnType::Real32, None),
            (ColumnType::Int32, None),
            (ColumnType::Int16, Some(30))
        ]
    );
    // The cluster before the extension lists the old column only; the next starts the new ones at their first element.
    let clusters = &lists[0];
    assert_eq!(
        clusters.clusters.iter().map(|c| (c.first_entry, c.num_entries)).collect::<Vec<_>>(),
        [(0, 10), (10, 12)]
    );
    assert_eq!(clusters.page_locations[0].len(), 1);
    let offsets: Vec<i64> = clusters.page_locations[1].iter().map(|c| c.element_offset).collect();
    assert_eq!(offsets, [10, 15, 0, 0, 30]);
    let elements: Vec<u32> =
        clusters.page_locations[1].iter().map(|c| c.pages.iter().map(|p| p.num_elements).sum()).collect();
    // 12 entries of x; 7 of c, 0+1+2+0+1+2+0 = 6 items; 7 arrays of 2.
    assert_eq!(elements, [12, 7, 6, 6, 14]);
    let mut schema = header.schema.clone();
    schema.columns.extend(ext.columns.iter().cloned());
    let h = Header { schema, ..header };
    let ColumnValues::Index(offsets) = sink.column(&h, &lists, 1) else { panic!() };
    assert_eq!(offsets, [0, 1, 3, 3, 4, 6, 6], "cluster-relative offsets from the extension on");
}

#[test]
fn a_refused_addition_changes_nothing() {
    let b = muons(4, 0);
    let mut sink = MemorySink::new(1 << 30);
    let mut w =
        RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &HashMap::new(), WriteOptions::default()).unwrap();
    w.write_batch(&b).unwrap();
    let dup = Schema::new(vec![Field::new("y", DataType::Int32, false), Field::new("x", DataType::Int32, false)]);
    let e = w.add_fields(&dup, &HashMap::new(), &[]).unwrap_err().to_string();
    assert!(e.contains("already has a top-level field named 'x'"), "{e}");
    let y = Schema::new(vec![Field::new("y", DataType::Int32, false)]);
    let e = w.add_fields(&y, &HashMap::new(), &[Projection::new("z", "nope")]).unwrap_err().to_string();
    assert!(e.contains("projection 'z'"), "{e}");
    let ov: HashMap<String, FieldOverride> = [("x".to_string(), FieldOverride::type_name("float"))].into();
    let e = w.add_fields(&y, &ov, &[]).unwrap_err().to_string();
    assert!(e.contains("overrides name fields that the schema does not have: 'x'"), "{e}");
    assert!(!w.has_failed());
    assert_eq!(w.schema().fields().len(), 3);
    w.write_batch(&b).unwrap();
    w.close().unwrap();
    let (header, footer, _) = sink.read("t");
    assert_eq!(header.schema.fields.len(), 7);
    assert!(footer.schema_extension.fields.is_empty() && footer.schema_extension.columns.is_empty());
}

#[test]
fn bitsets_are_repetitive_leaves_with_a_bit_column() {
    let mut bools =
        FixedSizeListBuilder::new(BooleanBuilder::new(), 10).with_field(Field::new("item", DataType::Boolean, false));
    for i in 0..3u32 {
        for k in 0..10 {
            bools.values().append_value((i + k) % 3 == 0);
        }
        bools.append(true);
    }
    let bools = bools.finish();
    let words = UInt16Array::from(vec![0b10_0000_0001, 0, 0b11_1111_1111]);
    let schema =
        Schema::new(vec![Field::new("b", bools.data_type().clone(), false), Field::new("w", DataType::UInt16, false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(bools), Arc::new(words)]).unwrap();
    let ov: HashMap<String, FieldOverride> = [
        ("b".to_string(), FieldOverride::type_name("std::bitset<10>")),
        ("w".to_string(), FieldOverride::type_name("std::bitset<10>")),
    ]
    .into();
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, std::slice::from_ref(&batch), &ov, WriteOptions::default());
    let (header, _, lists) = sink.read("t");
    for f in &header.schema.fields {
        assert_eq!((f.type_name.as_str(), f.role, f.array_size), ("std::bitset<10>", StructuralRole::Leaf, Some(10)));
    }
    assert!(header.schema.columns.iter().all(|c| c.column_type == ColumnType::Bit));
    let ColumnValues::Bool(b) = sink.column(&header, &lists, 0) else { panic!() };
    let expected: Vec<bool> = (0..3u32).flat_map(|i| (0..10).map(move |k| (i + k) % 3 == 0)).collect();
    assert_eq!(b, expected);
    let ColumnValues::Bool(w) = sink.column(&header, &lists, 1) else { panic!() };
    let mut bits = vec![false; 30];
    bits[0] = true;
    bits[9] = true;
    bits[20..30].iter_mut().for_each(|b| *b = true);
    assert_eq!(w, bits, "bit k of the integer is bit k of the bitset");

    // Bits above N, and the wrong number of booleans, are refused.
    let mut sink = MemorySink::new(1 << 30);
    let wr = RNTupleWriter::with_sink(&mut sink, "t", &batch.schema(), &ov, WriteOptions::default()).unwrap();
    let big = RecordBatch::try_new(
        batch.schema(),
        vec![batch.column(0).clone(), Arc::new(UInt16Array::from(vec![0, 1 << 10, 0]))],
    )
    .unwrap();
    let e = wr.check_batch(&big).unwrap_err().to_string();
    assert!(e.contains("value 1024 (entry 1") && e.contains("above the 10 bits"), "{e}");
    drop(wr);
    let ov11: HashMap<String, FieldOverride> = [("b".to_string(), FieldOverride::type_name("std::bitset<11>"))].into();
    let only_b = Schema::new(vec![batch.schema().field(0).clone()]);
    let e = RNTupleWriter::with_sink(&mut sink, "u", &only_b, &ov11, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("std::bitset<11>"), "{e}");
}
