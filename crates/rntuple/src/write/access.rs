//! The parts of Arrow arrays a planned field reads: its type checked
//! against the plan, offsets, string bytes, union members, nulls, bitset bits
//! and ordered keys. Shared by the filling (`shred`) and the measuring and
//! checking (`measure`) of entries.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, UInt64Array, UnionArray};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;
use rntuple_format::{Error, Result};

use super::model::{compatible, Order, PlanField};
use crate::schema::FieldKind;

pub(crate) fn mismatch(f: &PlanField, dt: &DataType) -> Error {
    Error::invalid(format!("field '{}' is written as '{}' but the batch holds Arrow type {dt}", f.path, f.type_name))
}

/// Checks that Arrow type `dt` fits the plan of `f` (before anything is appended).
pub(crate) fn check_type(f: &PlanField, dt: &DataType) -> Result<()> {
    let ok = match (&f.kind, dt) {
        (FieldKind::Primitive(p), dt) => compatible(*p, dt),
        (FieldKind::String, DataType::Utf8 | DataType::LargeUtf8) => true,
        (FieldKind::Streamer, dt) => f.streamer.as_ref().is_some_and(|e| e.accepts(dt)),
        (
            FieldKind::Collection { nullable: false },
            DataType::List(item) | DataType::LargeList(item) | DataType::Map(item, _),
        ) => return check_type(&f.children[0], item.data_type()),
        (FieldKind::Collection { nullable: true } | FieldKind::Wrapper, dt) => return check_type(&f.children[0], dt),
        (FieldKind::Array { size: n }, DataType::FixedSizeList(item, m)) if i64::from(*m) == *n as i64 => {
            return check_type(&f.children[0], item.data_type())
        }
        (FieldKind::Bitset { size: n }, DataType::FixedSizeList(item, m)) => {
            i64::from(*m) == *n as i64 && matches!(item.data_type(), DataType::Boolean)
        }
        (FieldKind::Bitset { size: n }, DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64) => {
            *n <= 64
        }
        (FieldKind::Record, DataType::Struct(fields)) if fields.len() == f.children.len() => {
            for (c, af) in f.children.iter().zip(fields.iter()) {
                check_type(c, af.data_type())?;
            }
            return Ok(());
        }
        (FieldKind::Variant, DataType::Union(fields, _)) if fields.len() == f.children.len() => {
            for ((c, &tid), (utid, af)) in f.children.iter().zip(&f.union_type_ids).zip(fields.iter()) {
                if tid != utid {
                    return Err(Error::invalid(format!(
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
pub(crate) fn value_nulls(arr: &dyn Array) -> Option<NullBuffer> {
    match arr.data_type() {
        DataType::Union(_, _) => arr.logical_nulls(),
        _ => arr.nulls().cloned(),
    }
}

/// Offsets of a string or list array, whatever their width.
pub(crate) enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    pub(crate) fn get(&self, i: usize) -> u64 {
        match self {
            Offsets::I32(o) => o[i] as u64,
            Offsets::I64(o) => o[i] as u64,
        }
    }
}

pub(crate) fn list_parts<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<(Offsets<'a>, ArrayRef)> {
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

pub(crate) fn string_parts<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<(Offsets<'a>, &'a [u8])> {
    if let Some(s) = arr.as_string_opt::<i32>() {
        Ok((Offsets::I32(s.value_offsets()), s.value_data()))
    } else if let Some(s) = arr.as_string_opt::<i64>() {
        Ok((Offsets::I64(s.value_offsets()), s.value_data()))
    } else {
        Err(mismatch(f, arr.data_type()))
    }
}

pub(crate) fn union_of<'a>(f: &PlanField, arr: &'a dyn Array) -> Result<&'a UnionArray> {
    arr.as_any().downcast_ref::<UnionArray>().ok_or_else(|| mismatch(f, arr.data_type()))
}

/// Entries of `[a, b)` that are null, if any.
pub(crate) fn has_nulls(arr: &dyn Array, a: usize, b: usize) -> bool {
    arr.nulls().is_some_and(|n| n.slice(a, b - a).null_count() > 0)
}

pub(crate) fn no_nulls(f: &PlanField, arr: &dyn Array, a: usize, b: usize) -> Result<()> {
    if has_nulls(arr, a, b) {
        return Err(Error::invalid(format!(
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
pub(crate) fn alternative_of(f: &PlanField, tid: i8) -> Result<usize> {
    f.union_type_ids
        .iter()
        .position(|&t| t == tid)
        .ok_or_else(|| Error::invalid(format!("field '{}': unknown union type id {tid}", f.path)))
}

/// The bits of entries `[a, b)` of a `std::bitset<n>` field, bit 0 of each
/// entry first (spec "std::bitset<N>": least significant bits first), from a
/// fixed-size list of `n` booleans (item `k` is bit `k`, as `std::bitset::test(k)`)
/// or from unsigned integers (bit `k` of the value; set bits at or above `n`
/// are an error, as they do not fit).
pub(crate) fn bitset_bits(f: &PlanField, n: u64, arr: &dyn Array, a: usize, b: usize) -> Result<Vec<bool>> {
    let n = n as usize;
    if let Some(l) = arr.as_fixed_size_list_opt() {
        let start = l.value_offset(a) as usize;
        let values = l.values();
        let end = start + (b - a) * n;
        if has_nulls(values.as_ref(), start, end) {
            return Err(Error::invalid(format!(
                "field '{}': a std::bitset holds no missing bits (null booleans)",
                f.path
            )));
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
            return Err(Error::invalid(format!(
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
pub(crate) fn sort_keys(f: &PlanField, values: &ArrayRef) -> ArrayRef {
    let by_key = f.type_name.starts_with("std::map<") || f.type_name.starts_with("std::multimap<");
    match values.as_struct_opt() {
        Some(s) if by_key && s.num_columns() == 2 => s.column(0).clone(),
        _ => values.clone(),
    }
}

/// Floating-point keys must not be NaN: NaN has no place in `std::less`'s order.
pub(crate) fn check_orderable(f: &PlanField, keys: &ArrayRef, s: usize, e: usize) -> Result<()> {
    let nan = if let Some(p) = keys.as_primitive_opt::<Float64Type>() {
        p.values()[s..e].iter().position(|x| x.is_nan())
    } else if let Some(p) = keys.as_primitive_opt::<Float32Type>() {
        p.values()[s..e].iter().position(|x| x.is_nan())
    } else {
        None
    };
    match nan {
        None => Ok(()),
        Some(_) => Err(Error::invalid(format!(
            "field '{}' of type '{}' holds a NaN key; the container is ordered by its keys and NaN has no order",
            f.path, f.type_name
        ))),
    }
}

/// For an ordered associative container ([`Order`]): the items of entries
/// `[a, b)` sorted (and deduplicated for unique containers) and the end
/// offset of each entry among them; `None` when they already are in order.
pub(crate) fn ordered_items(
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
        .map_err(|e| Error::invalid(format!("field '{}': cannot order the keys of '{}': {e}", f.path, f.type_name)))?;
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
        .map_err(|e| Error::invalid(format!("field '{}': {e}", f.path)))?;
    Ok(Some((items, ends)))
}
