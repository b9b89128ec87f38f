//! From Arrow arrays to column elements, a whole entry range at a time
//! (spec "Mapping of C++ Types to Fields and Columns"): fundamental values
//! are copied slice by slice, offsets of strings and collections become
//! cluster-relative end offsets, optionals become collections of zero or one
//! element, unions become switch elements.
//!
//! Also here: the uncompressed bytes ROOT counts for an entry range (the sum
//! of `RFieldBase::Append` results: the packed size of each column element,
//! except 8 bytes per optional and 16 per variant entry, their in-memory
//! sizes), which decides where clusters end.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, UInt64Array, UnionArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;
use rntuple_format::{Error, Result};

use super::columns::compatible;
use super::pages::{Columns, Element};
use super::plan::{ColumnPlan, Order, PlanField, Shape};

/// What ROOT counts per variant entry: `sizeof(RColumnSwitch)`, the
/// in-memory switch element (`RVariantField::AppendImpl`).
const SWITCH_APPEND_BYTES: u64 = 16;
/// What ROOT counts per optional entry besides its value:
/// `sizeof(RColumnIndex)`, whatever the index column (`RNullableField`).
const OPTIONAL_APPEND_BYTES: u64 = 8;

fn invalid(message: String) -> Error {
    Error::InvalidArgument { message }
}

fn mismatch(f: &PlanField, dt: &DataType) -> Error {
    invalid(format!(
        "field '{}' is written as '{}' ({:?}) but the batch holds Arrow type {dt}",
        f.path, f.type_name, f.shape
    ))
}

/// Checks that Arrow type `dt` fits the plan of `f` (before anything is appended).
pub(crate) fn check_type(f: &PlanField, dt: &DataType) -> Result<()> {
    let ok = match (f.shape, dt) {
        (Shape::Leaf(p), dt) => compatible(p, dt),
        (Shape::String, DataType::Utf8 | DataType::LargeUtf8) => true,
        (Shape::Vector, DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _)) => {
            return check_type(&f.children[0], item.data_type())
        }
        (Shape::Optional | Shape::Wrapper, dt) => return check_type(&f.children[0], dt),
        (Shape::Array(n), DataType::FixedSizeList(item, m)) if i64::from(*m) == n as i64 => {
            return check_type(&f.children[0], item.data_type())
        }
        (Shape::Bitset(n), DataType::FixedSizeList(item, m)) => {
            i64::from(*m) == n as i64 && matches!(item.data_type(), DataType::Boolean)
        }
        (Shape::Bitset(n), DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64) => n <= 64,
        (Shape::Record, DataType::Struct(fields)) if fields.len() == f.children.len() => {
            for (c, af) in f.children.iter().zip(fields.iter()) {
                check_type(c, af.data_type())?;
            }
            return Ok(());
        }
        (Shape::Variant, DataType::Union(fields, _)) if fields.len() == f.children.len() => {
            for ((c, &tid), (utid, af)) in f.children.iter().zip(&f.union_type_ids).zip(fields.iter()) {
                if tid != utid {
                    return Err(invalid(format!(
                        "field '{}': union type id {utid} where the schema had {tid}",
                        f.path
                    )));
                }
                check_type(c, af.data_type())?;
            }
            return Ok(());
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(mismatch(f, dt))
    }
}

/// The entries of `arr` that are null, for an optional of `arr`'s values. A
/// union has no validity of its own: its null entries (a null value in the
/// chosen child) are the empty optionals, so that ROOT reads an empty
/// optional, not a present variant in the invalid state.
fn value_nulls(arr: &dyn Array) -> Option<NullBuffer> {
    match arr.data_type() {
        DataType::Union(_, _) => arr.logical_nulls(),
        _ => arr.nulls().cloned(),
    }
}

/// Offsets of a string or list array, whatever their width.
enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    fn get(&self, i: usize) -> u64 {
        match self {
            Offsets::I32(o) => o[i] as u64,
            Offsets::I64(o) => o[i] as u64,
        }
    }
}

