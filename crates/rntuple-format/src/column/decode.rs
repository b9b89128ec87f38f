//! Decoding of uncompressed pages into [`ColumnValues`] or straight into a
//! window of a preallocated buffer ([`ColumnSlice`]).

use half::f16;

use super::bits::{unpack_bits, unpack_bools};
use super::elements::*;
use super::{ColumnSlice, ColumnSpec, ColumnValues};
use crate::error::{Error, Location, Result};
use crate::model::ColumnType;

/// Decodes an uncompressed page of `num_elements` elements and appends them
/// to `out`.
///
/// `page.len()` must equal `spec.packed_size(num_elements)`. `out` must be
/// the variant [`ColumnValues::for_column`] gives for the column type; in
/// addition, every 16/32-bit real column (Real16, SplitReal16, (Split)Real32,
/// Real32Trunc, Real32Quant) can be decoded into `F64`: values are widened,
/// and Real32Quant values are then computed in double precision as ROOT does
/// for `double` fields (into `F32` they are rounded to float, as for `float`
/// fields).
pub fn decode_page(spec: &ColumnSpec, page: &[u8], num_elements: usize, out: &mut ColumnValues) -> Result<()> {
    check_page_size(spec, page, num_elements)?;
    if !can_decode_into(spec.column_type, out) {
        return Err(mismatch(spec.column_type, out.kind()));
    }
    let start = out.len();
    out.try_reserve(num_elements, || format!("{num_elements} elements of a {:?} page", spec.column_type))?;
    out.push_zeros(num_elements);
    let (_, tail) = out.as_slice_mut().split_at(start);
    decode_page_into(spec, page, tail)
}

/// Whether [`decode_page_into`] accepts pages of `column_type` into the
/// variant of `out` (the natural variant, or `F64` for 16/32-bit reals).
pub fn can_decode_into(column_type: ColumnType, out: &ColumnValues) -> bool {
    use ColumnType as T;
    use ColumnValues as V;
    matches!(
        (column_type, out),
        (T::Bit, V::Bool(_))
            | (T::Byte | T::Char | T::UInt8, V::U8(_))
            | (T::Int8, V::I8(_))
            | (T::Int16 | T::SplitInt16, V::I16(_))
            | (T::UInt16 | T::SplitUInt16, V::U16(_))
            | (T::Int32 | T::SplitInt32, V::I32(_))
            | (T::UInt32 | T::SplitUInt32, V::U32(_))
            | (T::Int64 | T::SplitInt64, V::I64(_))
            | (T::UInt64 | T::SplitUInt64, V::U64(_))
            | (T::Real16 | T::SplitReal16 | T::Real32 | T::SplitReal32 | T::Real32Trunc | T::Real32Quant, V::F32(_))
            | (
                T::Real16
                    | T::SplitReal16
                    | T::Real32
                    | T::SplitReal32
                    | T::Real32Trunc
                    | T::Real32Quant
                    | T::Real64
                    | T::SplitReal64,
                V::F64(_)
            )
            | (T::Index32 | T::Index64 | T::SplitIndex32 | T::SplitIndex64, V::Index(_))
            | (T::Switch, V::Switch { .. })
    )
}

fn check_page_size(spec: &ColumnSpec, page: &[u8], num_elements: usize) -> Result<()> {
    let expected = spec.packed_size(num_elements as u64);
    if page.len() as u64 != expected {
        return Err(Error::out_of_spec(
            format!(
                "page of {num_elements} {} elements ({} bits each) must have {expected} bytes, has {}",
                spec.column_type,
                spec.bits_on_storage,
                page.len()
            ),
            Location::new("uncompressed page", None),
        ));
    }
    Ok(())
}

fn mismatch(ct: ColumnType, kind: &str) -> Error {
    Error::invalid(format!("cannot decode a {ct} column into {kind} values"))
}

