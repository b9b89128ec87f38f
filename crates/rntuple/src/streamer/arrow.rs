//! Decoded streamer values as Arrow arrays, typed by the streamer info
//! (not by the values, so that empty vectors still have their item type):
//! a class is a struct of its members (bases as `:_N`), a `std::vector` a
//! large list of item `_0`, a C array a fixed-size list, a `std::string` a
//! large UTF-8 string (invalid UTF-8 is replaced), fundamentals their
//! Arrow types — the types a split field of the class reads as.

use std::sync::Arc;

use arrow_array::builder::BooleanBuilder;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericBinaryArray, LargeListArray, LargeStringArray, OffsetSizeTrait,
    PrimitiveArray, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields};

use super::buffer::Fail;
use super::decode::{basic_code, decode, is_string, map_items, vector_item, Value, MAX_DEPTH};
use super::info::{ElementKind, StreamerInfos};

fn basic_type(code: i32) -> Option<DataType> {
    Some(match code {
        1 => DataType::Int8,
        2 => DataType::Int16,
        3 | 6 => DataType::Int32,
        4 | 16 => DataType::Int64,
        5 | 9 => DataType::Float32,
        8 => DataType::Float64,
        11 => DataType::UInt8,
        12 => DataType::UInt16,
        13 | 15 => DataType::UInt32,
        14 | 17 => DataType::UInt64,
        18 => DataType::Boolean,
        _ => return None,
    })
}

fn item(dt: DataType) -> Arc<Field> {
    Arc::new(Field::new("_0", dt, false))
}

/// The Arrow type of C++ type `type_name` decoded with `infos`.
pub fn arrow_type(infos: &StreamerInfos, type_name: &str) -> Result<DataType, Fail> {
    type_of(infos, type_name, 0)
}

fn type_of(infos: &StreamerInfos, type_name: &str, depth: usize) -> Result<DataType, Fail> {
    if depth > MAX_DEPTH {
        return Err(format!("type {type_name}: nested deeper than {MAX_DEPTH} levels"));
    }
    if let Some(it) = vector_item(type_name) {
        return Ok(DataType::LargeList(item(type_of(infos, it, depth + 1)?)));
    }
    if let Some((k, v)) = map_items(type_name) {
        let pair = DataType::Struct(Fields::from(vec![
            Field::new("_0", type_of(infos, k, depth + 1)?, false),
            Field::new("_1", type_of(infos, v, depth + 1)?, false),
        ]));
        return Ok(DataType::LargeList(item(pair)));
    }
    if type_name.trim() == "TString" {
        return Ok(DataType::LargeUtf8);
    }
    if is_string(type_name) {
        return Ok(DataType::LargeUtf8);
    }
    if let Some(t) = basic_code(type_name.trim()).and_then(basic_type) {
        return Ok(t);
    }
    let info = infos
        .get(type_name, None, None)
        .ok_or_else(|| format!("class {type_name} is missing from the streamer info"))?;
    let mut fields = Vec::with_capacity(info.elements.len());
    let mut bases = 0;
    for e in &info.elements {
        let what =
            || format!("{}::{} (type '{}', streamer element type {})", info.name, e.name, e.type_name, e.type_code);
        let (name, dt) = match &e.kind {
            ElementKind::Base if e.name == "TObject" => {
                bases += 1;
                let u32_field = |n: &str| Field::new(n, DataType::UInt32, false);
                let t = DataType::Struct(Fields::from(vec![u32_field("fUniqueID"), u32_field("fBits")]));
                (format!(":_{}", bases - 1), t)
            }
            ElementKind::Base => {
                bases += 1;
                (format!(":_{}", bases - 1), type_of(infos, &e.name, depth + 1)?)
            }
            ElementKind::Basic if (1..20).contains(&e.type_code) => {
                (e.name.clone(), basic_type(e.type_code).ok_or_else(|| format!("{} is not decoded", what()))?)
            }
            ElementKind::Basic if (21..40).contains(&e.type_code) => {
                let t = basic_type(e.type_code - 20).ok_or_else(|| format!("{} is not decoded", what()))?;
                (e.name.clone(), DataType::FixedSizeList(item(t), e.array_length))
            }
            ElementKind::String => (e.name.clone(), DataType::LargeUtf8),
            ElementKind::Object => (e.name.clone(), type_of(infos, &e.type_name, depth + 1)?),
            ElementKind::Other(c) if c == "TStreamerString" || e.type_code == 65 => {
                (e.name.clone(), DataType::LargeUtf8)
            }
            ElementKind::Stl { .. } => (e.name.clone(), type_of(infos, &e.type_name, depth + 1)?),
            _ => return Err(format!("{} is not decoded", what())),
        };
        fields.push(Field::new(name, dt, false));
    }
    Ok(DataType::Struct(Fields::from(fields)))
}