fn list_parts<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<(Offsets<'a>, ArrayRef)> {
    if let Some(l) = arr.as_list_opt::<i32>() {
        Ok((Offsets::I32(l.value_offsets()), l.values().clone()))
    } else if let Some(l) = arr.as_list_opt::<i64>() {
        Ok((Offsets::I64(l.value_offsets()), l.values().clone()))
    } else if let Some(m) = arr.as_map_opt() {
        Ok((Offsets::I32(m.value_offsets()), Arc::new(m.entries().clone())))
    } else {
        Err(mismatch(f, arr.data_type()))
    }
}

fn string_parts<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<(Offsets<'a>, &'a [u8])> {
    if let Some(s) = arr.as_string_opt::<i32>() {
        Ok((Offsets::I32(s.value_offsets()), s.value_data()))
    } else if let Some(s) = arr.as_string_opt::<i64>() {
        Ok((Offsets::I64(s.value_offsets()), s.value_data()))
    } else {
        Err(mismatch(f, arr.data_type()))
    }
}

fn union_of<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<&'a UnionArray> {
    arr.as_any().downcast_ref::<UnionArray>().ok_or_else(|| mismatch(f, arr.data_type()))
}

/// Entries of `[a, b)` that are null, if any.
fn has_nulls(arr: &dyn Array, a: usize, b: usize) -> bool {
    arr.nulls().is_some_and(|n| n.slice(a, b - a).null_count() > 0)
}

fn no_nulls(f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
    if has_nulls(arr, a, b) {
        return Err(invalid(format!(
            "field '{}' of type '{}' holds null values but is not a std::optional; declare it \
             \"std::optional<{}>\" with a type override",
            f.path,
            f.type_name,
            if f.type_name.is_empty() { "T" } else { f.type_name.as_str() }
        )));
    }
    Ok(())
}

/// Per alternative of a variant: the Arrow union type id to alternative index.
fn alternative_of(f: &PlanField, tid: i8) -> Result<usize> {
    f.union_type_ids
        .iter()
        .position(|&t| t == tid)
        .ok_or_else(|| invalid(format!("field '{}': unknown union type id {tid}", f.path)))
}

/// Appends Arrow data to the columns of a plan.
#[derive(Debug)]
pub(crate) struct Filler {
    pub columns: Columns,
    /// Per field id: elements appended in the current cluster.
    pub counts: Vec<u64>,
}

impl Filler {
    pub fn reset_counts(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
    }

    /// Appends elements `[a, b)` of `arr` to field `f` and its subfields.
    pub fn append(&mut self, f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
        if a < b {
            self.append_inner(f, arr, a, b)?;
        }
        self.counts[f.id as usize] += (b - a) as u64;
        Ok(())
    }

