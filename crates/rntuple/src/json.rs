//! Canonical JSON of entries (`docs/dump-format.md`): one object per entry,
//! byte-identical to what Python's `json.dumps(entry, separators=(",", ":"))`
//! prints for the values ROOT reads. Used by `rntuple dump` and by the
//! interoperability tests against ROOT.

use std::fmt::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;

use crate::schema::{typename::template_name, FieldKind, FieldNode};

/// Appends `x` as Python's `repr(float)` prints it; non-finite values as the
/// strings `"nan"`, `"inf"`, `"-inf"`.
pub fn write_float(x: f64, out: &mut String) {
    if x.is_nan() {
        out.push_str("\"nan\"");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "\"inf\"" } else { "\"-inf\"" });
        return;
    }
    // Shortest round-trip digits in scientific form, e.g. "-1.2345e-5".
    let sci = format!("{x:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if neg {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                for _ in digits.len()..int_len {
                    out.push('0');
                }
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

fn push_u16_escape(u: u32, out: &mut String) {
    let _ = write!(out, "\\u{u:04x}");
}

/// Appends a JSON string as Python's `json` module writes it with
/// `ensure_ascii=True`. Bytes that are not valid UTF-8 are escaped as
/// `\udcXX` (Python's `surrogateescape`).
pub fn write_string_bytes(bytes: &[u8], out: &mut String) {
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                ' '..='~' => out.push(c),
                _ => {
                    let mut buf = [0u16; 2];
                    for u in c.encode_utf16(&mut buf) {
                        push_u16_escape(u32::from(*u), out);
                    }
                }
            }
        }
        for &b in chunk.invalid() {
            push_u16_escape(0xDC00 + u32::from(b), out);
        }
    }
    out.push('"');
}

fn hex(bytes: &[u8], out: &mut String) {
    out.push('"');
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

fn write_primitive(arr: &dyn Array, i: usize, out: &mut String) {
    macro_rules! int {
        ($t:ty) => {{
            let _ = write!(out, "{}", arr.as_primitive::<$t>().value(i));
        }};
    }
    match arr.data_type() {
        DataType::Boolean => out.push_str(if arr.as_boolean().value(i) { "true" } else { "false" }),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => int!(UInt64Type),
        DataType::Float32 => write_float(f64::from(arr.as_primitive::<Float32Type>().value(i)), out),
        DataType::Float64 => write_float(arr.as_primitive::<Float64Type>().value(i), out),
        DataType::LargeUtf8 => write_string_bytes(arr.as_string::<i64>().value(i).as_bytes(), out),
        DataType::LargeBinary => write_string_bytes(arr.as_binary::<i64>().value(i), out),
        other => {
            let _ = write!(out, "\"<unexpected arrow type {other}>\"");
        }
    }
}

fn write_list(node: &FieldNode, values: &dyn Array, range: std::ops::Range<usize>, out: &mut String) {
    let child = &node.children[0];
    let unordered = template_name(&node.type_name).starts_with("std::unordered_");
    out.push('[');
    if unordered {
        let mut items: Vec<String> = range
            .map(|j| {
                let mut s = String::new();
                write_value(child, values, j, &mut s);
                s
            })
            .collect();
        items.sort();
        out.push_str(&items.join(","));
    } else {
        for (k, j) in range.enumerate() {
            if k > 0 {
                out.push(',');
            }
            write_value(child, values, j, out);
        }
    }
    out.push(']');
}

/// Appends the value at row `i` of a decoded streamer field's array (typed
/// by `rntuple::streamer::arrow_type`: structs, lists, strings, numbers),
/// records with their Arrow member names (`:_0` for a base class).
fn write_decoded(arr: &dyn Array, i: usize, out: &mut String) {
    if arr.is_null(i) {
        out.push_str("null");
        return;
    }
    let items = |values: &dyn Array, range: std::ops::Range<usize>, out: &mut String| {
        out.push('[');
        for (k, j) in range.enumerate() {
            if k > 0 {
                out.push(',');
            }
            write_decoded(values, j, out);
        }
        out.push(']');
    };
    match arr.data_type() {
        DataType::Struct(fields) => {
            let s = arr.as_struct();
            out.push('{');
            for (k, f) in fields.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_string_bytes(f.name().as_bytes(), out);
                out.push(':');
                write_decoded(s.column(k).as_ref(), i, out);
            }
            out.push('}');
        }
        DataType::LargeList(_) => {
            let l = arr.as_list::<i64>();
            let o = l.value_offsets();
            items(l.values().as_ref(), o[i] as usize..o[i + 1] as usize, out);
        }
        DataType::List(_) => {
            let l = arr.as_list::<i32>();
            let o = l.value_offsets();
            items(l.values().as_ref(), o[i] as usize..o[i + 1] as usize, out);
        }
        DataType::FixedSizeList(_, n) => {
            let n = *n as usize;
            items(arr.as_fixed_size_list().values().as_ref(), i * n..(i + 1) * n, out);
        }
        _ => write_primitive(arr, i, out),
    }
}

