//! Arrow arrays from the filled buffers of a [`Plan`], recursing through the
//! field tree (spec "Mapping of C++ Types to Fields and Columns").
//!
//! Buffers become Arrow buffers as they are (no copy): numbers, bytes and
//! offsets (the index buffer is turned into offsets in place). Copies remain
//! where Arrow's layout differs from the decoded one: booleans are packed
//! into bitmaps, optional values are spread over their entries (numbers in
//! one pass, other types with `take`), and valueless variants get null slots
//! appended to their first alternative.
//!
//! Every buffer built here has a size that comes from the file (entry and
//! element counts), so each is allocated fallibly ([`rntuple_format::alloc`]):
//! a buffer the machine cannot hold is [`Error::OutOfMemory`] naming the
//! field, not an abort. The Arrow kernels still called (`take` for optionals
//! of non-numeric types, `concat` of the null slots of valueless variants)
//! allocate inside arrow; their outputs are no larger than the values
//! already held.
//!
//! A streamer field's byte column is decoded here, with the file's streamer
//! infos (parsed once per read, when a streamer field is met), into the
//! array its class's split field would give ([`crate::streamer`]), at any
//! depth; one that cannot be decoded stays bytes and is noted
//! ([`UndecodedStreamer`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, UnionFields};
use rntuple_format::alloc;
use rntuple_format::column::ColumnValues;
use rntuple_format::model::ColumnType;
use rntuple_format::{Error, Location, Result};

use super::element_ranges::{structure_error, variant_ranges, Plan};
use super::UndecodedStreamer;
use crate::schema::{FieldKind, FieldNode};
use crate::streamer::StreamerInfos;
use crate::ArrowShape;

/// The filled buffers, one per slot, each taken once; the streamer infos
/// (parsed at the first streamer field) and the streamer fields left as
/// bytes.
#[derive(Debug)]
pub(crate) struct Sinks {
    buffers: Vec<Mutex<Option<ColumnValues>>>,
    infos: OnceLock<std::result::Result<StreamerInfos, String>>,
    undecoded: Mutex<Vec<UndecodedStreamer>>,
    /// Bytes of the arrays of decoded streamer objects so far (charged to
    /// the read's `max_memory` budget).
    decoded: AtomicU64,
}

impl Sinks {
    pub(crate) fn new(values: impl IntoIterator<Item = ColumnValues>) -> Self {
        Sinks {
            buffers: values.into_iter().map(|v| Mutex::new(Some(v))).collect(),
            infos: OnceLock::new(),
            undecoded: Mutex::default(),
            decoded: AtomicU64::new(0),
        }
    }

    fn take(&self, slot: usize) -> Result<ColumnValues> {
        self.buffers
            .get(slot)
            .and_then(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take())
            .ok_or_else(|| Error::invalid(format!("buffer {slot} of the read plan used twice")))
    }

    /// The streamer fields left as bytes so far, by path.
    pub(crate) fn undecoded(&self) -> Vec<UndecodedStreamer> {
        let mut out = self.undecoded.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// The array of streamer field `n` decoded from its byte column, or
    /// `None` (noted with the reason) when it cannot be. The arrays
    /// decoded count against the read's `max_memory` budget, on top of the
    /// values read: a read whose objects decode to more fails with
    /// [`Error::OverBudget`] (the objects' size is known only once they are
    /// decoded, so this is checked as they are, 4,096 objects at a time).
    fn streamer(&self, plan: &Plan, n: usize, offsets: &[i64], bytes: &[u8]) -> Result<Option<ArrayRef>> {
        let f = plan.nodes[n].field;
        let infos = self.infos.get_or_init(|| crate::streamer::infos_of(&plan.src.desc).map_err(|e| e.to_string()));
        let infos = match infos {
            Ok(infos) => infos,
            Err(e) => return Ok(self.note(plan, n, format!("the streamer info cannot be read: {e}"))),
        };
        let charge = |bytes: u64| -> Result<()> {
            let Some(budget) = plan.src.max_memory else { return Ok(()) };
            let decoded = self.decoded.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes);
            let values = plan.src.spent.load(Ordering::Relaxed);
            let total = values.saturating_add(decoded);
            if total <= budget {
                return Ok(());
            }
            Err(super::decode::over_budget(
                total,
                budget,
                format!(
                    "{values} bytes of values, {decoded} of streamer objects decoded so far, at field '{}' of class {}",
                    node_path(plan, n),
                    f.type_name
                ),
            ))
        };
        match crate::streamer::decode_entries_charged(infos, &f.type_name, offsets, bytes, charge)? {
            Ok(arr) => Ok(Some(arr)),
            Err(reason) => Ok(self.note(plan, n, reason)),
        }
    }

