//! `ArrowShape::ColumnTypes` (the Python package's reads): values decoded in
//! their column's type, booleans one byte each, 32-bit offsets for 32-bit
//! index columns, and `ArrowShape::CppTypes` (the default) unchanged.

mod write_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type, UInt8Type};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float32Array, Float64Array, Int8Array, LargeListArray, LargeStringArray, RecordBatch,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};
use rntuple::{write_batches, ArrowShape, FieldOverride, RNTupleFile, ReadOptions, RealEncoding, WriteOptions};
use write_support::scratch;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(name)
}

fn column_types() -> ReadOptions {
    ReadOptions::DEFAULT.with_shape(ArrowShape::ColumnTypes)
}

fn written() -> PathBuf {
    let item = Arc::new(Field::new("_0", DataType::Float32, false));
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("flag", Arc::new(BooleanArray::from(vec![true, false, true]))),
        (
            "v",
            Arc::new(LargeListArray::new(
                item,
                OffsetBuffer::new(vec![0i64, 1, 1, 3].into()),
                Arc::new(Float32Array::from(vec![1.5, 2.5, 3.5])),
                None,
            )),
        ),
        ("s", Arc::new(LargeStringArray::from(vec!["a", "", "bc"]))),
        ("h", Arc::new(Float32Array::from(vec![0.5, 1.0, -2.0]))),
        ("d", Arc::new(Float64Array::from(vec![0.5, 1.25, -3.0]))),
        ("q", Arc::new(Float64Array::from(vec![2.0, -10.0, 3.3]))),
        ("c", Arc::new(Int8Array::from(vec![-1, 1, 65]))),
    ];
    let fields: Vec<Field> = columns.iter().map(|(n, a)| Field::new(*n, a.data_type().clone(), false)).collect();
    let schema = Arc::new(arrow_schema::Schema::new(fields));
    let batch = RecordBatch::try_new(schema, columns.into_iter().map(|(_, a)| a).collect()).expect("batch");
    let overrides = HashMap::from([
        ("h".to_string(), FieldOverride::real(RealEncoding::Real16)),
        ("d".to_string(), FieldOverride::real(RealEncoding::Real32)),
        ("q".to_string(), FieldOverride::real(RealEncoding::Real32Quant { bits: 32, min: -10.0, max: 25.0 })),
        ("c".to_string(), FieldOverride::type_name("char")),
    ]);
    let path = scratch("arrow_shape.root");
    let options = WriteOptions { index32: true, ..WriteOptions::default() };
    write_batches(&path, "t", [batch], &overrides, options).expect("write");
    path
}

#[test]
fn column_types_give_the_column_dtypes_and_32_bit_offsets() {
    let path = written();
    let nt = RNTupleFile::open(&path).expect("open").rntuple("t").expect("rntuple");
    let cpp = nt.read_with(None, 0, u64::MAX, &ReadOptions::DEFAULT).expect("read");
    let col = nt.read_with(None, 0, u64::MAX, &column_types()).expect("read");
    let types = |b: &RecordBatch| -> Vec<DataType> { b.columns().iter().map(|c| c.data_type().clone()).collect() };
    let item = |t: DataType| Arc::new(Field::new("_0", t, false));
    assert_eq!(
        types(&cpp),
        vec![
            DataType::Boolean,
            DataType::LargeList(item(DataType::Float32)),
            DataType::LargeUtf8,
            DataType::Float32,
            DataType::Float64,
            DataType::Float64,
            DataType::Int8,
        ]
    );
    assert_eq!(
        types(&col),
        vec![
            DataType::UInt8,
            DataType::List(item(DataType::Float32)),
            DataType::Utf8,
            DataType::Float16,
            DataType::Float32,
            // ROOT dequantises a double's Real32Quant in double precision.
            DataType::Float64,
            DataType::UInt8,
        ]
    );
    let flag = col.column(0).as_primitive::<UInt8Type>();
    assert_eq!(flag.values().to_vec(), vec![1, 0, 1]);
    let v = col.column(1).as_list::<i32>();
    assert_eq!(v.value_offsets().to_vec(), vec![0, 1, 1, 3]);
    assert_eq!(v.values().as_primitive::<Float32Type>().values().to_vec(), vec![1.5, 2.5, 3.5]);
    let s = col.column(2).as_string::<i32>();
    assert_eq!(s.iter().collect::<Vec<_>>(), vec![Some("a"), Some(""), Some("bc")]);
    let h = col.column(3).as_primitive::<arrow_array::types::Float16Type>();
    assert_eq!(h.values().iter().map(|x| x.to_f32()).collect::<Vec<_>>(), vec![0.5, 1.0, -2.0]);
    assert_eq!(col.column(4).as_primitive::<Float32Type>().values().to_vec(), vec![0.5, 1.25, -3.0]);
    let q = cpp.column(5).as_primitive::<Float64Type>();
    assert_eq!(col.column(5).as_primitive::<Float64Type>().values(), q.values());
    assert_eq!(col.column(6).as_primitive::<UInt8Type>().values().to_vec(), vec![255, 1, 65]);
}

#[test]
fn cardinalities_take_the_width_of_their_index_column() {
    // nMuon is a RNTupleCardinality<std::uint32_t> over a SplitIndex64 column.
    let file = data("Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root");
    let nt = RNTupleFile::open(file).expect("open").rntuple("Events").expect("rntuple");
    let cpp = nt.read_with(Some(&["nMuon"]), 0, 5, &ReadOptions::DEFAULT).expect("read");
    let col = nt.read_with(Some(&["nMuon"]), 0, 5, &column_types()).expect("read");
    assert_eq!(cpp.column(0).data_type(), &DataType::UInt32);
    let sizes = col.column(0).as_primitive::<Int64Type>();
    let expected: Vec<i64> =
        cpp.column(0).as_primitive::<arrow_array::types::UInt32Type>().values().iter().map(|&n| i64::from(n)).collect();
    assert_eq!(sizes.values().to_vec(), expected);
}

#[test]
fn representations_that_agree_on_the_buffer_type_keep_it() {
    // `real` is a float stored as (Split)Real32 in some clusters and Real16
    // in others: Float32 for the whole read, not Float16.
    let file = data("test_multiple_representations_rntuple_v1-0-0-0.root");
    let nt = RNTupleFile::open(file).expect("open").rntuple("ntuple").expect("rntuple");
    let cpp = nt.read_with(None, 0, u64::MAX, &ReadOptions::DEFAULT).expect("read");
    let col = nt.read_with(None, 0, u64::MAX, &column_types()).expect("read");
    assert_eq!(col.column(0).data_type(), &DataType::Float32);
    assert_eq!(col.column(0).as_ref().to_data(), cpp.column(0).as_ref().to_data());
}
