//! Builds Arrow arrays of one field for one whole cluster, recursing through
//! the field tree (spec "Mapping of C++ Types to Fields and Columns").

use std::sync::Arc;

use arrow_array::builder::BooleanBufferBuilder;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, UnionFields};
use rntuple_format::column::ColumnValues;
use rntuple_format::{Error, Location, Result};

use super::source::PageSource;
use crate::descriptor::ClusterInfo;
use crate::schema::{FieldKind, FieldNode, Primitive};

fn structure_error(node: &FieldNode, cluster: &ClusterInfo, message: String) -> Error {
    Error::out_of_spec(
        message,
        Location::new(format!("field '{}' (id {}) in cluster {}", node.name, node.id, cluster.id), None),
    )
}

fn arrow_err(node: &FieldNode, e: arrow_schema::ArrowError) -> Error {
    Error::out_of_spec(format!("cannot assemble array: {e}"), Location::new(format!("field '{}'", node.name), None))
}

/// Builds the values `[a, b)` (cluster-relative element indices of this
/// field) of `node` in `cluster`.
pub fn build_field(src: &PageSource, node: &FieldNode, cluster: &ClusterInfo, a: u64, b: u64) -> Result<ArrayRef> {
    let count = b.saturating_sub(a);
    match &node.kind {
        FieldKind::Primitive(p) => {
            let cols = principal(src, node, cluster, 1)?;
            let is_real = src.desc.columns.get(cols[0] as usize).is_some_and(|c| {
                use rntuple_format::model::ColumnType as T;
                matches!(
                    c.column_type,
                    T::Real16 | T::SplitReal16 | T::Real32 | T::SplitReal32 | T::Real32Trunc | T::Real32Quant
                )
            });
            let out = (*p == Primitive::F64 && is_real).then(|| ColumnValues::F64(Vec::new()));
            let values = src.read_column_into(cols[0], cluster, a, b, out)?;
            primitive_array(values, *p).map_err(|m| structure_error(node, cluster, m))
        }
        FieldKind::String | FieldKind::Streamer => {
            let cols = principal(src, node, cluster, 2)?;
            let (base, offsets) = read_offsets(src, node, cluster, cols[0], a, b)?;
            let total = *offsets.last().unwrap_or(&0) as u64;
            let bytes = match src.read_column(cols[1], cluster, base, base + total)? {
                ColumnValues::U8(v) => v,
                ColumnValues::I8(v) => v.into_iter().map(|b| b as u8).collect(),
                _ => return Err(structure_error(node, cluster, "byte column of unexpected type".into())),
            };
            let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
            if node.kind == FieldKind::String && std::str::from_utf8(&bytes).is_ok() {
                // Offsets may still split a character; the checked constructor says so.
                match LargeStringArray::try_new(offsets.clone(), bytes.clone().into(), None) {
                    Ok(arr) => Ok(Arc::new(arr)),
                    Err(_) => Ok(Arc::new(LargeBinaryArray::new(offsets, bytes.into(), None))),
                }
            } else {
                // Streamer bytes, or a std::string holding bytes that are not
                // UTF-8 (ROOT allows any bytes): delivered as binary.
                Ok(Arc::new(LargeBinaryArray::new(offsets, bytes.into(), None)))
            }
        }
        FieldKind::Cardinality { wide } => {
            let cols = principal(src, node, cluster, 1)?;
            let (_, offsets) = read_offsets(src, node, cluster, cols[0], a, b)?;
            let sizes = offsets.windows(2).map(|w| (w[1] - w[0]) as u64);
            Ok(if *wide {
                Arc::new(UInt64Array::from_iter_values(sizes))
            } else {
                Arc::new(UInt32Array::from_iter_values(sizes.map(|s| s as u32)))
            })
        }
        FieldKind::Collection { nullable } => {
            let cols = principal(src, node, cluster, 1)?;
            let (base, offsets) = read_offsets(src, node, cluster, cols[0], a, b)?;
            let total = *offsets.last().unwrap_or(&0) as u64;
            let child = &node.children[0];
            let values = build_field(src, child, cluster, base, base + total)?;
            if *nullable {
                let mut indices = Vec::with_capacity(count as usize);
                for w in offsets.windows(2) {
                    match w[1] - w[0] {
                        0 => indices.push(None),
                        1 => indices.push(Some(w[0] as u64)),
                        n => {
                            return Err(structure_error(
                                node,
                                cluster,
                                format!("optional value has {n} elements (at most 1 allowed)"),
                            ))
                        }
                    }
                }
                let idx = UInt64Array::from(indices);
                arrow_select::take::take(values.as_ref(), &idx, None).map_err(|e| arrow_err(node, e))
            } else {
                let field = Arc::new(child.arrow_field().with_data_type(values.data_type().clone()));
                let arr = LargeListArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offsets)), values, None)
                    .map_err(|e| arrow_err(node, e))?;
                Ok(Arc::new(arr))
            }
        }
        FieldKind::Array { size } => {
            let child = &node.children[0];
            let (ca, cb) = scaled(node, cluster, a, b, *size)?;
            let values = build_field(src, child, cluster, ca, cb)?;
            let field = Arc::new(child.arrow_field().with_data_type(values.data_type().clone()));
            let arr = FixedSizeListArray::try_new(field, *size as i32, values, None).map_err(|e| arrow_err(node, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Bitset { size } => {
            let cols = principal(src, node, cluster, 1)?;
            let (ca, cb) = scaled(node, cluster, a, b, *size)?;
            let values = src.read_column(cols[0], cluster, ca, cb)?;
            let bits = primitive_array(values, Primitive::Bool).map_err(|m| structure_error(node, cluster, m))?;
            let field = Arc::new(Field::new("_0", DataType::Boolean, false));
            let arr = FixedSizeListArray::try_new(field, *size as i32, bits, None).map_err(|e| arrow_err(node, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Record => {
            if node.children.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(count as usize, None)));
            }
            let mut fields = Vec::with_capacity(node.children.len());
            let mut arrays = Vec::with_capacity(node.children.len());
            for c in &node.children {
                let arr = build_field(src, c, cluster, a, b)?;
                fields.push(Arc::new(c.arrow_field().with_data_type(arr.data_type().clone())));
                arrays.push(arr);
            }
            let arr = StructArray::try_new(fields.into(), arrays, None).map_err(|e| arrow_err(node, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Variant => build_variant(src, node, cluster, a, b),
        FieldKind::Wrapper => build_field(src, &node.children[0], cluster, a, b),
        FieldKind::Unsupported(what) => Err(Error::unsupported(
            what.clone(),
            Location::new(format!("field '{}' (type '{}')", node.name, node.type_name), None),
        )),
    }
}

/// The primary representation's columns, checking there are at least `n`.
fn principal<'a>(src: &PageSource, node: &'a FieldNode, cluster: &ClusterInfo, n: usize) -> Result<&'a [u32]> {
    match src.primary(&node.representations, cluster) {
        Some(cols) if cols.len() >= n => Ok(cols),
        _ => Err(structure_error(node, cluster, format!("field needs {n} column(s) but has none attached"))),
    }
}

/// Element range `[a*n, b*n)` of the subfield of a repetitive field.
fn scaled(node: &FieldNode, cluster: &ClusterInfo, a: u64, b: u64, n: u64) -> Result<(u64, u64)> {
    match (a.checked_mul(n), b.checked_mul(n)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(structure_error(node, cluster, format!("element {b} of a repetitive field of size {n} overflows"))),
    }
}

/// Reads entries `[a, b)` of an index column (spec: index values are
/// cluster-relative end offsets). Returns the child element where entry `a`
/// starts and `b - a + 1` offsets relative to it, starting at 0.
fn read_offsets(
    src: &PageSource,
    node: &FieldNode,
    cluster: &ClusterInfo,
    col: u32,
    a: u64,
    b: u64,
) -> Result<(u64, Vec<i64>)> {
    let from = a.saturating_sub(1);
    let ends = match src.read_column(col, cluster, from, b)? {
        ColumnValues::Index(v) => v,
        _ => return Err(structure_error(node, cluster, format!("column {col} is not an index column"))),
    };
    let (base, ends) =
        if a > 0 { (ends.first().copied().unwrap_or(0), &ends[1.min(ends.len())..]) } else { (0, &ends[..]) };
    let mut offsets = Vec::with_capacity(ends.len() + 1);
    offsets.push(0i64);
    let mut prev = base;
    for (i, &e) in ends.iter().enumerate() {
        if e < prev || e - base > i64::MAX as u64 {
            return Err(structure_error(
                node,
                cluster,
                format!("index column {col} decreases at element {} ({prev} then {e})", a + i as u64),
            ));
        }
        prev = e;
        offsets.push((e - base) as i64);
    }
    Ok((base, offsets))
}

fn build_variant(src: &PageSource, node: &FieldNode, cluster: &ClusterInfo, a: u64, b: u64) -> Result<ArrayRef> {
    let cols = principal(src, node, cluster, 1)?;
    let (index, tag) = match src.read_column(cols[0], cluster, a, b)? {
        ColumnValues::Switch { index, tag } => (index, tag),
        _ => return Err(structure_error(node, cluster, "variant column is not a Switch column".into())),
    };
    let n = node.children.len();
    if n == 0 || n > 125 {
        return Err(structure_error(node, cluster, format!("variant with {n} alternatives")));
    }
    // Element range of each alternative touched by these entries.
    let mut ranges = vec![(u64::MAX, 0u64); n];
    for (i, (&ix, &t)) in index.iter().zip(&tag).enumerate() {
        if t as usize > n {
            return Err(structure_error(
                node,
                cluster,
                format!("variant tag {t} at element {} but only {n} alternatives", a + i as u64),
            ));
        }
        if t > 0 {
            let r = &mut ranges[t as usize - 1];
            r.0 = r.0.min(ix);
            r.1 = r.1.max(ix.saturating_add(1));
        }
    }
    let mut children = Vec::with_capacity(n);
    for (k, c) in node.children.iter().enumerate() {
        let (lo, hi) = ranges[k];
        let (lo, hi) = if lo == u64::MAX { (0, 0) } else { (lo, hi) };
        if hi - lo > index.len() as u64 * 4 + 1024 {
            // Sparse or hostile indices: refuse to read far more than the entries can hold.
            return Err(structure_error(node, cluster, format!("variant alternative {k} indices span {lo}..{hi}")));
        }
        ranges[k] = (lo, hi);
        children.push(build_field(src, c, cluster, lo, hi)?);
    }
    let base0 = children[0].len() as i32;
    let mut invalid = 0i32;
    let mut type_ids = Vec::with_capacity(index.len());
    let mut offsets = Vec::with_capacity(index.len());
    for (&ix, &t) in index.iter().zip(&tag) {
        if t == 0 {
            type_ids.push(0i8);
            offsets.push(base0 + invalid);
            invalid += 1;
        } else {
            type_ids.push((t - 1) as i8);
            offsets.push((ix - ranges[t as usize - 1].0) as i32);
        }
    }
    if invalid > 0 {
        // Invalid (valueless) variants point at null slots appended to the first alternative.
        let nulls = arrow_array::new_null_array(children[0].data_type(), invalid as usize);
        children[0] =
            arrow_select::concat::concat(&[children[0].as_ref(), nulls.as_ref()]).map_err(|e| arrow_err(node, e))?;
    }
    let fields = UnionFields::try_new(
        0..n as i8,
        node.children
            .iter()
            .zip(&children)
            .map(|(c, arr)| c.arrow_field().with_nullable(true).with_data_type(arr.data_type().clone())),
    )
    .map_err(|e| arrow_err(node, e))?;
    let arr =
        UnionArray::try_new(fields, type_ids.into(), Some(offsets.into()), children).map_err(|e| arrow_err(node, e))?;
    Ok(Arc::new(arr))
}

macro_rules! cast_values {
    ($values:expr, $t:ty, $arrow:ty) => {{
        let v: Vec<$t> = match $values {
            ColumnValues::I8(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::U8(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::I16(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::U16(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::I32(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::U32(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::I64(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::U64(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::F32(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::F64(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::Bool(v) => v.into_iter().map(|x| u8::from(x) as $t).collect(),
            ColumnValues::Index(v) => v.into_iter().map(|x| x as $t).collect(),
            ColumnValues::Switch { .. } => return Err("a Switch column cannot hold a fundamental type".to_string()),
        };
        Arc::new(PrimitiveArray::<$arrow>::new(ScalarBuffer::from(v), None)) as ArrayRef
    }};
}

/// Converts decoded column values to the Arrow array of the field's type
/// (spec "Fundamental Types": the R-marked column/type combinations convert).
fn primitive_array(values: ColumnValues, p: Primitive) -> std::result::Result<ArrayRef, String> {
    Ok(match p {
        Primitive::Bool => {
            let bits: BooleanBuffer = match values {
                ColumnValues::Bool(v) => {
                    let mut b = BooleanBufferBuilder::new(v.len());
                    for x in v {
                        b.append(x);
                    }
                    b.finish()
                }
                ColumnValues::I8(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::U8(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::I16(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::U16(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::I32(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::U32(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::I64(v) => v.iter().map(|&x| x != 0).collect(),
                ColumnValues::U64(v) => v.iter().map(|&x| x != 0).collect(),
                _ => return Err("a floating-point or index column cannot hold bool".into()),
            };
            Arc::new(BooleanArray::new(bits, None))
        }
        Primitive::Byte | Primitive::U8 => cast_values!(values, u8, UInt8Type),
        Primitive::Char | Primitive::I8 => cast_values!(values, i8, Int8Type),
        Primitive::I16 => cast_values!(values, i16, Int16Type),
        Primitive::U16 => cast_values!(values, u16, UInt16Type),
        Primitive::I32 => cast_values!(values, i32, Int32Type),
        Primitive::U32 => cast_values!(values, u32, UInt32Type),
        Primitive::I64 => cast_values!(values, i64, Int64Type),
        Primitive::U64 => cast_values!(values, u64, UInt64Type),
        Primitive::F32 => cast_values!(values, f32, Float32Type),
        Primitive::F64 => cast_values!(values, f64, Float64Type),
    })
}
