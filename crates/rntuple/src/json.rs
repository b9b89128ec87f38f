//! Canonical JSON of entries (`docs/dump-format.md`): one object per entry,
//! used by `rntuple dump` and by the interoperability tests against ROOT.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use serde_json::{Map, Number, Value};

fn float(x: f64) -> Value {
    match Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("nan".into()),
        None if x > 0.0 => Value::String("inf".into()),
        None => Value::String("-inf".into()),
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// The value at row `i` of `arr` as canonical JSON.
pub fn value(arr: &dyn Array, i: usize) -> Value {
    if arr.is_null(i) {
        return Value::Null;
    }
    match arr.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(arr.as_boolean().value(i)),
        DataType::Int8 => arr.as_primitive::<Int8Type>().value(i).into(),
        DataType::Int16 => arr.as_primitive::<Int16Type>().value(i).into(),
        DataType::Int32 => arr.as_primitive::<Int32Type>().value(i).into(),
        DataType::Int64 => arr.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt8 => arr.as_primitive::<UInt8Type>().value(i).into(),
        DataType::UInt16 => arr.as_primitive::<UInt16Type>().value(i).into(),
        DataType::UInt32 => arr.as_primitive::<UInt32Type>().value(i).into(),
        DataType::UInt64 => arr.as_primitive::<UInt64Type>().value(i).into(),
        DataType::Float32 => float(f64::from(arr.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(arr.as_primitive::<Float64Type>().value(i)),
        DataType::LargeUtf8 => Value::String(arr.as_string::<i64>().value(i).to_string()),
        DataType::Utf8 => Value::String(arr.as_string::<i32>().value(i).to_string()),
        DataType::LargeBinary => Value::String(hex(arr.as_binary::<i64>().value(i))),
        DataType::LargeList(_) => {
            let v = arr.as_list::<i64>().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::List(_) => {
            let v = arr.as_list::<i32>().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::FixedSizeList(_, _) => {
            let v = arr.as_fixed_size_list().value(i);
            Value::Array((0..v.len()).map(|j| value(v.as_ref(), j)).collect())
        }
        DataType::Struct(fields) => {
            let s = arr.as_struct();
            let mut m = Map::new();
            for (f, c) in fields.iter().zip(s.columns()) {
                m.insert(f.name().clone(), value(c.as_ref(), i));
            }
            Value::Object(m)
        }
        DataType::Union(_, _) => {
            let u = arr.as_union();
            let child = u.child(u.type_id(i));
            value(child.as_ref(), u.value_offset(i))
        }
        other => Value::String(format!("<unsupported arrow type {other}>")),
    }
}

/// One JSON object per row of `batch`.
pub fn rows(batch: &RecordBatch) -> impl Iterator<Item = Value> + '_ {
    let schema = batch.schema();
    (0..batch.num_rows()).map(move |i| {
        let mut m = Map::new();
        for (f, c) in schema.fields().iter().zip(batch.columns()) {
            m.insert(f.name().clone(), value(c.as_ref(), i));
        }
        Value::Object(m)
    })
}
