//! Arrow record batches with hostile shapes and types from fuzz bytes: every
//! type the writer maps (integers, floats, booleans, strings, binary,
//! lists, large lists, fixed-size lists of any size including 0, structs
//! with 0–3 members, maps, sparse and dense unions, dictionaries) and some
//! it must refuse (null, dates, decimals, views); nested up to depth 4, with
//! nulls where the field allows them and where it does not, sliced arrays
//! (non-zero offsets), zero-row batches, odd field names. Arrays that Arrow
//! itself rejects are replaced by empty ones, so every batch returned is a
//! valid Arrow batch.

use std::sync::Arc;

use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::{
    new_empty_array, new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, DictionaryArray, FixedSizeListArray,
    Float16Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeListArray,
    LargeStringArray, ListArray, MapArray, RecordBatch, StringArray, StructArray, UInt16Array, UInt32Array,
    UInt64Array, UInt8Array, UnionArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit, UnionFields, UnionMode};

use crate::Bytes;

const NAMES: [&str; 10] = ["x", "", "_0", "a.b", "x", "π", "very_long_name_very_long_name", "0", " ", "_collection0"];

const MAX_DEPTH: usize = 4;

/// A field with a type drawn from `b`.
pub fn field(b: &mut Bytes<'_>, depth: usize) -> Field {
    let name = NAMES[b.below(NAMES.len())];
    Field::new(name, data_type(b, depth), !b.u8().is_multiple_of(3))
}

pub fn data_type(b: &mut Bytes<'_>, depth: usize) -> DataType {
    let leaf = depth >= MAX_DEPTH;
    let pick = b.below(if leaf { 16 } else { 26 });
    let item = |b: &mut Bytes<'_>| Arc::new(field(b, depth + 1));
    match pick {
        0 => DataType::Int8,
        1 => DataType::Int16,
        2 => DataType::Int32,
        3 => DataType::Int64,
        4 => DataType::UInt8,
        5 => DataType::UInt16,
        6 => DataType::UInt32,
        7 => DataType::UInt64,
        8 => DataType::Float32,
        9 => DataType::Float64,
        10 => DataType::Boolean,
        11 => DataType::Utf8,
        12 => DataType::LargeUtf8,
        13 => DataType::Binary,
        14 => DataType::Float16,
        15 => [DataType::Null, DataType::Date32, DataType::Decimal128(10, 2), DataType::Utf8View]
            .get(b.below(5))
            .cloned()
            .unwrap_or(DataType::Timestamp(TimeUnit::Microsecond, None)),
        16 | 17 => DataType::List(item(b)),
        18 => DataType::LargeList(item(b)),
        19 => DataType::FixedSizeList(item(b), i32::from(b.u8() % 5)),
        20 | 21 => DataType::Struct((0..b.below(4)).map(|_| field(b, depth + 1)).collect::<Fields>()),
        22 => {
            let key = Field::new("key", data_type(b, MAX_DEPTH), false);
            let value = field(b, depth + 1);
            let entries = Field::new("entries", DataType::Struct(Fields::from(vec![key, value])), false);
            DataType::Map(Arc::new(entries), b.bool())
        }
        23 => {
            let n = 1 + b.below(3);
            let fields: Vec<Field> = (0..n).map(|_| field(b, depth + 1)).collect();
            let ids: Vec<i8> = (0..n as i8).map(|i| if b.u8() == 0xFF { 100 + i } else { i }).collect();
            let mode = if b.bool() { UnionMode::Dense } else { UnionMode::Sparse };
            match UnionFields::try_new(ids, fields) {
                Ok(f) => DataType::Union(f, mode),
                Err(_) => DataType::Int8,
            }
        }
        24 => DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::Utf8)),
        _ => DataType::Struct(Fields::empty()),
    }
}

fn nulls(b: &mut Bytes<'_>, len: usize, nullable: bool) -> Option<NullBuffer> {
    // Nulls where the field forbids them too, now and then: Arrow refuses
    // some, the writer must refuse the rest.
    let kind = b.u8() % 4;
    if kind == 0 || (!nullable && kind != 3) {
        return None;
    }
    let mut bits = BooleanBufferBuilder::new(len);
    for _ in 0..len {
        bits.append(!b.u8().is_multiple_of(3));
    }
    Some(NullBuffer::new(bits.finish()))
}

fn offsets(b: &mut Bytes<'_>, len: usize) -> Vec<usize> {
    let mut sizes = Vec::with_capacity(len);
    for _ in 0..len {
        let s = b.u8();
        // Mostly short, sometimes long collections.
        sizes.push(if s >= 250 { usize::from(s) * 4 } else { usize::from(s % 5) });
    }
    sizes
}