/// Decodes every entry of a streamer field's bytes (`bytes`, a binary
/// array of one object per entry) of C++ type `type_name` into one Arrow
/// array. (The reader decodes streamer fields itself, with
/// [`decode_entries`]; this is for bytes obtained otherwise.)
pub fn decode_array<O: OffsetSizeTrait>(
    infos: &StreamerInfos,
    type_name: &str,
    bytes: &GenericBinaryArray<O>,
) -> Result<ArrayRef, Fail> {
    let dt = arrow_type(infos, type_name)?;
    let mut values = Vec::with_capacity(bytes.len());
    for (i, b) in bytes.iter().enumerate() {
        let b = b.ok_or_else(|| format!("entry {i} has no bytes"))?;
        values.push(decode(infos, type_name, b).map_err(|e| format!("entry {i}: {e}"))?);
    }
    build(&dt, &values.iter().collect::<Vec<_>>())
}

/// Decodes the objects of C++ type `type_name` stored back to back in
/// `bytes`, object `i` in `bytes[offsets[i]..offsets[i + 1]]` (a streamer
/// field's byte column and its offsets, as the reader holds them), into
/// one Arrow array typed by [`arrow_type`]. Offsets that decrease or point
/// past `bytes` are refused. A failure names the object by its index in
/// the read (for a field under a collection, the index of the item).
pub fn decode_entries(infos: &StreamerInfos, type_name: &str, offsets: &[i64], bytes: &[u8]) -> Result<ArrayRef, Fail> {
    match decode_entries_charged(infos, type_name, offsets, bytes, |_| Ok::<(), std::convert::Infallible>(())) {
        Ok(decoded) => decoded,
        Err(never) => match never {},
    }
}

/// [`decode_entries`], calling `charge` with the bytes of each chunk of
/// arrays as it is built (a memory budget); an error of `charge` stops
/// the decoding and is returned as the outer error, while the inner one
/// says why the objects cannot be decoded.
pub fn decode_entries_charged<E>(
    infos: &StreamerInfos,
    type_name: &str,
    offsets: &[i64],
    bytes: &[u8],
    mut charge: impl FnMut(u64) -> Result<(), E>,
) -> Result<Result<ArrayRef, Fail>, E> {
    let dt = match arrow_type(infos, type_name) {
        Ok(dt) => dt,
        Err(e) => return Ok(Err(e)),
    };
    let mut built = |values: &[Value]| -> Result<Result<ArrayRef, Fail>, E> {
        let arr = match build(&dt, &values.iter().collect::<Vec<_>>()) {
            Ok(arr) => arr,
            Err(e) => return Ok(Err(e)),
        };
        charge(arr.get_array_memory_size() as u64)?;
        Ok(Ok(arr))
    };
    let n = offsets.len().saturating_sub(1);
    // Decoded in chunks, each held as values only until it is an array.
    let mut chunks = Vec::with_capacity(n.div_ceil(CHUNK));
    let mut values = Vec::with_capacity(n.min(CHUNK));
    for (i, w) in offsets.windows(2).enumerate() {
        let Some(b) = usize::try_from(w[0]).ok().zip(usize::try_from(w[1]).ok()).and_then(|(a, b)| bytes.get(a..b))
        else {
            return Ok(Err(format!(
                "object {i}: bytes {}..{} are not within the {} there are",
                w[0],
                w[1],
                bytes.len()
            )));
        };
        match decode(infos, type_name, b) {
            Ok(v) => values.push(v),
            Err(e) => return Ok(Err(format!("object {i} of the read: {e}"))),
        }
        if values.len() == CHUNK {
            match built(&values)? {
                Ok(arr) => chunks.push(arr),
                Err(e) => return Ok(Err(e)),
            }
            values.clear();
        }
    }
    if !values.is_empty() || chunks.is_empty() {
        match built(&values)? {
            Ok(arr) => chunks.push(arr),
            Err(e) => return Ok(Err(e)),
        }
    }
    if chunks.len() == 1 {
        return Ok(Ok(chunks.swap_remove(0)));
    }
    let parts: Vec<&dyn Array> = chunks.iter().map(|c| c.as_ref()).collect();
    // The concatenation holds the chunks and their copy at once.
    charge(chunks.iter().map(|c| c.get_array_memory_size() as u64).sum())?;
    Ok(arrow_select::concat::concat(&parts).map_err(|e| e.to_string()))
}