    /// Notes that streamer field `n` stays bytes, and why.
    fn note(&self, plan: &Plan, n: usize, reason: String) -> Option<ArrayRef> {
        let note =
            UndecodedStreamer { path: node_path(plan, n), type_name: plan.nodes[n].field.type_name.clone(), reason };
        self.undecoded.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(note);
        None
    }
}

/// The dotted path of node `n` from its top-level field.
fn node_path(plan: &Plan, n: usize) -> String {
    fn find(plan: &Plan, at: usize, n: usize, path: &mut Vec<usize>) -> bool {
        path.push(at);
        if at == n || plan.nodes[at].children.iter().any(|&c| find(plan, c, n, path)) {
            return true;
        }
        path.pop();
        false
    }
    let mut path = Vec::new();
    for &r in &plan.roots {
        if find(plan, r, n, &mut path) {
            break;
        }
    }
    let names: Vec<&str> = path.iter().map(|&i| plan.nodes[i].field.name.as_str()).collect();
    if names.is_empty() {
        plan.nodes[n].field.name.clone()
    } else {
        names.join(".")
    }
}

fn arrow_err(node: &FieldNode, e: arrow_schema::ArrowError) -> Error {
    Error::out_of_spec(format!("cannot assemble array: {e}"), Location::new(format!("field '{}'", node.name), None))
}

fn node_error(node: &FieldNode, message: String) -> Error {
    Error::out_of_spec(message, Location::new(format!("field '{}' (id {})", node.name, node.id), None))
}

/// Collects `iter` (at most `n` items) into a vector allocated fallibly:
/// [`Error::OutOfMemory`] naming `what` of field `node` when the memory is
/// not to be had.
fn try_collect<T>(node: &FieldNode, what: &str, n: usize, iter: impl Iterator<Item = T>) -> Result<Vec<T>> {
    let mut out = alloc::try_with_capacity(n, || oom_what(node, what, n, std::mem::size_of::<T>()))?;
    out.extend(iter.take(n));
    Ok(out)
}

fn oom_what(node: &FieldNode, what: &str, n: usize, size: usize) -> String {
    format!("the Arrow {what} of field \"{}\" ({n} elements of {size} bytes)", node.name)
}