/// Decodes an uncompressed page of `out.len()` elements into `out`, which
/// it overwrites completely. Accepts the same variants as [`decode_page`]
/// (see [`can_decode_into`]); `page.len()` must equal
/// `spec.packed_size(out.len())`.
pub fn decode_page_into(spec: &ColumnSpec, page: &[u8], out: ColumnSlice<'_>) -> Result<()> {
    decode_page_range_into(spec, page, out.len(), 0, out)
}

/// Decodes elements `[from, from + out.len())` of an uncompressed page of
/// `count` elements into `out` (a page cut by a read's entry range decodes
/// straight into its window, without decoding the rest). Accepts the same
/// variants as [`decode_page`]; `page.len()` must equal
/// `spec.packed_size(count)`. Delta-encoded index pages (spec "Split
/// Index") start from the sum of the deltas before `from`.
pub fn decode_page_range_into(
    spec: &ColumnSpec,
    page: &[u8],
    count: usize,
    from: usize,
    out: ColumnSlice<'_>,
) -> Result<()> {
    let n = out.len();
    check_page_size(spec, page, count)?;
    if from.checked_add(n).is_none_or(|end| end > count) {
        return Err(Error::invalid(format!("elements {from}..{} of a page of {count}", from.saturating_add(n))));
    }
    // The bytes of elements `[from, from + n)` of a plain page of `size`-byte elements.
    let plain = |size: usize| &page[from * size..(from + n) * size];
    use ColumnSlice as V;
    use ColumnType as T;
    match (spec.column_type, out) {
        (T::Bit, V::Bool(v)) => unpack_bools(page, from, v),
        (T::Byte | T::Char | T::UInt8, V::U8(v)) => v.copy_from_slice(plain(1)),
        (T::Int8, V::I8(v)) => {
            for (d, &b) in v.iter_mut().zip(plain(1)) {
                *d = b as i8;
            }
        }
        (T::Int16, V::I16(v)) => unpack_plain(plain(2), v),
        (T::UInt16, V::U16(v)) => unpack_plain(plain(2), v),
        (T::Int32, V::I32(v)) => unpack_plain(plain(4), v),
        (T::UInt32, V::U32(v)) => unpack_plain(plain(4), v),
        (T::Int64, V::I64(v)) => unpack_plain(plain(8), v),
        (T::UInt64, V::U64(v)) => unpack_plain(plain(8), v),
        (T::SplitInt16, V::I16(v)) => {
            unsplit_range::<_, 2>(page, count, from, v);
            zigzag_decode16(v);
        }
        (T::SplitInt32, V::I32(v)) => {
            unsplit_range::<_, 4>(page, count, from, v);
            zigzag_decode32(v);
        }
        (T::SplitInt64, V::I64(v)) => {
            unsplit_range::<_, 8>(page, count, from, v);
            zigzag_decode64(v);
        }
        (T::SplitUInt16, V::U16(v)) => unsplit_range::<_, 2>(page, count, from, v),
        (T::SplitUInt32, V::U32(v)) => unsplit_range::<_, 4>(page, count, from, v),
        (T::SplitUInt64, V::U64(v)) => unsplit_range::<_, 8>(page, count, from, v),
        (T::Real32, V::F32(v)) => unpack_plain(plain(4), v),
        (T::SplitReal32, V::F32(v)) => unsplit_range::<_, 4>(page, count, from, v),
        (T::Real64, V::F64(v)) => unpack_plain(plain(8), v),
        (T::SplitReal64, V::F64(v)) => unsplit_range::<_, 8>(page, count, from, v),
        (T::Real16, V::F32(v)) => {
            for (d, c) in v.iter_mut().zip(plain(2).chunks_exact(2)) {
                *d = half_le(c);
            }
        }
        (T::SplitReal16, V::F32(v)) => {
            // Gather the half-float bits in the low 16 bits of each f32, then convert.
            unsplit_range::<_, 2>(page, count, from, v);
            for x in v.iter_mut() {
                *x = f16::from_bits(x.to_bits() as u16).to_f32();
            }
        }
        (T::Real32Trunc, V::F32(v)) => {
            let shift = 32 - u32::from(spec.bits_on_storage);
            let mut it = v.iter_mut();
            unpack_bits(page, from, n, u32::from(spec.bits_on_storage), |q| {
                if let Some(d) = it.next() {
                    *d = f32::from_bits(q << shift);
                }
            });
        }
        (T::Real32Quant, V::F32(v)) => {
            let q = Dequantizer::new(spec);
            let mut it = v.iter_mut();
            unpack_bits(page, from, n, u32::from(spec.bits_on_storage), |x| {
                if let Some(d) = it.next() {
                    *d = q.value(x) as f32;
                }
            });
        }
        (T::Real32Quant, V::F64(v)) => {
            let q = Dequantizer::new(spec);
            let mut it = v.iter_mut();
            unpack_bits(page, from, n, u32::from(spec.bits_on_storage), |x| {
                if let Some(d) = it.next() {
                    *d = q.value(x);
                }
            });
        }
        (T::Real32, V::F64(v)) => {
            for (d, c) in v.iter_mut().zip(plain(4).chunks_exact(4)) {
                *d = f64::from(f32::from_le_slice(c));
            }
        }
        (T::Real16, V::F64(v)) => {
            for (d, c) in v.iter_mut().zip(plain(2).chunks_exact(2)) {
                *d = f64::from(half_le(c));
            }
        }
        (ct @ (T::SplitReal16 | T::SplitReal32 | T::Real32Trunc), V::F64(v)) => {
            // Rare (a double field stored in 16/32-bit columns): decode as float, then widen.
            let mut tmp = crate::alloc::try_zeroed(n, || format!("{n} floats of a {ct:?} page"))?;
            decode_page_range_into(spec, page, count, from, V::F32(&mut tmp))?;
            debug_assert!(matches!(ct, T::SplitReal16 | T::SplitReal32 | T::Real32Trunc));
            for (d, &x) in v.iter_mut().zip(&tmp) {
                *d = f64::from(x);
            }
        }
        (T::Index32, V::Index(v)) => {
            for (d, c) in v.iter_mut().zip(plain(4).chunks_exact(4)) {
                *d = u64::from(u32::from_le_slice(c));
            }
        }
        (T::Index64, V::Index(v)) => unpack_plain(plain(8), v),
        (T::SplitIndex32, V::Index(v)) => {
            unsplit_range::<_, 4>(page, count, from, v);
            // The running total wraps at 2^32: its low 32 bits are the 64-bit sum's.
            undelta32(v, split_prefix_sum::<4>(page, count, from) as u32);
        }
        (T::SplitIndex64, V::Index(v)) => {
            unsplit_range::<_, 8>(page, count, from, v);
            undelta64(v, split_prefix_sum::<8>(page, count, from));
        }
        (T::Switch, V::Switch { index, tag }) => {
            if tag.len() != n {
                return Err(Error::invalid(format!("switch window of {n} indices but {} tags", tag.len())));
            }
            for ((i, t), c) in index.iter_mut().zip(tag.iter_mut()).zip(plain(12).chunks_exact(12)) {
                *i = u64::from_le_slice(&c[..8]);
                *t = u32::from_le_slice(&c[8..]);
            }
        }
        (ct, out) => return Err(mismatch(ct, out.kind())),
    }
    Ok(())
}

#[inline]
fn half_le(c: &[u8]) -> f32 {
    f16::from_bits(u16::from_le_slice(c)).to_f32()
}

/// ROOT's `Quantize::UnquantizeReals`: `min + q * ((max - min) / (2^n - 1))`
/// in double precision, clamped to `max`.
pub(crate) struct Dequantizer {
    min: f64,
    max: f64,
    scale: f64,
}

impl Dequantizer {
    pub(crate) fn new(spec: &ColumnSpec) -> Self {
        let (min, max) = spec.value_range.unwrap_or((0.0, 0.0));
        let q_max = ((1u64 << spec.bits_on_storage) - 1) as f64;
        Self { min, max, scale: (max - min) / q_max }
    }
    #[inline]
    pub(crate) fn value(&self, q: u32) -> f64 {
        let e = f64::from(q) * self.scale + self.min;
        if self.max < e {
            self.max
        } else {
            e
        }
    }
}