    fn append_inner(&mut self, f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
        match f.shape {
            Shape::Leaf(_) => {
                no_nulls(f, arr, a, b)?;
                self.append_leaf(f, arr, a, b)
            }
            Shape::String => {
                no_nulls(f, arr, a, b)?;
                let (offs, data) = string_parts(f, arr)?;
                let base = self.columns.n_cluster(f.columns[1]);
                let start = offs.get(a);
                push_blocks(&mut self.columns, f.columns[0], b - a, |j| base + offs.get(a + 1 + j) - start)?;
                self.columns.push(f.columns[1], &data[start as usize..offs.get(b) as usize])
            }
            Shape::Vector => {
                no_nulls(f, arr, a, b)?;
                let (offs, values) = list_parts(f, arr)?;
                let child = &f.children[0];
                let base = self.counts[child.id as usize];
                if let Some((items, ends)) = ordered_items(f, &offs, &values, a, b)? {
                    let index: Vec<u64> = ends.iter().map(|&e| base + e).collect();
                    self.columns.push(f.columns[0], &index)?;
                    return self.append(child, items.as_ref(), 0, items.len());
                }
                let start = offs.get(a);
                push_blocks(&mut self.columns, f.columns[0], b - a, |j| base + offs.get(a + 1 + j) - start)?;
                self.append(child, values.as_ref(), start as usize, offs.get(b) as usize)
            }
            Shape::Optional => {
                let child = &f.children[0];
                let base = self.counts[child.id as usize];
                match value_nulls(arr).filter(|n| n.slice(a, b - a).null_count() > 0) {
                    None => {
                        push_blocks(&mut self.columns, f.columns[0], b - a, |j| base + j as u64 + 1)?;
                        self.append(child, arr, a, b)
                    }
                    Some(nulls) => {
                        let valid = nulls.inner().slice(a, b - a);
                        let mut k = base;
                        // Called in order: the running count of values.
                        push_blocks(&mut self.columns, f.columns[0], b - a, |j| {
                            k += u64::from(valid.value(j));
                            k
                        })?;
                        let present =
                            arrow_select::filter::filter(&arr.slice(a, b - a), &BooleanArray::new(valid, None))
                                .map_err(|e| invalid(format!("field '{}': {e}", f.path)))?;
                        self.append(child, present.as_ref(), 0, present.len())
                    }
                }
            }
            Shape::Array(n) => {
                no_nulls(f, arr, a, b)?;
                let l = arr.as_fixed_size_list_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
                let start = l.value_offset(a) as usize;
                let n = n as usize;
                self.append(&f.children[0], l.values().as_ref(), start, start + (b - a) * n)
            }
            Shape::Record => {
                no_nulls(f, arr, a, b)?;
                let s = arr.as_struct_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
                for (c, col) in f.children.iter().zip(s.columns()) {
                    self.append(c, col.as_ref(), a, b)?;
                }
                Ok(())
            }
            Shape::Bitset(n) => {
                no_nulls(f, arr, a, b)?;
                let bits = bitset_bits(f, n, arr, a, b)?;
                self.columns.push(f.columns[0], &bits)
            }
            Shape::Variant => self.append_variant(f, arr, a, b),
            Shape::Wrapper => self.append(&f.children[0], arr, a, b),
        }
    }

    fn append_leaf(&mut self, f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
        let col = f.columns[0];
        macro_rules! prim {
            ($t:ty) => {{
                let p = arr.as_primitive_opt::<$t>().ok_or_else(|| mismatch(f, arr.data_type()))?;
                self.columns.push(col, &p.values()[a..b])
            }};
        }
        match arr.data_type() {
            DataType::Boolean => {
                let bits = arr.as_boolean().values();
                push_blocks(&mut self.columns, col, b - a, |j| bits.value(a + j))
            }
            DataType::Int8 if matches!(f.shape, Shape::Leaf(crate::schema::Primitive::Char)) => {
                let v = &arr.as_primitive::<Int8Type>().values()[a..b];
                push_blocks(&mut self.columns, col, b - a, |j| v[j] as u8)
            }
            DataType::Int8 => prim!(Int8Type),
            DataType::UInt8 => prim!(UInt8Type),
            DataType::Int16 => prim!(Int16Type),
            DataType::UInt16 => prim!(UInt16Type),
            DataType::Int32 => prim!(Int32Type),
            DataType::UInt32 => prim!(UInt32Type),
            DataType::Int64 => prim!(Int64Type),
            DataType::UInt64 => prim!(UInt64Type),
            DataType::Float32 => prim!(Float32Type),
            DataType::Float64 => prim!(Float64Type),
            other => Err(mismatch(f, other)),
        }
    }

    /// A union: one switch element per entry (tag 0 for a null value, the
    /// invalid state), then the chosen values of each alternative in order.
    fn append_variant(&mut self, f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
        let u = union_of(f, arr)?;
        let n_alt = f.children.len();
        let mut picks: Vec<Vec<usize>> = vec![Vec::new(); n_alt];
        let mut index = Vec::with_capacity(b - a);
        let mut tag = Vec::with_capacity(b - a);
        for i in a..b {
            let tid = u.type_id(i);
            let k = alternative_of(f, tid)?;
            let pos = u.value_offset(i);
            if u.child(tid).is_null(pos) {
                index.push(0);
                tag.push(0);
            } else {
                index.push(self.counts[f.children[k].id as usize] + picks[k].len() as u64);
                tag.push(k as u32 + 1);
                picks[k].push(pos);
            }
        }
        self.columns.push_switch(f.columns[0], &index, &tag)?;
        for (k, pick) in picks.into_iter().enumerate() {
            if pick.is_empty() {
                continue;
            }
            let child = u.child(f.union_type_ids[k]);
            let first = pick[0];
            if pick.iter().enumerate().all(|(j, &p)| p == first + j) {
                self.append(&f.children[k], child.as_ref(), first, first + pick.len())?;
            } else {
                let idx = UInt64Array::from_iter_values(pick.iter().map(|&p| p as u64));
                let taken = arrow_select::take::take(child.as_ref(), &idx, None)
                    .map_err(|e| invalid(format!("field '{}': {e}", f.path)))?;
                self.append(&f.children[k], taken.as_ref(), 0, taken.len())?;
            }
        }
        Ok(())
    }
}