/// A bitmap of `len` bits, bit `i` set when `bit(i)`, allocated fallibly.
fn try_bitmap(node: &FieldNode, what: &str, len: usize, bit: impl Fn(usize) -> bool) -> Result<BooleanBuffer> {
    let mut bytes: Vec<u8> =
        alloc::try_zeroed(len.div_ceil(8), || format!("the {what} of field \"{}\" ({len} bits)", node.name))?;
    for i in 0..len {
        if bit(i) {
            bytes[i / 8] |= 1 << (i % 8);
        }
    }
    Ok(BooleanBuffer::new(Buffer::from_vec(bytes), 0, len))
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
            let values = sinks.take(node.slots[0])?;
            if plan.columns_all(f, &[ColumnType::Real16, ColumnType::SplitReal16]) {
                type F16 = <Float16Type as ArrowPrimitiveType>::Native;
                match &values {
                    ColumnValues::F32(v) => return half_floats(f, v.len(), v.iter().map(|&x| F16::from_f32(x))),
                    ColumnValues::F64(v) => return half_floats(f, v.len(), v.iter().map(|&x| F16::from_f64(x))),
                    _ => {}
                }
            }
            values_array(f, values, plan.shape)
        }
        FieldKind::Bitset { size } => {
            let bits = values_array(f, sinks.take(node.slots[0])?, plan.shape)?;
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
            if f.kind == FieldKind::Streamer && !plan.streamer_bytes {
                if let Some(arr) = sinks.streamer(plan, n, &offsets, &bytes)? {
                    return Ok(arr);
                }
            }
            if let Some(narrow) = index32(plan, f, &offsets)? {
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
                let it = sizes.iter().map(|&s| i32::try_from(s).unwrap_or(i32::MAX));
                return Ok(Arc::new(Int32Array::new(try_collect(f, "sizes", sizes.len(), it)?.into(), None)));
            }
            if plan.columns_all(f, &[ColumnType::Index64, ColumnType::SplitIndex64]) {
                // u64 → i64 in place: no second buffer.
                let sizes: Vec<i64> = sizes.into_iter().map(|s| i64::try_from(s).unwrap_or(i64::MAX)).collect();
                return Ok(Arc::new(Int64Array::from(sizes)));
            }
            Ok(if *wide {
                Arc::new(UInt64Array::from(sizes))
            } else {
                let it = sizes.iter().map(|&s| s as u32);
                Arc::new(UInt32Array::new(try_collect(f, "sizes", sizes.len(), it)?.into(), None))
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
            if let Some(narrow) = index32(plan, f, &offsets)? {
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
fn index32(plan: &Plan, f: &FieldNode, offsets: &OffsetBuffer<i64>) -> Result<Option<OffsetBuffer<i32>>> {
    if !plan.columns_all(f, &INDEX32) || offsets.last().is_some_and(|&o| i32::try_from(o).is_err()) {
        return Ok(None);
    }
    // Offsets never decrease: the last fits, so all do.
    let narrow = try_collect(f, "32-bit offsets", offsets.len(), offsets.iter().map(|&o| o as i32))?;
    Ok(Some(OffsetBuffer::new(ScalarBuffer::from(narrow))))
}

/// Real16 values (decoded as `f32`, or `f64` for a `double` field) as
/// Arrow half floats.
fn half_floats(
    f: &FieldNode,
    n: usize,
    halves: impl Iterator<Item = <Float16Type as ArrowPrimitiveType>::Native>,
) -> Result<ArrayRef> {
    Ok(Arc::new(Float16Array::new(try_collect(f, "half-precision values", n, halves)?.into(), None)))
}

/// A buffer of fixed-width values as the Arrow array of its type (booleans
/// one byte each under [`ArrowShape::ColumnTypes`]).
fn values_array(f: &FieldNode, values: ColumnValues, shape: ArrowShape) -> Result<ArrayRef> {
    fn prim<T: ArrowPrimitiveType>(v: Vec<T::Native>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v), None))
    }
    Ok(match values {
        ColumnValues::Bool(v) if shape == ArrowShape::ColumnTypes => prim::<UInt8Type>(alloc::bools_as_bytes(v)),
        ColumnValues::Bool(v) => Arc::new(BooleanArray::new(try_bitmap(f, "bitmap", v.len(), |i| v[i])?, None)),
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
        ColumnValues::Switch { .. } => {
            return Err(node_error(f, "a Switch column cannot hold a fundamental type".into()))
        }
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
    let len = plan.nodes[n].len() as usize;
    let mut out = alloc::try_with_capacity(len, || oom_what(plan.nodes[n].field, "sizes", len, 8))?;
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
    if let Some(spread) = spread_numbers(f, offsets, values.as_ref())? {
        return Ok(spread);
    }
    let firsts =
        try_collect(f, "take indices", len, offsets.windows(2).map(|w| if w[1] > w[0] { w[0] as u64 } else { 0 }))?;
    let valid = try_bitmap(f, "take indices' validity", len, |i| offsets[i + 1] > offsets[i])?;
    let indices = UInt64Array::new(firsts.into(), Some(NullBuffer::new(valid)));
    arrow_select::take::take(values.as_ref(), &indices, None).map_err(|e| arrow_err(f, e))
}

/// The numbers of an optional of a fixed-width type, each moved to its entry
/// (an entry without a value gets a null slot), in one pass: no index array
/// and no `take`. None for other types and for values with nulls of their own.
fn spread_numbers(f: &FieldNode, offsets: &OffsetBuffer<i64>, values: &dyn Array) -> Result<Option<ArrayRef>> {
    fn spread<T: ArrowPrimitiveType>(
        f: &FieldNode,
        offsets: &OffsetBuffer<i64>,
        values: &PrimitiveArray<T>,
    ) -> Result<Option<ArrayRef>> {
        let src = values.values();
        let at = |w: &[i64]| (w[1] > w[0]).then(|| src.get(w[0] as usize).copied()).flatten();
        let len = offsets.len() - 1;
        let spread = try_collect(f, "values", len, offsets.windows(2).map(|w| at(w).unwrap_or_default()))?;
        let valid = try_bitmap(f, "validity", len, |i| offsets[i + 1] > offsets[i])?;
        let arr = PrimitiveArray::<T>::new(ScalarBuffer::from(spread), Some(NullBuffer::new(valid)));
        Ok(Some(Arc::new(arr.with_data_type(values.data_type().clone()))))
    }
    if values.null_count() > 0 {
        return Ok(None);
    }
    downcast_primitive_array!(
        values => spread(f, offsets, values),
        _ => Ok(None)
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
    let mut ids = alloc::try_with_capacity(len, || oom_what(f, "union type ids", len, 1))?;
    let mut at = alloc::try_with_capacity(len, || oom_what(f, "union offsets", len, 4))?;
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
    let mut type_ids = alloc::try_with_capacity(index.len(), || oom_what(f, "union type ids", index.len(), 1))?;
    let mut offsets = alloc::try_with_capacity(index.len(), || oom_what(f, "union offsets", index.len(), 4))?;
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
