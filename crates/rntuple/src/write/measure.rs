//! What entries cost and whether they can be written, before anything is
//! appended: the uncompressed bytes ROOT counts for an entry range (the sum
//! of `RFieldBase::Append` results: the packed size of each column element,
//! except 8 bytes per optional and 16 per variant entry, their in-memory
//! sizes), which decides where clusters end; and the checks of values the
//! columns cannot take.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use rntuple_format::Error;
use rntuple_format::Result;

use super::access::{
    alternative_of, bitset_bits, check_orderable, list_parts, mismatch, no_nulls, sort_keys, string_parts, union_of,
    value_nulls,
};
use super::model::{unwritable, ColumnPlan, Order, PlanField};
use crate::schema::FieldKind;

/// What ROOT counts per variant entry: `sizeof(RColumnSwitch)`, the
/// in-memory switch element (`RVariantField::AppendImpl`).
const SWITCH_APPEND_BYTES: u64 = 16;
/// What ROOT counts per optional entry besides its value:
/// `sizeof(RColumnIndex)`, whatever the index column (`RNullableField`).
const OPTIONAL_APPEND_BYTES: u64 = 8;

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

/// The uncompressed bytes ROOT counts for entries `[a, b)` of field `f`, and
/// the bytes their elements take in the page buffers.
pub(crate) fn unzipped_bytes(f: &PlanField, cols: &[ColumnPlan], arr: &dyn Array, a: usize, b: usize) -> Bytes {
    if a >= b {
        return Bytes::default();
    }
    let n = (b - a) as u64;
    let own = |i: usize| Bytes::of(n, &cols[f.columns[i]]);
    match f.kind {
        FieldKind::Primitive(_) => own(0),
        FieldKind::String => match string_parts(f, arr) {
            Ok((offs, _)) => own(0) + Bytes::of(offs.get(b) - offs.get(a), &cols[f.columns[1]]),
            Err(_) => Bytes::default(),
        },
        FieldKind::Collection { nullable: false } => match list_parts(f, arr) {
            Ok((offs, values)) => {
                own(0)
                    + unzipped_bytes(&f.children[0], cols, values.as_ref(), offs.get(a) as usize, offs.get(b) as usize)
            }
            Err(_) => Bytes::default(),
        },
        FieldKind::Collection { nullable: true } => {
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
        FieldKind::Array { size } => match arr.as_fixed_size_list_opt() {
            Some(l) => {
                let start = l.value_offset(a) as usize;
                unzipped_bytes(&f.children[0], cols, l.values().as_ref(), start, start + (b - a) * size as usize)
            }
            None => Bytes::default(),
        },
        FieldKind::Record => match arr.as_struct_opt() {
            Some(s) => {
                f.children.iter().zip(s.columns()).map(|(c, col)| unzipped_bytes(c, cols, col.as_ref(), a, b)).sum()
            }
            None => Bytes::default(),
        },
        FieldKind::Wrapper => unzipped_bytes(&f.children[0], cols, arr, a, b),
        // ROOT's `RBitsetField::AppendImpl` counts one byte per bit.
        FieldKind::Bitset { size } => Bytes::both(n * size),
        FieldKind::Variant => {
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
        // ROOT's `RStreamerField::AppendImpl` counts the streamed bytes and the index.
        FieldKind::Streamer => match super::streamer_field::entries(f, arr, a, b) {
            Ok(e) => own(0) + Bytes::of(e.bytes().len() as u64, &cols[f.columns[1]]),
            Err(_) => Bytes::default(),
        },
        FieldKind::Cardinality { .. } | FieldKind::Unsupported(_) => Bytes::default(),
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
    match f.kind {
        FieldKind::Primitive(_) => {
            no_nulls(f, arr, a, b)?;
            check_quant_range(f, cols, arr, a, b)
        }
        FieldKind::String => {
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
                    Err(Error::invalid(format!(
                        "field '{}': string {lo} of the field's values in the batch is not valid UTF-8 ({e}); \
                         std::string values must be UTF-8 text",
                        f.path
                    )))
                }
            }
        }
        FieldKind::Collection { nullable: false } => {
            no_nulls(f, arr, a, b)?;
            let (offs, values) = list_parts(f, arr)?;
            if f.order != Order::AsGiven {
                check_orderable(f, &sort_keys(f, &values), offs.get(a) as usize, offs.get(b) as usize)?;
            }
            check_values(&f.children[0], cols, values.as_ref(), offs.get(a) as usize, offs.get(b) as usize)
        }
        FieldKind::Collection { nullable: true } => {
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
        FieldKind::Array { size: n } => {
            no_nulls(f, arr, a, b)?;
            let l = arr.as_fixed_size_list_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
            let start = l.value_offset(a) as usize;
            check_values(&f.children[0], cols, l.values().as_ref(), start, start + (b - a) * n as usize)
        }
        FieldKind::Record => {
            no_nulls(f, arr, a, b)?;
            let s = arr.as_struct_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
            for (c, col) in f.children.iter().zip(s.columns()) {
                check_values(c, cols, col.as_ref(), a, b)?;
            }
            Ok(())
        }
        FieldKind::Bitset { size: n } => {
            no_nulls(f, arr, a, b)?;
            bitset_bits(f, n, arr, a, b).map(|_| ())
        }
        FieldKind::Wrapper => check_values(&f.children[0], cols, arr, a, b),
        FieldKind::Variant => {
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
        FieldKind::Streamer => super::streamer_field::entries(f, arr, a, b).map(|_| ()),
        FieldKind::Cardinality { .. } | FieldKind::Unsupported(_) => Err(unwritable(f)),
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
        Some(i) => Err(Error::invalid(format!(
            "field '{}': value {} of the field's values in the batch is outside the quantization range [{min}, {max}] \
             of its Real32Quant column",
            f.path,
            a + i
        ))),
    }
}
