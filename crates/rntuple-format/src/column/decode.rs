//! Decoding of uncompressed pages into [`ColumnValues`].

use half::f16;

use super::bits::{unpack_bits, unpack_bools};
use super::elements::*;
use super::{ColumnSpec, ColumnValues};
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
    let n = num_elements;
    use ColumnType as T;
    use ColumnValues as V;
    match (spec.column_type, out) {
        (T::Bit, V::Bool(v)) => unpack_bools(page, n, v),
        (T::Byte | T::Char | T::UInt8, V::U8(v)) => v.extend_from_slice(page),
        (T::Int8, V::I8(v)) => v.extend(page.iter().map(|&b| b as i8)),
        (T::Int16, V::I16(v)) => unpack_plain(page, v),
        (T::UInt16, V::U16(v)) => unpack_plain(page, v),
        (T::Int32, V::I32(v)) => unpack_plain(page, v),
        (T::UInt32, V::U32(v)) => unpack_plain(page, v),
        (T::Int64, V::I64(v)) => unpack_plain(page, v),
        (T::UInt64, V::U64(v)) => unpack_plain(page, v),
        (T::SplitInt16, V::I16(v)) => {
            let start = v.len();
            unsplit::<_, 2>(page, n, v);
            zigzag_decode16(&mut v[start..]);
        }
        (T::SplitInt32, V::I32(v)) => {
            let start = v.len();
            unsplit::<_, 4>(page, n, v);
            zigzag_decode32(&mut v[start..]);
        }
        (T::SplitInt64, V::I64(v)) => {
            let start = v.len();
            unsplit::<_, 8>(page, n, v);
            zigzag_decode64(&mut v[start..]);
        }
        (T::SplitUInt16, V::U16(v)) => unsplit::<_, 2>(page, n, v),
        (T::SplitUInt32, V::U32(v)) => unsplit::<_, 4>(page, n, v),
        (T::SplitUInt64, V::U64(v)) => unsplit::<_, 8>(page, n, v),
        (T::Real32, V::F32(v)) => unpack_plain(page, v),
        (T::SplitReal32, V::F32(v)) => unsplit::<_, 4>(page, n, v),
        (T::Real64, V::F64(v)) => unpack_plain(page, v),
        (T::SplitReal64, V::F64(v)) => unsplit::<_, 8>(page, n, v),
        (T::Real16, V::F32(v)) => v.extend(page.chunks_exact(2).map(half_le)),
        (T::SplitReal16, V::F32(v)) => {
            // Gather the half-float bits in the low 16 bits of each f32, then convert.
            let start = v.len();
            unsplit::<_, 2>(page, n, v);
            for x in &mut v[start..] {
                *x = f16::from_bits(x.to_bits() as u16).to_f32();
            }
        }
        (T::Real32Trunc, V::F32(v)) => {
            let shift = 32 - u32::from(spec.bits_on_storage);
            v.reserve(n);
            unpack_bits(page, n, u32::from(spec.bits_on_storage), |q| v.push(f32::from_bits(q << shift)));
        }
        (T::Real32Quant, V::F32(v)) => {
            let q = Dequantizer::new(spec);
            v.reserve(n);
            unpack_bits(page, n, u32::from(spec.bits_on_storage), |x| v.push(q.value(x) as f32));
        }
        (T::Real32Quant, V::F64(v)) => {
            let q = Dequantizer::new(spec);
            v.reserve(n);
            unpack_bits(page, n, u32::from(spec.bits_on_storage), |x| v.push(q.value(x)));
        }
        (T::Real16 | T::SplitReal16 | T::Real32 | T::SplitReal32 | T::Real32Trunc, V::F64(v)) => {
            let mut tmp = ColumnValues::F32(Vec::with_capacity(n));
            decode_page(spec, page, n, &mut tmp)?;
            if let ColumnValues::F32(f) = tmp {
                v.extend(f.into_iter().map(f64::from));
            }
        }
        (T::Index32, V::Index(v)) => v.extend(page.chunks_exact(4).map(|c| u64::from(u32::from_le_slice(c)))),
        (T::Index64, V::Index(v)) => unpack_plain(page, v),
        (T::SplitIndex32, V::Index(v)) => {
            let start = v.len();
            unsplit::<_, 4>(page, n, v);
            undelta32(&mut v[start..]);
        }
        (T::SplitIndex64, V::Index(v)) => {
            let start = v.len();
            unsplit::<_, 8>(page, n, v);
            undelta64(&mut v[start..]);
        }
        (T::Switch, V::Switch { index, tag }) => {
            index.reserve(n);
            tag.reserve(n);
            for c in page.chunks_exact(12) {
                index.push(u64::from_le_slice(&c[..8]));
                tag.push(u32::from_le_slice(&c[8..]));
            }
        }
        (ct, out) => {
            return Err(Error::InvalidArgument {
                message: format!("cannot decode a {ct} column into {} values", out.kind()),
            })
        }
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