/// An array of `len` elements of `field`'s type, or an empty stand-in
/// when Arrow refuses what was drawn.
pub fn array(b: &mut Bytes<'_>, field: &Field, len: usize) -> ArrayRef {
    let dt = field.data_type();
    let n = nulls(b, len, field.is_nullable());
    let built: Option<ArrayRef> = match dt {
        DataType::Int8 => Some(Arc::new(Int8Array::new((0..len).map(|_| b.u8() as i8).collect(), n))),
        DataType::Int16 => Some(Arc::new(Int16Array::new((0..len).map(|_| b.u16() as i16).collect(), n))),
        DataType::Int32 => Some(Arc::new(Int32Array::new((0..len).map(|_| b.u32() as i32).collect(), n))),
        DataType::Int64 => Some(Arc::new(Int64Array::new((0..len).map(|_| b.u64() as i64).collect(), n))),
        DataType::UInt8 => Some(Arc::new(UInt8Array::new((0..len).map(|_| b.u8()).collect(), n))),
        DataType::UInt16 => Some(Arc::new(UInt16Array::new((0..len).map(|_| b.u16()).collect(), n))),
        DataType::UInt32 => Some(Arc::new(UInt32Array::new((0..len).map(|_| b.u32()).collect(), n))),
        DataType::UInt64 => Some(Arc::new(UInt64Array::new((0..len).map(|_| b.u64()).collect(), n))),
        DataType::Float16 => {
            Some(Arc::new(Float16Array::new((0..len).map(|_| half::f16::from_bits(b.u16())).collect(), n)))
        }
        DataType::Float32 => Some(Arc::new(Float32Array::new((0..len).map(|_| f32::from_bits(b.u32())).collect(), n))),
        DataType::Float64 => Some(Arc::new(Float64Array::new((0..len).map(|_| f64::from_bits(b.u64())).collect(), n))),
        DataType::Boolean => Some(Arc::new(BooleanArray::new((0..len).map(|_| b.bool()).collect(), n))),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Binary => {
            let sizes = offsets(b, len);
            let mut values = Vec::new();
            for &s in &sizes {
                for _ in 0..s {
                    // Mostly ASCII, sometimes bytes that are not UTF-8.
                    let c = b.u8();
                    values.push(if c >= 0xF0 { c } else { b'a' + c % 26 });
                }
            }
            match dt {
                DataType::Utf8 => StringArray::try_new(OffsetBuffer::from_lengths(sizes), values.into(), n)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef),
                DataType::LargeUtf8 => LargeStringArray::try_new(OffsetBuffer::from_lengths(sizes), values.into(), n)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef),
                _ => BinaryArray::try_new(OffsetBuffer::from_lengths(sizes), values.into(), n)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef),
            }
        }
        DataType::List(item) | DataType::LargeList(item) => {
            let sizes = offsets(b, len);
            let total = sizes.iter().sum();
            let values = array(b, item, total);
            if matches!(dt, DataType::List(_)) {
                ListArray::try_new(item.clone(), OffsetBuffer::from_lengths(sizes), values, n)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef)
            } else {
                LargeListArray::try_new(item.clone(), OffsetBuffer::from_lengths(sizes), values, n)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef)
            }
        }
        DataType::FixedSizeList(item, size) => {
            let values = array(b, item, len * usize::try_from(*size).unwrap_or(0));
            FixedSizeListArray::try_new(item.clone(), *size, values, n).ok().map(|a| Arc::new(a) as ArrayRef)
        }
        DataType::Struct(fields) => {
            let children: Vec<ArrayRef> = fields.iter().map(|f| array(b, f, len)).collect();
            if fields.is_empty() {
                Some(Arc::new(StructArray::new_empty_fields(len, n)))
            } else {
                StructArray::try_new(fields.clone(), children, n).ok().map(|a| Arc::new(a) as ArrayRef)
            }
        }
        DataType::Map(entries, sorted) => {
            let sizes = offsets(b, len);
            let total = sizes.iter().sum();
            let entries_array = array(b, entries, total);
            entries_array.as_any().downcast_ref::<StructArray>().and_then(|s| {
                MapArray::try_new(entries.clone(), OffsetBuffer::from_lengths(sizes), s.clone(), n, *sorted)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef)
            })
        }
        DataType::Union(fields, mode) => {
            let ids: Vec<i8> = fields.iter().map(|(id, _)| id).collect();
            let type_ids: Vec<i8> = (0..len).map(|_| ids[b.below(ids.len())]).collect();
            if *mode == UnionMode::Dense {
                let mut counts = vec![0i32; ids.len()];
                let mut offs = Vec::with_capacity(len);
                for t in &type_ids {
                    let k = ids.iter().position(|i| i == t).unwrap_or(0);
                    offs.push(counts[k]);
                    counts[k] += 1;
                }
                let children: Vec<ArrayRef> = fields
                    .iter()
                    .enumerate()
                    .map(|(k, (_, f))| array(b, f, usize::try_from(counts[k]).unwrap_or(0)))
                    .collect();
                UnionArray::try_new(fields.clone(), type_ids.into(), Some(ScalarBuffer::from(offs)), children)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef)
            } else {
                let children: Vec<ArrayRef> = fields.iter().map(|(_, f)| array(b, f, len)).collect();
                UnionArray::try_new(fields.clone(), type_ids.into(), None, children)
                    .ok()
                    .map(|a| Arc::new(a) as ArrayRef)
            }
        }
        DataType::Dictionary(_, _) => {
            let words = StringArray::from(vec!["a", "", "muon"]);
            let keys = Int16Array::new((0..len).map(|_| (b.u8() % 4) as i16).collect(), n);
            DictionaryArray::try_new(keys, Arc::new(words)).ok().map(|a| Arc::new(a) as ArrayRef)
        }
        _ => Some(new_null_array(dt, len)),
    };
    let a = built.unwrap_or_else(|| new_empty_array(dt));
    if a.len() != len {
        // Arrow refused what was drawn: a null array of the right length, when
        // Arrow allows one, keeps the batch valid.
        return new_null_array(dt, len);
    }
    a
}

/// A batch of 0–`max_rows` rows over 1–4 top-level fields, maybe sliced so
/// that its arrays start at a non-zero offset.
pub fn batch(b: &mut Bytes<'_>, max_rows: usize) -> Option<RecordBatch> {
    let fields: Vec<Field> = (0..1 + b.below(4)).map(|_| field(b, 0)).collect();
    let rows = b.below(max_rows + 1);
    let columns: Vec<ArrayRef> = fields.iter().map(|f| array(b, f, rows)).collect();
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).ok()?;
    let skip = b.below(rows + 1);
    Some(if b.bool() { batch.slice(skip, rows - skip) } else { batch })
}
