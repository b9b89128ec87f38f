//! From Arrow arrays to column elements, a whole entry range at a time
//! (spec "Mapping of C++ Types to Fields and Columns"): fundamental values
//! are copied slice by slice, offsets of strings and collections become
//! cluster-relative end offsets, optionals become collections of zero or one
//! element, unions become switch elements.
//!
//! What entries cost and the checks of their values are in `measure`; the
//! parts of Arrow arrays both read, in `access`.

use arrow_array::cast::AsArray;
use arrow_array::types::*;

use arrow_array::{Array, BooleanArray, UInt64Array};
use arrow_schema::DataType;
use rntuple_format::{Error, Result};

use super::access::*;
use super::model::{unwritable, PlanField};
use super::pages::{Columns, Element};
use crate::schema::{FieldKind, Primitive};
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
        match f.kind {
            FieldKind::Primitive(_) => {
                no_nulls(f, arr, a, b)?;
                self.append_leaf(f, arr, a, b)
            }
            FieldKind::String => {
                no_nulls(f, arr, a, b)?;
                let (offs, data) = string_parts(f, arr)?;
                let base = self.columns.n_cluster(f.columns[1]);
                let start = offs.get(a);
                push_blocks(&mut self.columns, f.columns[0], b - a, |j| base + offs.get(a + 1 + j) - start)?;
                self.columns.push(f.columns[1], &data[start as usize..offs.get(b) as usize])
            }
            FieldKind::Collection { nullable: false } => {
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
            FieldKind::Collection { nullable: true } => {
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
                                .map_err(|e| Error::invalid(format!("field '{}': {e}", f.path)))?;
                        self.append(child, present.as_ref(), 0, present.len())
                    }
                }
            }
            FieldKind::Array { size: n } => {
                no_nulls(f, arr, a, b)?;
                let l = arr.as_fixed_size_list_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
                let start = l.value_offset(a) as usize;
                let n = n as usize;
                self.append(&f.children[0], l.values().as_ref(), start, start + (b - a) * n)
            }
            FieldKind::Record => {
                no_nulls(f, arr, a, b)?;
                let s = arr.as_struct_opt().ok_or_else(|| mismatch(f, arr.data_type()))?;
                for (c, col) in f.children.iter().zip(s.columns()) {
                    self.append(c, col.as_ref(), a, b)?;
                }
                Ok(())
            }
            FieldKind::Bitset { size: n } => {
                no_nulls(f, arr, a, b)?;
                let bits = bitset_bits(f, n, arr, a, b)?;
                self.columns.push(f.columns[0], &bits)
            }
            FieldKind::Variant => self.append_variant(f, arr, a, b),
            FieldKind::Wrapper => self.append(&f.children[0], arr, a, b),
            FieldKind::Streamer if f.streamer.is_some() => {
                let e = super::streamer_field::entries(f, arr, a, b)?;
                let base = self.columns.n_cluster(f.columns[1]);
                push_blocks(&mut self.columns, f.columns[0], b - a, |j| base + e.end(j))?;
                self.columns.push(f.columns[1], e.bytes())
            }
            FieldKind::Cardinality { .. } | FieldKind::Streamer | FieldKind::Unsupported(_) => Err(unwritable(f)),
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
            DataType::Int8 if matches!(f.kind, FieldKind::Primitive(Primitive::Char)) => {
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
                    .map_err(|e| Error::invalid(format!("field '{}': {e}", f.path)))?;
                self.append(&f.children[k], taken.as_ref(), 0, taken.len())?;
            }
        }
        Ok(())
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