/// Bytes of entries: what ROOT counts towards the unzipped cluster size
/// (`packed`) and what their column elements take in the page buffers
/// (`mem`, ROOT's in-memory element sizes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Bytes {
    pub packed: u64,
    pub mem: u64,
}

impl std::ops::Add for Bytes {
    type Output = Bytes;
    fn add(self, o: Bytes) -> Bytes {
        Bytes { packed: self.packed + o.packed, mem: self.mem + o.mem }
    }
}

impl std::iter::Sum for Bytes {
    fn sum<I: Iterator<Item = Bytes>>(iter: I) -> Bytes {
        iter.fold(Bytes::default(), |a, b| a + b)
    }
}

impl Bytes {
    fn both(n: u64) -> Bytes {
        Bytes { packed: n, mem: n }
    }
    fn of(n: u64, c: &ColumnPlan) -> Bytes {
        Bytes { packed: n * c.packed_bytes(), mem: n * c.mem_size }
    }
}

/// Elements converted per block: conversions (offsets, bits) never take
/// more memory than this, whatever the batch size.
const BLOCK: usize = 4096;

/// Appends `n` elements `at(0), at(1), …` (called in order) to `col`.
fn push_blocks<T: Element + Default>(
    columns: &mut Columns,
    col: usize,
    n: usize,
    mut at: impl FnMut(usize) -> T,
) -> Result<()> {
    let mut buf = [T::default(); BLOCK];
    let mut i = 0;
    while i < n {
        let k = (n - i).min(BLOCK);
        for (j, slot) in buf[..k].iter_mut().enumerate() {
            *slot = at(i + j);
        }
        columns.push(col, &buf[..k])?;
        i += k;
    }
    Ok(())
}

/// The uncompressed bytes ROOT counts for entries `[a, b)` of field `f`, and
/// the bytes their elements take in the page buffers.
pub(crate) fn unzipped_bytes(f: &PlanField, cols: &[ColumnPlan], arr: &dyn Array, a: usize, b: usize) -> Bytes {
    if a >= b {
        return Bytes::default();
    }
    let n = (b - a) as u64;
    let own = |i: usize| Bytes::of(n, &cols[f.columns[i]]);
    match f.shape {
        Shape::Leaf(_) => own(0),
        Shape::String => match string_parts(f, arr) {
            Ok((offs, _)) => own(0) + Bytes::of(offs.get(b) - offs.get(a), &cols[f.columns[1]]),
            Err(_) => Bytes::default(),
        },
        Shape::Vector => match list_parts(f, arr) {
            Ok((offs, values)) => {
                own(0)
                    + unzipped_bytes(&f.children[0], cols, values.as_ref(), offs.get(a) as usize, offs.get(b) as usize)
            }
            Err(_) => Bytes::default(),
        },
        Shape::Optional => {
            let child = &f.children[0];
            Bytes { packed: n * OPTIONAL_APPEND_BYTES, mem: n * cols[f.columns[0]].mem_size }
                + match value_nulls(arr).filter(|nb| nb.slice(a, b - a).null_count() > 0) {
                    None => unzipped_bytes(child, cols, arr, a, b),
                    Some(nulls) => nulls
                        .inner()
                        .slice(a, b - a)
                        .set_slices()
                        .map(|(s, e)| unzipped_bytes(child, cols, arr, a + s, a + e))
                        .sum(),
                }
        }
        Shape::Array(size) => match arr.as_fixed_size_list_opt() {
            Some(l) => {
                let start = l.value_offset(a) as usize;
                unzipped_bytes(&f.children[0], cols, l.values().as_ref(), start, start + (b - a) * size as usize)
            }
            None => Bytes::default(),
        },
        Shape::Record => match arr.as_struct_opt() {
            Some(s) => {
                f.children.iter().zip(s.columns()).map(|(c, col)| unzipped_bytes(c, cols, col.as_ref(), a, b)).sum()
            }
            None => Bytes::default(),
        },
        Shape::Wrapper => unzipped_bytes(&f.children[0], cols, arr, a, b),
        // ROOT's `RBitsetField::AppendImpl` counts one byte per bit.
        Shape::Bitset(size) => Bytes::both(n * size),
        Shape::Variant => {
            let Ok(u) = union_of(f, arr) else { return Bytes::default() };
            let mut total = Bytes { packed: n * SWITCH_APPEND_BYTES, mem: n * cols[f.columns[0]].mem_size };
            for i in a..b {
                let tid = u.type_id(i);
                let pos = u.value_offset(i);
                let child = u.child(tid);
                if let (Ok(k), false) = (alternative_of(f, tid), child.is_null(pos)) {
                    total = total + unzipped_bytes(&f.children[k], cols, child.as_ref(), pos, pos + 1);
                }
            }
            total
        }
    }
}

