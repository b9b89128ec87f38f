//! Arrow arrays from the filled buffers of a [`Plan`], recursing through the
//! field tree (spec "Mapping of C++ Types to Fields and Columns").
//!
//! Buffers become Arrow buffers as they are (no copy): numbers, bytes and
//! offsets (the index buffer is turned into offsets in place). Copies remain
//! where Arrow's layout differs from the decoded one: booleans are packed
//! into bitmaps, optional values are spread over their entries (numbers in
//! one pass, other types with `take`), and valueless variants get null slots
//! appended to their first alternative.

use std::sync::{Arc, Mutex};

use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, UnionFields};
use rntuple_format::column::ColumnValues;
use rntuple_format::model::ColumnType;
use rntuple_format::{Error, Location, Result};

use super::element_ranges::{structure_error, variant_ranges, Plan};
use crate::schema::{FieldKind, FieldNode};
use crate::ArrowShape;

/// The filled buffers, one per slot, each taken once.
#[derive(Debug)]
pub(crate) struct Sinks(Vec<Mutex<Option<ColumnValues>>>);

impl Sinks {
    pub(crate) fn new(values: impl IntoIterator<Item = ColumnValues>) -> Self {
        Sinks(values.into_iter().map(|v| Mutex::new(Some(v))).collect())
    }

    fn take(&self, slot: usize) -> Result<ColumnValues> {
        self.0
            .get(slot)
            .and_then(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take())
            .ok_or_else(|| Error::invalid(format!("buffer {slot} of the read plan used twice")))
    }
}

fn arrow_err(node: &FieldNode, e: arrow_schema::ArrowError) -> Error {
    Error::out_of_spec(format!("cannot assemble array: {e}"), Location::new(format!("field '{}'", node.name), None))
}

fn node_error(node: &FieldNode, message: String) -> Error {
    Error::out_of_spec(message, Location::new(format!("field '{}' (id {})", node.name, node.id), None))
}

fn list_size(node: &FieldNode, size: u64) -> Result<i32> {
    i32::try_from(size).map_err(|_| node_error(node, format!("fixed size {size} is too large for an Arrow list")))
}