/// Appends the value at row `i` of `arr`, which holds values of field `node`.
pub fn write_value(node: &FieldNode, arr: &dyn Array, i: usize, out: &mut String) {
    if arr.is_null(i) {
        out.push_str("null");
        return;
    }
    match &node.kind {
        FieldKind::Primitive(_) | FieldKind::String | FieldKind::Cardinality { .. } => write_primitive(arr, i, out),
        FieldKind::Streamer => match arr.data_type() {
            DataType::LargeBinary => hex(arr.as_binary::<i64>().value(i), out),
            DataType::Binary => hex(arr.as_binary::<i32>().value(i), out),
            // Decoded (the default read): the object as its split field's value.
            _ => write_decoded(arr, i, out),
        },
        FieldKind::Collection { nullable: true } | FieldKind::Wrapper => write_value(&node.children[0], arr, i, out),
        FieldKind::Collection { nullable: false } => {
            let l = arr.as_list::<i64>();
            let offsets = l.value_offsets();
            write_list(node, l.values().as_ref(), offsets[i] as usize..offsets[i + 1] as usize, out);
        }
        FieldKind::Array { size } | FieldKind::Bitset { size } => {
            let l = arr.as_fixed_size_list();
            let start = i * *size as usize;
            if let FieldKind::Bitset { .. } = node.kind {
                out.push('[');
                for j in start..start + *size as usize {
                    if j > start {
                        out.push(',');
                    }
                    write_primitive(l.values().as_ref(), j, out);
                }
                out.push(']');
            } else {
                write_list(node, l.values().as_ref(), start..start + *size as usize, out);
            }
        }
        FieldKind::Record => {
            let s = arr.as_struct();
            out.push('{');
            for (k, c) in node.children.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                write_string_bytes(c.name.as_bytes(), out);
                out.push(':');
                write_value(c, s.column(k).as_ref(), i, out);
            }
            out.push('}');
        }
        FieldKind::Variant => {
            let u = arr.as_union();
            let t = u.type_id(i);
            write_value(&node.children[t as usize], u.child(t).as_ref(), u.value_offset(i), out);
        }
        FieldKind::Unsupported(_) => out.push_str("null"),
    }
}

/// One JSON object (a line without newline) per row of `batch`, whose
/// columns hold the top-level `fields` in order.
pub fn entry_lines<'a>(fields: &'a [&'a FieldNode], batch: &'a RecordBatch) -> impl Iterator<Item = String> + 'a {
    (0..batch.num_rows()).map(move |i| {
        let mut s = String::from("{");
        for (k, (f, c)) in fields.iter().zip(batch.columns()).enumerate() {
            if k > 0 {
                s.push(',');
            }
            write_string_bytes(f.name.as_bytes(), &mut s);
            s.push(':');
            write_value(f, c.as_ref(), i, &mut s);
        }
        s.push('}');
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f64) -> String {
        let mut s = String::new();
        write_float(x, &mut s);
        s
    }

    /// Expected texts are what CPython 3.11 prints for `repr(x)`.
    #[test]
    fn floats_print_like_python_repr() {
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(1e-5), "1e-05");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(1e16), "1e+16");
        assert_eq!(f(1.5e16), "1.5e+16");
        assert_eq!(f(123456789012345.6), "123456789012345.6");
        assert_eq!(f(f64::from(0.1f32)), "0.10000000149011612");
        assert_eq!(f(5e-324), "5e-324");
        assert_eq!(f(-5.960464477539063e-8), "-5.960464477539063e-08");
        assert_eq!(f(f64::NAN), "\"nan\"");
        assert_eq!(f(f64::NEG_INFINITY), "\"-inf\"");
    }

    /// Expected texts are what `json.dumps(s.decode("utf-8", "surrogateescape"))` prints.
    #[test]
    fn strings_escape_like_python_json() {
        let mut s = String::new();
        write_string_bytes(b"a\"\\\n\x01\x7f\xc3\xa9\xf0\x9f\x98\x80\xff", &mut s);
        assert_eq!(s, r#""a\"\\\n\u0001\u007f\u00e9\ud83d\ude00\udcff""#);
    }
}
