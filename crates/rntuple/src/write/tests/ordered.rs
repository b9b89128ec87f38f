//! Ordered associative containers are written sorted (and the unique ones
//! without equal keys), as ROOT's `std::set` / `std::map` hold them.

use arrow_array::builder::{Float64Builder, Int32Builder, StructBuilder};
use arrow_schema::Fields;

use super::*;

fn ints(name: &str, rows: &[&[i32]]) -> RecordBatch {
    let mut l = ListBuilder::new(Int32Builder::new()).with_field(Field::new("item", DataType::Int32, false));
    for r in rows {
        l.values().append_slice(r);
        l.append(true);
    }
    one(name, l.finish(), false)
}

fn pairs(name: &str, rows: &[&[(&str, i32)]]) -> RecordBatch {
    let members = Fields::from(vec![Field::new("k", DataType::Utf8, false), Field::new("v", DataType::Int32, false)]);
    let mut l = ListBuilder::new(StructBuilder::from_fields(members.clone(), 0)).with_field(Field::new(
        "item",
        DataType::Struct(members),
        false,
    ));
    for r in rows {
        for (k, v) in r.iter() {
            let s = l.values();
            s.field_builder::<StringBuilder>(0).unwrap().append_value(k);
            s.field_builder::<Int32Builder>(1).unwrap().append_value(*v);
            s.append(true);
        }
        l.append(true);
    }
    one(name, l.finish(), false)
}

/// Writes `batch` with field `x` as `type_name`; returns the values of columns 0 and 1 (and 2).
fn written(batch: &RecordBatch, type_name: &str) -> Vec<ColumnValues> {
    let ov: HashMap<String, FieldOverride> = [("x".to_string(), FieldOverride::type_name(type_name))].into();
    let mut sink = MemorySink::new(1 << 30);
    write(&mut sink, std::slice::from_ref(batch), &ov, WriteOptions { compression: 0, ..Default::default() });
    let (header, _, lists) = sink.read("t");
    (0..header.schema.columns.len()).map(|c| sink.column(&header, &lists, c)).collect()
}

#[test]
fn sets_are_sorted_and_deduplicated_multisets_sorted_unordered_ones_kept() {
    let b = ints("x", &[&[3, 1, 3, 2], &[], &[5], &[2, 2, -7]]);
    let cases: [(&str, &[u64], &[i32]); 4] = [
        ("std::set<int>", &[3, 3, 4, 6], &[1, 2, 3, 5, -7, 2]),
        ("std::multiset<int>", &[4, 4, 5, 8], &[1, 2, 3, 3, 5, -7, 2, 2]),
        ("std::unordered_set<int>", &[4, 4, 5, 8], &[3, 1, 3, 2, 5, 2, 2, -7]),
        ("std::vector<int>", &[4, 4, 5, 8], &[3, 1, 3, 2, 5, 2, 2, -7]),
    ];
    for (t, offsets, values) in cases {
        let cols = written(&b, t);
        assert!(matches!(&cols[0], ColumnValues::Index(o) if o == offsets), "{t}: {:?}", cols[0]);
        assert!(matches!(&cols[1], ColumnValues::I32(v) if v == values), "{t}: {:?}", cols[1]);
    }
}

#[test]
fn maps_are_sorted_by_key_and_keep_the_first_of_equal_keys() {
    let b = pairs("x", &[&[("b", 1), ("a", 2), ("b", 3), ("", 4)], &[("z", 0)], &[]]);
    let cols = written(&b, "std::map<std::string,int>");
    assert!(matches!(&cols[0], ColumnValues::Index(o) if o == &[3, 4, 4]), "{:?}", cols[0]);
    assert!(matches!(&cols[3], ColumnValues::I32(v) if v == &[4, 2, 1, 0]), "{:?}", cols[3]);
    let cols = written(&b, "std::multimap<std::string,int>");
    assert!(matches!(&cols[0], ColumnValues::Index(o) if o == &[4, 5, 5]), "{:?}", cols[0]);
    assert!(matches!(&cols[3], ColumnValues::I32(v) if v == &[4, 2, 1, 3, 0]), "equal keys keep their order");
    let ColumnValues::U8(chars) = &cols[2] else { panic!() };
    assert_eq!(chars, b"abbz");
}

#[test]
fn nan_keys_are_refused() {
    let mut l = ListBuilder::new(Float64Builder::new()).with_field(Field::new("item", DataType::Float64, false));
    l.values().append_slice(&[1.0, f64::NAN]);
    l.append(true);
    let b = one("x", l.finish(), false);
    let ov: HashMap<String, FieldOverride> = [("x".to_string(), FieldOverride::type_name("std::set<double>"))].into();
    let mut sink = MemorySink::new(1 << 30);
    let mut w = RNTupleWriter::with_sink(&mut sink, "t", &b.schema(), &ov, WriteOptions::default()).unwrap();
    let e = w.check_batch(&b).unwrap_err().to_string();
    assert!(e.contains("field 'x' of type 'std::set<double>' holds a NaN key"), "{e}");
    assert!(w.write_batch(&b).is_err());
}