/// Objects decoded into values before they become an Arrow array
/// ([`decode_entries`]): bounds the values held at once.
const CHUNK: usize = 4096;

fn mismatch(dt: &DataType, v: &Value) -> Fail {
    format!("a decoded {v:?} where the streamer info says {dt}")
}

fn ints<T: ArrowPrimitiveType>(dt: &DataType, values: &[&Value]) -> Result<ArrayRef, Fail>
where
    T::Native: TryFrom<i64> + TryFrom<u64>,
{
    let out: Result<Vec<T::Native>, Fail> = values
        .iter()
        .map(|v| match v {
            Value::Int(i) => T::Native::try_from(*i).map_err(|_| mismatch(dt, v)),
            Value::UInt(u) => T::Native::try_from(*u).map_err(|_| mismatch(dt, v)),
            other => Err(mismatch(dt, other)),
        })
        .collect();
    Ok(Arc::new(PrimitiveArray::<T>::from_iter_values(out?)))
}

fn build(dt: &DataType, values: &[&Value]) -> Result<ArrayRef, Fail> {
    Ok(match dt {
        DataType::Int8 => ints::<Int8Type>(dt, values)?,
        DataType::Int16 => ints::<Int16Type>(dt, values)?,
        DataType::Int32 => ints::<Int32Type>(dt, values)?,
        DataType::Int64 => ints::<Int64Type>(dt, values)?,
        DataType::UInt8 => ints::<UInt8Type>(dt, values)?,
        DataType::UInt16 => ints::<UInt16Type>(dt, values)?,
        DataType::UInt32 => ints::<UInt32Type>(dt, values)?,
        DataType::UInt64 => ints::<UInt64Type>(dt, values)?,
        DataType::Float32 => {
            let v: Result<Vec<f32>, Fail> =
                values.iter().map(|v| if let Value::F32(f) = v { Ok(*f) } else { Err(mismatch(dt, v)) }).collect();
            Arc::new(PrimitiveArray::<Float32Type>::from_iter_values(v?))
        }
        DataType::Float64 => {
            let v: Result<Vec<f64>, Fail> =
                values.iter().map(|v| if let Value::F64(f) = v { Ok(*f) } else { Err(mismatch(dt, v)) }).collect();
            Arc::new(PrimitiveArray::<Float64Type>::from_iter_values(v?))
        }
        DataType::Boolean => {
            let mut b = BooleanBuilder::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Bool(x) => b.append_value(*x),
                    other => return Err(mismatch(dt, other)),
                }
            }
            Arc::new(b.finish())
        }
        DataType::LargeUtf8 => {
            let v: Result<Vec<&str>, Fail> = values
                .iter()
                .map(|v| if let Value::Str(s) = v { Ok(s.as_str()) } else { Err(mismatch(dt, v)) })
                .collect();
            Arc::new(LargeStringArray::from_iter_values(v?))
        }
        DataType::LargeList(f) => {
            let mut lengths = Vec::with_capacity(values.len());
            let mut items = Vec::new();
            for v in values {
                let Value::List(l) = v else { return Err(mismatch(dt, v)) };
                lengths.push(l.len());
                items.extend(l.iter());
            }
            let child = build(f.data_type(), &items)?;
            Arc::new(
                LargeListArray::try_new(f.clone(), OffsetBuffer::from_lengths(lengths), child, None)
                    .map_err(|e| e.to_string())?,
            )
        }
        DataType::FixedSizeList(f, n) => {
            let mut items = Vec::new();
            for v in values {
                match v {
                    Value::List(l) if l.len() == *n as usize => items.extend(l.iter()),
                    other => return Err(mismatch(dt, other)),
                }
            }
            let child = build(f.data_type(), &items)?;
            Arc::new(FixedSizeListArray::try_new(f.clone(), *n, child, None).map_err(|e| e.to_string())?)
        }
        DataType::Struct(fields) => {
            let mut columns: Vec<Vec<&Value>> = vec![Vec::with_capacity(values.len()); fields.len()];
            for v in values {
                match v {
                    Value::Record(m) if m.len() == fields.len() => {
                        for (k, (_, x)) in m.iter().enumerate() {
                            columns[k].push(x);
                        }
                    }
                    other => return Err(mismatch(dt, other)),
                }
            }
            let arrays: Result<Vec<ArrayRef>, Fail> =
                fields.iter().zip(&columns).map(|(f, c)| build(f.data_type(), c)).collect();
            Arc::new(
                StructArray::try_new_with_length(fields.clone(), arrays?, None, values.len())
                    .map_err(|e| e.to_string())?,
            )
        }
        other => return Err(format!("Arrow type {other} is not built from streamer values")),
    })
}