/// Checks entries `[a, b)` of `arr` against field `f` without appending
/// anything, so that a batch the writer cannot take is refused as a whole:
/// nulls outside optionals and variants, strings that are not UTF-8, union
/// type ids of no alternative, values outside a `Real32Quant` range.
pub(crate) fn check_values(f: &PlanField, cols: &[ColumnPlan], arr: &dyn Array, a: usize, b: usize) -> Result<()> {
    if a >= b {
        return Ok(());
    }
    match f.shape {
        Shape::Leaf(_) => {
            no_nulls(f, arr, a, b)?;
            check_quant_range(f, cols, arr, a, b)
        }
        Shape::String => {
            no_nulls(f, arr, a, b)?;
            let (offs, data) = string_parts(f, arr)?;
            let (start, end) = (offs.get(a) as usize, offs.get(b) as usize);
            match std::str::from_utf8(&data[start..end]) {
                Ok(_) => Ok(()),
                Err(e) => {
                    let at = (start + e.valid_up_to()) as u64;
                    // The entry holding the first bad byte: offsets are sorted.
                    let (mut lo, mut hi) = (a, b);
                    while hi - lo > 1 {
                        let mid = lo + (hi - lo) / 2;
                        if offs.get(mid) <= at {
                            lo = mid;
                        } else {
                            hi = mid;
                        }
                    }
                    Err(invalid(format!(
                        "field '{}': string {lo} of the field's values in the batch is not valid UTF-8 ({e}); \
                         std::string values must be UTF-8 text",
                        f.path
                    )))
                }
            }
        }
        Shape::Vector => {
            no_nulls(f, arr, a, b)?;
            let (offs, values) = list_parts(f, arr)?;
            if f.order != Order::AsGiven {
                check_orderable(f, &sort_keys(f, &values), offs.get(a) as usize, offs.get(b) as usize)?;
            }
            check_values(&f.children[0], cols, values.as_ref(), offs.get(a) as usize, offs.get(b) as usize)
        }
        Shape::Optional => {
            let child = &f.children[0];
            match value_nulls(arr).filter(|n| n.slice(a, b - a).null_count() > 0) {
                None => check_values(child, cols, arr, a, b),
                Some(nulls) => {
                    for (s, e) in nulls.inner().slice(a, b - a).set_slices() {
                        check_values(child, cols, arr, a + s, a + e)?;
                    }
                    Ok(())
                }
            }
        }
        Shape::Array(n) => {
            no_nulls(f, arr, a, b)?;
            let l = arr.as_fixed_size_list_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
            let start = l.value_offset(a) as usize;
            check_values(&f.children[0], cols, l.values().as_ref(), start, start + (b - a) * n as usize)
        }
        Shape::Record => {
            no_nulls(f, arr, a, b)?;
            let s = arr.as_struct_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
            for (c, col) in f.children.iter().zip(s.columns()) {
                check_values(c, cols, col.as_ref(), a, b)?;
            }
            Ok(())
        }
        Shape::Bitset(n) => {
            no_nulls(f, arr, a, b)?;
            bitset_bits(f, n, arr, a, b).map(|_| ())
        }
        Shape::Wrapper => check_values(&f.children[0], cols, arr, a, b),
        Shape::Variant => {
            let u = union_of(f, arr)?;
            // Runs of consecutive positions per alternative, checked at once.
            let mut runs: Vec<Option<(usize, usize)>> = vec![None; f.children.len()];
            for i in a..b {
                let tid = u.type_id(i);
                let k = alternative_of(f, tid)?;
                let pos = u.value_offset(i);
                let child = u.child(tid);
                if child.is_null(pos) {
                    continue;
                }
                match runs[k] {
                    Some((s, e)) if e == pos => runs[k] = Some((s, e + 1)),
                    Some((s, e)) => {
                        check_values(&f.children[k], cols, child.as_ref(), s, e)?;
                        runs[k] = Some((pos, pos + 1));
                    }
                    None => runs[k] = Some((pos, pos + 1)),
                }
            }
            for (k, run) in runs.into_iter().enumerate() {
                if let Some((s, e)) = run {
                    check_values(&f.children[k], cols, u.child(f.union_type_ids[k]).as_ref(), s, e)?;
                }
            }
            Ok(())
        }
    }
}