/// The array of node `n` over all spans of the plan.
pub(crate) fn build(plan: &Plan, sinks: &Sinks, n: usize) -> Result<ArrayRef> {
    let node = &plan.nodes[n];
    let f = node.field;
    let len = node.len() as usize;
    match &f.kind {
        FieldKind::Primitive(_) => {
            let values = values_array(sinks.take(node.slots[0])?, plan.shape).map_err(|m| node_error(f, m))?;
            if plan.columns_all(f, &[ColumnType::Real16, ColumnType::SplitReal16]) {
                return arrow_cast::cast(&values, &DataType::Float16).map_err(|e| arrow_err(f, e));
            }
            Ok(values)
        }
        FieldKind::Bitset { size } => {
            let bits = values_array(sinks.take(node.slots[0])?, plan.shape).map_err(|m| node_error(f, m))?;
            let field = Arc::new(Field::new("_0", bits.data_type().clone(), false));
            let arr =
                FixedSizeListArray::try_new(field, list_size(f, *size)?, bits, None).map_err(|e| arrow_err(f, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::String | FieldKind::Streamer => {
            let bytes_slot = &plan.slots[node.slots[1]];
            let child = |r: usize| bytes_slot.pieces[r].map_or((0, 0), |p| (p.a, p.b));
            let offsets = offsets(plan, n, node.slots[0], sinks.take(node.slots[0])?, child)?;
            let bytes = match sinks.take(node.slots[1])? {
                ColumnValues::U8(v) => Buffer::from_vec(v),
                other => return Err(node_error(f, format!("byte column decoded as {}", other.kind()))),
            };
            if let Some(narrow) = index32(plan, f, &offsets) {
                if f.kind == FieldKind::String {
                    if let Ok(arr) = StringArray::try_new(narrow.clone(), bytes.clone(), None) {
                        return Ok(Arc::new(arr));
                    }
                }
                return Ok(Arc::new(BinaryArray::try_new(narrow, bytes, None).map_err(|e| arrow_err(f, e))?));
            }
            if f.kind == FieldKind::String {
                // Checks UTF-8, and that no offset splits a character.
                if let Ok(arr) = LargeStringArray::try_new(offsets.clone(), bytes.clone(), None) {
                    return Ok(Arc::new(arr));
                }
            }
            // Streamer bytes, or a std::string holding bytes that are not
            // UTF-8 (ROOT allows any bytes): delivered as binary.
            Ok(Arc::new(LargeBinaryArray::try_new(offsets, bytes, None).map_err(|e| arrow_err(f, e))?))
        }
        FieldKind::Cardinality { wide } => {
            let sizes = sizes(plan, n, sinks.take(node.slots[0])?)?;
            if plan.columns_all(f, &INDEX32) {
                let sizes: Vec<i32> = sizes.into_iter().map(|s| i32::try_from(s).unwrap_or(i32::MAX)).collect();
                return Ok(Arc::new(Int32Array::from(sizes)));
            }
            if plan.columns_all(f, &[ColumnType::Index64, ColumnType::SplitIndex64]) {
                let sizes: Vec<i64> = sizes.into_iter().map(|s| i64::try_from(s).unwrap_or(i64::MAX)).collect();
                return Ok(Arc::new(Int64Array::from(sizes)));
            }
            Ok(if *wide {
                Arc::new(UInt64Array::from(sizes))
            } else {
                Arc::new(UInt32Array::from_iter_values(sizes.into_iter().map(|s| s as u32)))
            })
        }
        FieldKind::Collection { nullable } => {
            let c = node.children[0];
            let child = |r: usize| plan.nodes[c].ranges[r];
            let offsets = offsets(plan, n, node.slots[0], sinks.take(node.slots[0])?, child)?;
            let values = build(plan, sinks, c)?;
            if *nullable {
                return optional(f, &offsets, values);
            }
            let field = Arc::new(child_field(plan.nodes[c].field, &values));
            if let Some(narrow) = index32(plan, f, &offsets) {
                return Ok(Arc::new(ListArray::try_new(field, narrow, values, None).map_err(|e| arrow_err(f, e))?));
            }
            let arr = LargeListArray::try_new(field, offsets, values, None).map_err(|e| arrow_err(f, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Array { size } => {
            let c = node.children[0];
            let values = build(plan, sinks, c)?;
            let field = Arc::new(child_field(plan.nodes[c].field, &values));
            let arr =
                FixedSizeListArray::try_new(field, list_size(f, *size)?, values, None).map_err(|e| arrow_err(f, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Record => {
            if node.children.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(len, None)));
            }
            let mut fields = Vec::with_capacity(node.children.len());
            let mut arrays = Vec::with_capacity(node.children.len());
            for &c in &node.children {
                let arr = build(plan, sinks, c)?;
                fields.push(Arc::new(child_field(plan.nodes[c].field, &arr)));
                arrays.push(arr);
            }
            let arr = StructArray::try_new(fields.into(), arrays, None).map_err(|e| arrow_err(f, e))?;
            Ok(Arc::new(arr))
        }
        FieldKind::Wrapper => build(plan, sinks, node.children[0]),
        FieldKind::Variant => variant(plan, sinks, n),
        FieldKind::Unsupported(what) => Err(Error::unsupported(
            what.clone(),
            Location::new(format!("field '{}' (type '{}')", f.name, f.type_name), None),
        )),
    }
}

const INDEX32: [ColumnType; 2] = [ColumnType::Index32, ColumnType::SplitIndex32];

/// Under [`ArrowShape::ColumnTypes`], the offsets of a field whose index
/// columns are all 32-bit as 32-bit offsets (none if they do not fit).
fn index32(plan: &Plan, f: &FieldNode, offsets: &OffsetBuffer<i64>) -> Option<OffsetBuffer<i32>> {
    if !plan.columns_all(f, &INDEX32) {
        return None;
    }
    let narrow: Vec<i32> = offsets.iter().map(|&o| i32::try_from(o).ok()).collect::<Option<_>>()?;
    Some(OffsetBuffer::new(ScalarBuffer::from(narrow)))
}

/// A buffer of fixed-width values as the Arrow array of its type (booleans
/// one byte each under [`ArrowShape::ColumnTypes`]).
fn values_array(values: ColumnValues, shape: ArrowShape) -> std::result::Result<ArrayRef, String> {
    fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
    }
    Ok(match values {
        ColumnValues::Bool(v) if shape == ArrowShape::ColumnTypes => {
            prim::<UInt8Type>(v.into_iter().map(u8::from).collect())
        }
        ColumnValues::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::collect_bool(v.len(), |i| v[i]), None)),
        ColumnValues::I8(v) => prim::<Int8Type>(v),
        ColumnValues::U8(v) => prim::<UInt8Type>(v),
        ColumnValues::I16(v) => prim::<Int16Type>(v),
        ColumnValues::U16(v) => prim::<UInt16Type>(v),
        ColumnValues::I32(v) => prim::<Int32Type>(v),
        ColumnValues::U32(v) => prim::<UInt32Type>(v),
        ColumnValues::I64(v) => prim::<Int64Type>(v),
        ColumnValues::U64(v) | ColumnValues::Index(v) => prim::<UInt64Type>(v),
        ColumnValues::F32(v) => prim::<Float32Type>(v),
        ColumnValues::F64(v) => prim::<Float64Type>(v),
        ColumnValues::Switch { .. } => return Err("a Switch column cannot hold a fundamental type".into()),
    })
}

/// Visits the ends stored in an index buffer, span by span: `visit(r, base,
/// ends)` with the end of the entry before the span's range (`base`) and
/// the ends of its entries. Checks that ends never decrease.
fn for_each_piece(
    plan: &Plan,
    n: usize,
    raw: &[u64],
    mut visit: impl FnMut(usize, u64, &[u64]) -> Result<()>,
) -> Result<()> {
    let node = &plan.nodes[n];
    let slot = &plan.slots[node.slots[0]];
    let mut pos = 1usize;
    for (r, piece) in slot.pieces.iter().enumerate() {
        let Some(p) = piece else { continue };
        let count = (p.b - p.a) as usize;
        let chunk = raw
            .get(pos..pos + count)
            .ok_or_else(|| node_error(node.field, format!("index buffer of {} elements is too short", raw.len())))?;
        pos += count;
        let (base, ends) = if p.with_base { (chunk[0], &chunk[1..]) } else { (0, chunk) };
        let mut prev = base;
        for (i, &e) in ends.iter().enumerate() {
            if e < prev {
                let entry = plan.spans[r].cluster.first_entry + node.ranges[r].0 + i as u64;
                return Err(structure_error(
                    node.field,
                    plan.spans[r].cluster,
                    format!("index column {} decreases at entry {entry} ({prev} then {e})", p.column),
                ));
            }
            prev = e;
        }
        visit(r, base, ends)?;
    }
    Ok(())
}

/// Turns an index buffer into the `len + 1` offsets of a list over all
/// spans, in place. `child(r)` is the element range the items occupy in
/// span `r`; the offsets must end exactly there.
fn offsets(
    plan: &Plan,
    n: usize,
    slot: usize,
    raw: ColumnValues,
    child: impl Fn(usize) -> (u64, u64),
) -> Result<OffsetBuffer<i64>> {
    let ColumnValues::Index(mut raw) = raw else {
        return Err(node_error(plan.nodes[n].field, "index column decoded as another type".into()));
    };
    let node = &plan.nodes[n];
    // Check first (reading), then rewrite in place (writing never overtakes reading).
    let mut total = 0u64;
    for_each_piece(plan, n, &raw, |r, base, ends| {
        let (ca, cb) = child(r);
        let last = ends.last().copied().unwrap_or(base);
        // (`ca` equals `base` by construction; an empty item range may sit anywhere.)
        if last - base != cb - ca {
            return Err(structure_error(
                node.field,
                plan.spans[r].cluster,
                format!(
                    "index column {} spans items {base}..{last} but the item columns hold {ca}..{cb}",
                    plan.slots[slot].pieces[r].map_or(0, |p| p.column)
                ),
            ));
        }
        total = total.saturating_add(cb - ca);
        Ok(())
    })?;
    if total > i64::MAX as u64 {
        return Err(node_error(node.field, format!("{total} items overflow 64-bit offsets")));
    }
    let mut read = 1usize;
    let mut write = 1usize;
    let mut acc = 0u64;
    for (r, piece) in plan.slots[slot].pieces.iter().enumerate() {
        let Some(p) = piece else { continue };
        let mut count = (p.b - p.a) as usize;
        let base = if p.with_base {
            count -= 1;
            read += 1;
            raw[read - 1]
        } else {
            0
        };
        for _ in 0..count {
            raw[write] = raw[read] - base + acc;
            read += 1;
            write += 1;
        }
        let (ca, cb) = child(r);
        acc += cb - ca;
    }
    if let Some(first) = raw.first_mut() {
        *first = 0;
    }
    raw.truncate(write);
    if raw.is_empty() {
        raw.push(0);
    }
    let len = raw.len();
    // Non-negative (≤ total ≤ i64::MAX) and non-decreasing, as checked above.
    Ok(OffsetBuffer::new(ScalarBuffer::<i64>::new(Buffer::from_vec(raw), 0, len)))
}

/// Collection sizes (cardinality fields) from an index buffer.
fn sizes(plan: &Plan, n: usize, raw: ColumnValues) -> Result<Vec<u64>> {
    let ColumnValues::Index(raw) = raw else {
        return Err(node_error(plan.nodes[n].field, "index column decoded as another type".into()));
    };
    let mut out = Vec::with_capacity(plan.nodes[n].len() as usize);
    for_each_piece(plan, n, &raw, |_, base, ends| {
        let mut prev = base;
        for &e in ends {
            out.push(e - prev);
            prev = e;
        }
        Ok(())
    })?;
    Ok(out)
}

/// `std::optional` / `std::unique_ptr` (collections of at most one item) as
/// a nullable array of the item type.
fn optional(f: &FieldNode, offsets: &OffsetBuffer<i64>, values: ArrayRef) -> Result<ArrayRef> {
    let len = offsets.len() - 1;
    for (i, w) in offsets.windows(2).enumerate() {
        if w[1] - w[0] > 1 {
            return Err(node_error(
                f,
                format!("optional value at entry {i} has {} elements (at most 1 allowed)", w[1] - w[0]),
            ));
        }
    }
    if values.len() == len {
        return Ok(values); // every entry has its value
    }
    if let Some(union) = values.as_any().downcast_ref::<UnionArray>() {
        return optional_union(f, offsets, union);
    }
    if let Some(spread) = spread_numbers(offsets, values.as_ref()) {
        return Ok(spread);
    }
    let indices: UInt64Array = offsets.windows(2).map(|w| (w[1] > w[0]).then_some(w[0] as u64)).collect();
    arrow_select::take::take(values.as_ref(), &indices, None).map_err(|e| arrow_err(f, e))
}

/// The numbers of an optional of a fixed-width type, each moved to its entry
/// (an entry without a value gets a null slot), in one pass: no index array
/// and no `take`. None for other types and for values with nulls of their own.
fn spread_numbers(offsets: &OffsetBuffer<i64>, values: &dyn Array) -> Option<ArrayRef> {
    fn spread<T: ArrowPrimitiveType>(offsets: &OffsetBuffer<i64>, values: &PrimitiveArray<T>) -> ArrayRef {
        let src = values.values();
        let at = |w: &[i64]| (w[1] > w[0]).then(|| src.get(w[0] as usize).copied()).flatten();
        let spread: Vec<T::Native> = offsets.windows(2).map(|w| at(w).unwrap_or_default()).collect();
        let valid = BooleanBuffer::collect_bool(spread.len(), |i| offsets[i + 1] > offsets[i]);
        let arr = PrimitiveArray::<T>::new(ScalarBuffer::from(spread), Some(NullBuffer::new(valid)));
        Arc::new(arr.with_data_type(values.data_type().clone()))
    }
    if values.null_count() > 0 {
        return None;
    }
    downcast_primitive_array!(
        values => Some(spread(offsets, values)),
        _ => None
    )
}

/// An optional variant: a union has no validity of its own, so an entry
/// without a value points at a null slot appended to the first alternative,
/// as a valueless variant does (both read as a missing value).
fn optional_union(f: &FieldNode, offsets: &OffsetBuffer<i64>, values: &UnionArray) -> Result<ArrayRef> {
    let (fields, type_ids, value_offsets, mut children) = values.clone().into_parts();
    let value_offsets = value_offsets.ok_or_else(|| node_error(f, "variant values are not a dense union".into()))?;
    let first = fields.iter().next().map(|(id, _)| id).unwrap_or_default();
    let base = children.first().map_or(0, |c| c.len());
    let len = offsets.len() - 1;
    let (mut ids, mut at) = (Vec::with_capacity(len), Vec::with_capacity(len));
    let mut missing = 0usize;
    for w in offsets.windows(2) {
        if w[1] > w[0] {
            let k = w[0] as usize;
            ids.push(type_ids[k]);
            at.push(value_offsets[k]);
        } else {
            ids.push(first);
            at.push(i32::try_from(base + missing).map_err(|_| node_error(f, "too many variant values".into()))?);
            missing += 1;
        }
    }
    if let Some(c) = children.first_mut() {
        let nulls = arrow_array::new_null_array(c.data_type(), missing);
        *c = arrow_select::concat::concat(&[c.as_ref(), nulls.as_ref()]).map_err(|e| arrow_err(f, e))?;
    }
    let arr = UnionArray::try_new(fields, ids.into(), Some(at.into()), children).map_err(|e| arrow_err(f, e))?;
    Ok(Arc::new(arr))
}

/// The Arrow field of a child field whose values are `values`. A union has
/// no validity of its own: valueless variants (switch tag 0, spec "Variant")
/// are null slots of its first alternative, logical nulls that a list or
/// struct with a non-nullable child field refuses; such a child is nullable.
fn child_field(field: &FieldNode, values: &ArrayRef) -> Field {
    let valueless = matches!(values.data_type(), DataType::Union(..)) && values.logical_null_count() > 0;
    let arrow = field.arrow_field().with_data_type(values.data_type().clone());
    if valueless {
        arrow.with_nullable(true)
    } else {
        arrow
    }
}

/// `std::variant` as a dense union; valueless entries point at null slots
/// appended to the first alternative.
fn variant(plan: &Plan, sinks: &Sinks, n: usize) -> Result<ArrayRef> {
    let node = &plan.nodes[n];
    let f = node.field;
    let (index, tag) = match sinks.take(node.slots[0])? {
        ColumnValues::Switch { index, tag } => (index, tag),
        _ => return Err(node_error(f, "variant column is not a Switch column".into())),
    };
    let alternatives = node.children.len();
    let mut children = Vec::with_capacity(alternatives);
    for &c in &node.children {
        children.push(build(plan, sinks, c)?);
    }
    let mut type_ids = Vec::with_capacity(index.len());
    let mut offsets = Vec::with_capacity(index.len());
    let base0 = children.first().map_or(0, |c| c.len());
    let mut invalid = 0usize;
    // Items of each alternative before the current span.
    let mut before = vec![0u64; alternatives];
    let mut pos = 0usize;
    let slot = &plan.slots[node.slots[0]];
    for (r, piece) in slot.pieces.iter().enumerate() {
        let cluster = plan.spans[r].cluster;
        let ranges: Vec<(u64, u64)> = node.children.iter().map(|&c| plan.nodes[c].ranges[r]).collect();
        if let Some(p) = piece {
            let count = (p.b - p.a) as usize;
            let (ix, tg) = match (index.get(pos..pos + count), tag.get(pos..pos + count)) {
                (Some(i), Some(t)) => (i, t),
                _ => return Err(node_error(f, "switch buffer too short".into())),
            };
            // Checks the tags (and, read whole, that indices stay in range).
            variant_ranges(f, cluster, p.a, ix, tg, alternatives)?;
            for (k, (&i, &t)) in ix.iter().zip(tg).enumerate() {
                if t == 0 {
                    type_ids.push(0i8);
                    offsets.push(
                        i32::try_from(base0 + invalid).map_err(|_| node_error(f, "too many variant values".into()))?,
                    );
                    invalid += 1;
                    continue;
                }
                let alt = t as usize - 1;
                let (lo, hi) = ranges[alt];
                if i < lo || i >= hi {
                    return Err(structure_error(
                        f,
                        cluster,
                        format!(
                            "variant at element {} points at item {i} of alternative {alt}, which holds {lo}..{hi}",
                            p.a + k as u64
                        ),
                    ));
                }
                let at = before[alt] + (i - lo);
                type_ids.push(alt as i8);
                offsets.push(i32::try_from(at).map_err(|_| node_error(f, "too many variant values".into()))?);
            }
            pos += count;
        }
        for (b, (lo, hi)) in before.iter_mut().zip(ranges) {
            *b += hi - lo;
        }
    }
    if invalid > 0 {
        let nulls = arrow_array::new_null_array(children[0].data_type(), invalid);
        children[0] =
            arrow_select::concat::concat(&[children[0].as_ref(), nulls.as_ref()]).map_err(|e| arrow_err(f, e))?;
    }
    let fields = UnionFields::try_new(
        0..alternatives as i8,
        node.children.iter().zip(&children).map(|(&c, arr)| {
            plan.nodes[c].field.arrow_field().with_nullable(true).with_data_type(arr.data_type().clone())
        }),
    )
    .map_err(|e| arrow_err(f, e))?;
    let arr =
        UnionArray::try_new(fields, type_ids.into(), Some(offsets.into()), children).map_err(|e| arrow_err(f, e))?;
    Ok(Arc::new(arr))
}