/// Values of a `Real32Quant` leaf must lie in its range (NaN does not).
fn check_quant_range(f: &PlanField, cols: &[ColumnPlan], arr: &dyn Array, a: usize, b: usize) -> Result<()> {
    let spec = &cols[f.columns[0]].spec;
    let Some((min, max)) = spec.value_range else {
        return Ok(());
    };
    let outside = |x: f64| !(min <= x && x <= max);
    let bad = if let Some(p) = arr.as_primitive_opt::<Float64Type>() {
        p.values()[a..b].iter().position(|&x| outside(x))
    } else if let Some(p) = arr.as_primitive_opt::<Float32Type>() {
        p.values()[a..b].iter().position(|&x| outside(f64::from(x)))
    } else {
        None
    };
    match bad {
        None => Ok(()),
        Some(i) => Err(invalid(format!(
            "field '{}': value {} of the field's values in the batch is outside the quantization range [{min}, {max}] \
             of its Real32Quant column",
            f.path,
            a + i
        ))),
    }
}

/// The bits of entries `[a, b)` of a `std::bitset<n>` field, bit 0 of each
/// entry first (spec "std::bitset<N>": least significant bits first), from a
/// fixed-size list of `n` booleans (item `k` is bit `k`, as `std::bitset::test(k)`)
/// or from unsigned integers (bit `k` of the value; set bits at or above `n`
/// are an error, as they do not fit).
fn bitset_bits(f: &PlanField, n: u64, arr: &dyn Array, a: usize, b: usize) -> Result<Vec<bool>> {
    let n = n as usize;
    if let Some(l) = arr.as_fixed_size_list_opt() {
        let start = l.value_offset(a) as usize;
        let values = l.values();
        let end = start + (b - a) * n;
        if has_nulls(values.as_ref(), start, end) {
            return Err(invalid(format!("field '{}': a std::bitset holds no missing bits (null booleans)", f.path)));
        }
        let bits = values.as_boolean_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
        return Ok(bits.values().slice(start, end - start).iter().collect());
    }
    let words: Vec<u64> = if let Some(p) = arr.as_primitive_opt::<UInt64Type>() {
        p.values()[a..b].to_vec()
    } else if let Some(p) = arr.as_primitive_opt::<UInt32Type>() {
        p.values()[a..b].iter().map(|&v| u64::from(v)).collect()
    } else if let Some(p) = arr.as_primitive_opt::<UInt16Type>() {
        p.values()[a..b].iter().map(|&v| u64::from(v)).collect()
    } else if let Some(p) = arr.as_primitive_opt::<UInt8Type>() {
        p.values()[a..b].iter().map(|&v| u64::from(v)).collect()
    } else {
        return Err(mismatch(f, arr.data_type()));
    };
    if n < 64 {
        if let Some(i) = words.iter().position(|&w| w >> n != 0) {
            return Err(invalid(format!(
                "field '{}': value {} (entry {} of the field's values in the batch) has bits set above the {n} bits \
                 of its std::bitset<{n}>",
                f.path,
                words[i],
                a + i
            )));
        }
    }
    Ok(words.iter().flat_map(|&w| (0..n).map(move |k| (w >> k) & 1 == 1)).collect())
}

/// What the items of an ordered collection are sorted by: a map's pair key
/// (`_0`), else the items themselves.
fn sort_keys(f: &PlanField, values: &ArrayRef) -> ArrayRef {
    let by_key = f.type_name.starts_with("std::map<") || f.type_name.starts_with("std::multimap<");
    match values.as_struct_opt() {
        Some(s) if by_key && s.num_columns() == 2 => s.column(0).clone(),
        _ => values.clone(),
    }
}

/// Floating-point keys must not be NaN: NaN has no place in `std::less`'s order.
fn check_orderable(f: &PlanField, keys: &ArrayRef, s: usize, e: usize) -> Result<()> {
    let nan = if let Some(p) = keys.as_primitive_opt::<Float64Type>() {
        p.values()[s..e].iter().position(|x| x.is_nan())
    } else if let Some(p) = keys.as_primitive_opt::<Float32Type>() {
        p.values()[s..e].iter().position(|x| x.is_nan())
    } else {
        None
    };
    match nan {
        None => Ok(()),
        Some(_) => Err(invalid(format!(
            "field '{}' of type '{}' holds a NaN key; the container is ordered by its keys and NaN has no order",
            f.path, f.type_name
        ))),
    }
}

/// For an ordered associative container ([`Order`]): the items of entries
/// `[a, b)` sorted (and deduplicated for unique containers) and the end
/// offset of each entry among them; `None` when they already are in order.
fn ordered_items(
    f: &PlanField,
    offs: &Offsets<'_>,
    values: &ArrayRef,
    a: usize,
    b: usize,
) -> Result<Option<(ArrayRef, Vec<u64>)>> {
    if f.order == Order::AsGiven || a >= b {
        return Ok(None);
    }
    let unique = f.order == Order::SortedUnique;
    let keys = sort_keys(f, values);
    let (s0, e0) = (offs.get(a) as usize, offs.get(b) as usize);
    check_orderable(f, &keys, s0, e0)?;
    let options = arrow_schema::SortOptions { descending: false, nulls_first: true };
    let cmp = arrow_ord::ord::make_comparator(keys.as_ref(), keys.as_ref(), options)
        .map_err(|e| invalid(format!("field '{}': cannot order the keys of '{}': {e}", f.path, f.type_name)))?;
    let in_order = (a..b).all(|i| {
        let (s, e) = (offs.get(i) as usize, offs.get(i + 1) as usize);
        (s + 1..e).all(|k| match cmp(k - 1, k) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Equal => !unique,
            std::cmp::Ordering::Greater => false,
        })
    });
    if in_order {
        return Ok(None);
    }
    let mut take: Vec<u64> = Vec::with_capacity(e0 - s0);
    let mut ends = Vec::with_capacity(b - a);
    let mut idx: Vec<usize> = Vec::new();
    for i in a..b {
        idx.clear();
        idx.extend(offs.get(i) as usize..offs.get(i + 1) as usize);
        idx.sort_by(|&x, &y| cmp(x, y)); // stable: equal keys keep their input order
        if unique {
            // Keeps the first of equal keys, as std::set / std::map insert do.
            idx.dedup_by(|later, kept| cmp(*kept, *later) == std::cmp::Ordering::Equal);
        }
        take.extend(idx.iter().map(|&k| k as u64));
        ends.push(take.len() as u64);
    }
    let items = arrow_select::take::take(values.as_ref(), &UInt64Array::from(take), None)
        .map_err(|e| invalid(format!("field '{}': {e}", f.path)))?;
    Ok(Some((items, ends)))
}
